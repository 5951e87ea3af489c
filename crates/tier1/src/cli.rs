//! What every binary does at its edge: logging to stderr, the TLS provider, JSON to stdout, and the
//! mapping of a failure to its documented exit code. Every log field and error line passes through
//! `crate::text::for_humans` (URLs redacted, control characters made visible). Nothing here
//! panics on an unwritable stdout or stderr: a log or error line that cannot be written is
//! dropped, and JSON that cannot be written to stdout turns a successful exit into the I/O
//! failure's own code ([`exit`]: 12 for a full disk, else 10) once the work is done.
//!
//! The flags several binaries share are declared once, as clap argument groups each binary
//! flattens (`github_args`, `store_args`, `suite_args`), and hand-checked values are parsed
//! by the value parsers of [`parsers`], whose refusals keep the exit code of invalid input.

pub(crate) mod github_args;
pub mod parsers;
pub mod run_ids;
pub(crate) mod store_args;
pub(crate) mod suite_args;

pub use github_args::GithubArgs;
pub use parsers::parse;
pub use run_ids::tier1_run_id_env;
pub use store_args::{HistoryArtifactsArgs, StoreArgs, StoreSpecArg};
pub use suite_args::{RunSetupArgs, SuiteArgs, SuiteFileArg};

use crate::exit::{Classify, Exit};
use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;
use tracing::Subscriber;

/// The exit code of the first failed write of machine output to stdout, if any.
static STDOUT_FAILED: Mutex<Option<Exit>> = Mutex::new(None);

/// The log subscriber: fields rendered through [`crate::text::for_humans`], written to `writer`.
fn subscriber<W>(filter: tracing_subscriber::EnvFilter, writer: W, ansi: bool) -> impl Subscriber
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let fields = tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let shown = format!("{value:?}");
        let shown = crate::text::for_humans(&shown);
        if field.name() == "message" {
            write!(w, "{shown}")
        } else {
            write!(w, "{}={shown}", field.name())
        }
    });
    tracing_subscriber::fmt()
        .with_writer(writer)
        .fmt_fields(tracing_subscriber::field::MakeExt::delimited(fields, " "))
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        // A log line that cannot be written is dropped: the fallback would panic on a bad stderr.
        .log_internal_errors(false)
        .finish()
}

/// Set up stderr logging (`TIER1_LOG`, default `info`) and install the rustls crypto provider.
pub fn init() {
    init_at("info");
}

/// [`init`] with another default level: `--emit-target` logs at `warn` unless `TIER1_LOG` says
/// otherwise, so a side-by-side comparison's invocations of a built-in target add no lines of
/// their own to a night's stderr.
pub fn init_at(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TIER1_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing::subscriber::set_global_default(subscriber(filter, std::io::stderr, ansi));
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Write one line to stderr, dropping it when stderr cannot be written.
fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Print machine output as one line of JSON on stdout. A stdout that cannot be written (a closed
/// pipe, a full disk) is said on stderr and remembered for [`exit`].
pub fn print_json<T: serde::Serialize>(value: &T) {
    let line = match serde_json::to_string(value) {
        Ok(s) => s,
        Err(e) => {
            stderr_line(&format!("error: could not serialize output: {e}"));
            return;
        }
    };
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{line}").and_then(|()| out.flush());
    if let Err(e) = written {
        stderr_line(&format!(
            "error: could not write the JSON result to stdout: {e}"
        ));
        let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
        failed.get_or_insert(crate::exit::of_io(&e));
    }
}

/// Print a run's result as JSON on stdout ([`print_json`]) when `--json` was given or stdout is
/// not a terminal (a pipe, a file: every machine consumer); on a terminal without `--json` the
/// ending ([`print_ending`]) says it for people and no JSON is printed (`tier1-run`,
/// `tier1-nightly`; as `gh` and `git` do, machine output when asked or piped).
pub fn print_result<T: serde::Serialize>(value: &T, json: bool) {
    if json || !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        print_json(value);
    }
}

/// Write the ending of a run (its table and the line that says what the exit code means) to
/// stderr, after every log line.
pub fn print_ending(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The process exit code for `code`: when the work succeeded but its JSON could not be written
/// to stdout, the write's failure ([`Exit::DiskFull`] or [`Exit::Io`]); otherwise `code`.
pub fn exit(code: Exit) -> ExitCode {
    let failed = *STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
    match (code, failed) {
        (Exit::Ok, Some(out)) => out.into(),
        _ => code.into(),
    }
}

/// Print `<tool>: error: <message>` on stderr (and, inside GitHub Actions, an error annotation),
/// the message with URLs redacted and control characters made visible.
pub fn print_error(tool: &str, message: &dyn Display) {
    let shown = crate::text::for_humans(&message.to_string()).into_owned();
    stderr_line(&format!("{tool}: error: {shown}"));
    crate::gha::error(&format!("{tool}: {shown}"));
}

/// Report a failure with [`print_error`] and return its exit code.
pub fn fail<E: Classify + Display>(tool: &str, err: &E) -> ExitCode {
    print_error(tool, err);
    exit(err.exit())
}

/// Say on stderr (and, inside GitHub Actions, as an error annotation) why a gate failed:
/// `<tool>: <message>`.
pub fn gate_failed(tool: &str, message: &str) {
    stderr_line(&format!("{tool}: {message}"));
    crate::gha::error(&format!("{tool}: {message}"));
}

/// Map a result to an exit code: `Ok(exit)` passes through [`exit`], `Err` is reported by
/// [`fail`].
pub fn finish<E: Classify + Display>(tool: &str, r: Result<Exit, E>) -> ExitCode {
    match r {
        Ok(e) => exit(e),
        Err(e) => fail(tool, &e),
    }
}

/// The artifact store spec a binary uses: the one given, else `github` inside Actions; outside
/// Actions one must be given (`local:DIR` or `github`).
pub(crate) fn store_spec(given: Option<String>) -> Result<String, crate::store::StoreError> {
    match given {
        Some(s) => Ok(s),
        None if crate::gha::in_actions() => Ok("github".into()),
        None => Err(crate::store::StoreError::Invalid(
            "--store is required outside GitHub Actions: expected `local:DIR` or `github`".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn log_lines_redact_urls_and_show_control_characters() {
        let out = Captured::default();
        let sink = out.clone();
        let sub = subscriber(
            tracing_subscriber::EnvFilter::new("info"),
            move || sink.clone(),
            false,
        );
        tracing::subscriber::with_default(sub, || {
            let url = "https://user:hunter2@h.example/p?token=SEKRET#frag";
            tracing::warn!(
                url,
                "fetching https://h.example/x?sig=SIG2 for \u{1b}[2Jbob\nforged"
            );
        });
        let text = String::from_utf8(out.0.lock().expect("lock").clone()).expect("utf8");
        for leak in ["hunter2", "SEKRET", "SIG2", "frag", "\u{1b}", "\nforged"] {
            assert!(!text.contains(leak), "{leak:?} in {text:?}");
        }
        assert!(text.contains("https://h.example/x?[redacted]"), "{text}");
        assert!(
            text.contains("url=\"https://***@h.example/p?[redacted]\""),
            "{text}"
        );
        assert!(text.contains("\\u{1b}[2Jbob\\u{a}forged"), "{text}");
        assert_eq!(text.lines().count(), 1, "one event, one line: {text:?}");
    }
}
