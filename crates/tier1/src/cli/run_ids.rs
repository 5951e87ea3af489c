//! The two run ids a binary may be given, each with one name: **tier1's run id** (the name of a
//! night's run in the history, `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>`): `--run-id`,
//! `TIER1_RUN_ID`; and **a GitHub workflow run's id** (a number): `--workflow-run-id`,
//! `GITHUB_RUN_ID`. Their former spellings are still read, hidden from the help and documented on
//! the binaries' pages: the variable `RUN_ID` for tier1's run id, and the flag `--run-id` of
//! `tier1-evidence verify` and `tier1-attest` for the workflow run.

/// The variable of tier1's run id.
pub const TIER1_RUN_ID: &str = "TIER1_RUN_ID";

/// The former variable of tier1's run id, read when [`TIER1_RUN_ID`] is not set.
pub const FORMER_RUN_ID: &str = "RUN_ID";

/// The flag's former name for the workflow run's id (`tier1-evidence verify`, `tier1-attest`).
pub const FORMER_WORKFLOW_RUN_ID_FLAG: &str = "run-id";

/// Which variable `--run-id` falls back to: [`TIER1_RUN_ID`], or [`FORMER_RUN_ID`] when only
/// that one is set.
pub(crate) fn tier1_run_id_variable(tier1: bool, former: bool) -> &'static str {
    if !tier1 && former {
        FORMER_RUN_ID
    } else {
        TIER1_RUN_ID
    }
}

/// Gives tier1's `--run-id` its variable from this process's environment:
/// `#[command(mut_arg("run_id", tier1::cli::tier1_run_id_env))]` beside
/// `#[arg(long, env = "TIER1_RUN_ID")]`.
pub fn tier1_run_id_env(arg: clap::Arg) -> clap::Arg {
    arg.env(tier1_run_id_variable(
        std::env::var_os(TIER1_RUN_ID).is_some(),
        std::env::var_os(FORMER_RUN_ID).is_some(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_former_variable_is_read_only_when_the_new_one_is_not_set() {
        assert_eq!(tier1_run_id_variable(true, true), TIER1_RUN_ID);
        assert_eq!(tier1_run_id_variable(true, false), TIER1_RUN_ID);
        assert_eq!(tier1_run_id_variable(false, false), TIER1_RUN_ID);
        assert_eq!(tier1_run_id_variable(false, true), FORMER_RUN_ID);
    }
}
