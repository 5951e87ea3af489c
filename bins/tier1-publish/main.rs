//! `tier1-publish`: merge a producer's candidate run into live canonical history as evidence
//! (never an anchor), extending the hash chain, into a new output root. See docs/tier1-publish.md.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::publish::{MergeRequest, merge};
use tier1::suite::Suite;

/// Merge a candidate history run into live canonical history.
#[derive(Parser, Debug)]
#[command(name = "tier1-publish", version, about)]
#[command(mut_arg("run_id", tier1::cli::tier1_run_id_env))]
struct Args {
    /// The producer's candidate history tree (read only).
    #[arg(long, env = "TIER1_CANDIDATE_HISTORY_ROOT")]
    candidate_history_root: PathBuf,
    /// Live canonical history restored under the publication lock (read only).
    #[arg(long, env = "TIER1_CANONICAL_HISTORY_ROOT")]
    canonical_history_root: PathBuf,
    /// Output root for the merged tree; must not exist or be empty.
    #[arg(long, env = "TIER1_OUTPUT_HISTORY_ROOT")]
    output_history_root: PathBuf,
    /// The run to publish (the candidate's newest run; the variable `RUN_ID` is read when
    /// `TIER1_RUN_ID` is not set).
    #[arg(long, env = "TIER1_RUN_ID")]
    run_id: String,
    #[command(flatten)]
    suite: tier1::cli::SuiteFileArg,
    /// The runner class published (docs/sharding.md): the candidate and the live history must be
    /// of it (absent: the unnamed class).
    #[arg(long, env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    runner_class: Option<String>,
}

fn main() -> ExitCode {
    tier1::cli::init();
    let a = match tier1::cli::parse::<Args>("tier1-publish") {
        Ok(a) => a,
        Err(code) => return code,
    };
    let discovered = Suite::discover(
        a.suite.suite_config.as_deref(),
        std::path::Path::new("."),
        Some(&a.candidate_history_root),
    );
    let suite = match discovered {
        Ok(d) => d.suite,
        Err(e) => return tier1::cli::fail("tier1-publish", &e),
    };
    let req = MergeRequest {
        candidate_root: a.candidate_history_root,
        canonical_root: a.canonical_history_root,
        output_root: a.output_history_root,
        run_id: a.run_id,
        runner_class: a.runner_class.filter(|c| !c.is_empty()),
    };
    tier1::cli::finish(
        "tier1-publish",
        merge(&req, &suite).map(|out| {
            tier1::cli::print_json(&out);
            Exit::Ok
        }),
    )
}
