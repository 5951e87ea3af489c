//! Value parsers for the flags the binaries share, and the argument parsing that maps a value one
//! of them refuses to the documented exit code of invalid input (3), as when the value was checked
//! after parsing: `<tool>: error: --flag: expected …, found "…"`.

use crate::artifacts::ArtifactPrefix;
use crate::exit::Exit;
use std::process::ExitCode;

/// A flag value that a parser here refused: the message names the flag, what was expected and
/// what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub(crate) String);

/// `--artifact-prefix` (and `TIER1_ARTIFACT_PREFIX`): a valid [`ArtifactPrefix`].
pub fn artifact_prefix(s: &str) -> Result<ArtifactPrefix, InvalidValue> {
    ArtifactPrefix::parse(s).map_err(InvalidValue)
}

/// Parse the command line of `tool`: malformed command lines exit as clap has them (2); help and
/// version are printed on stdout and exit 0, or with the write's own code (12 for a full disk,
/// else 10) when stdout cannot take them; a value refused by a parser of this module is said as
/// `<tool>: error: <message>` and returned as the exit code of invalid input.
pub fn parse<A: clap::Parser>(tool: &str) -> Result<A, ExitCode> {
    match A::try_parse() {
        Ok(args) => Ok(args),
        Err(e) => match refused(&e) {
            Some(bad) => {
                super::print_error(tool, bad);
                Err(Exit::Invalid.into())
            }
            None if !e.use_stderr() => Err(print_to_stdout(tool, &e)),
            None => e.exit(),
        },
    }
}

/// Print clap's help or version text on stdout, flushed: its exit code is that of the write.
fn print_to_stdout(tool: &str, e: &clap::Error) -> ExitCode {
    use std::io::Write;
    let written = e.print().and_then(|()| std::io::stdout().flush());
    match written {
        Ok(()) => Exit::Ok.into(),
        Err(err) => {
            super::print_error(tool, &format!("could not write to stdout: {err}"));
            crate::exit::of_io(&err).into()
        }
    }
}

/// The [`InvalidValue`] behind a clap error, if a parser of this module refused the value.
fn refused(e: &clap::Error) -> Option<&InvalidValue> {
    std::error::Error::source(e)?.downcast_ref::<InvalidValue>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Probe {
        #[arg(long, value_parser = artifact_prefix, default_value = crate::artifacts::DEFAULT_PREFIX)]
        artifact_prefix: ArtifactPrefix,
    }

    #[test]
    fn a_valid_prefix_and_the_default_parse() {
        let p = Probe::try_parse_from(["probe", "--artifact-prefix", "acme-gpu"]).unwrap();
        assert_eq!(p.artifact_prefix.as_str(), "acme-gpu");
        let d = Probe::try_parse_from(["probe"]).unwrap();
        assert_eq!(d.artifact_prefix.as_str(), "tier1");
    }

    #[test]
    fn a_bad_prefix_is_refused_naming_the_flag_and_the_expected_form() {
        for (bad, why) in [
            ("../x", "[A-Za-z0-9_.-]"),
            ("", "1-64 characters"),
            ("-x", "starting with a letter or digit"),
            ("tier1-candidate", "\"candidate\""),
            ("a-evidence", "\"evidence\""),
        ] {
            let e = artifact_prefix(bad).unwrap_err().to_string();
            assert!(e.starts_with("--artifact-prefix: expected "), "{e}");
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(e.contains(&format!("found {bad:?}")), "{e}");
        }
    }

    #[test]
    fn clap_keeps_the_refusal_for_the_exit_code_of_invalid_input() {
        let e = Probe::try_parse_from(["probe", "--artifact-prefix", "../x"]).unwrap_err();
        let bad = refused(&e).expect("the parser's own error");
        assert!(bad.0.starts_with("--artifact-prefix: expected"), "{bad}");
        let usage = Probe::try_parse_from(["probe", "--no-such-flag"]).unwrap_err();
        assert!(refused(&usage).is_none(), "a usage error stays clap's");
    }
}
