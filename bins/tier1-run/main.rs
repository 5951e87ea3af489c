//! `tier1-run`: run the suite, write the evidence package and the candidate history, exit by the gate.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::bench::alloc::CountingAlloc;
use tier1::cli;
use tier1::run::{self, RunRequest};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

/// Run the tier-1 suite once: evidence under the evidence root, the run appended to the candidate
/// history, a JSON result on stdout, and the release gate as the exit code.
#[derive(Debug, Parser)]
#[command(name = "tier1-run", version)]
#[command(mut_arg("run_id", cli::tier1_run_id_env))]
struct Args {
    #[command(flatten)]
    setup: cli::RunSetupArgs,
    /// Run id (default `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>`; the variable `RUN_ID` is read
    /// when `TIER1_RUN_ID` is not set).
    #[arg(long, env = "TIER1_RUN_ID")]
    run_id: Option<String>,
    /// Candidate history root (the restored live history; updated in place).
    #[arg(
        long,
        env = "TIER1_HISTORY_ROOT",
        default_value = "artifacts/history/tier1"
    )]
    history_root: PathBuf,
    /// Evidence root.
    #[arg(long, env = "TIER1_EVIDENCE_ROOT", default_value = "artifacts/runs")]
    evidence_root: PathBuf,
    /// This run is a candidate for protected promotion: it may not elect itself as the first anchor.
    #[arg(long)]
    history_anchor_candidate: bool,
    /// Evidence artifact name recorded in the summary.
    #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_NAME")]
    evidence_artifact_name: Option<String>,
    /// Run although the checkout has uncommitted changes (to try a suite): the run is recorded
    /// dirty, is never accepted and cannot be bound as evidence.
    #[arg(long)]
    allow_dirty: bool,
    /// Measure only this built-in target, one short pass, and print its
    /// `tier1.command_result.v1` document (docs/command-targets.md) instead of running the suite:
    /// the target invoked like a command target (the protocol's TIER1_* variables apply). Writes
    /// nothing.
    #[arg(long, value_name = "KEY")]
    emit_target: Option<String>,
    /// Print the JSON result on stdout even when stdout is a terminal (it is always printed when
    /// stdout is a pipe or a file); the ending table goes to stderr either way.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = match tier1::cli::parse::<Args>("tier1-run") {
        Ok(a) => a,
        Err(code) => return code,
    };
    cli::init_at(if args.emit_target.is_some() {
        "warn"
    } else {
        "info"
    });
    tier1::process::install_termination_handler();
    // This build's commit: a night proves with it that this binary is the checkout's build.
    tier1::sidebyside::running::record(env!("TIER1_BUILD_COMMIT"), env!("TIER1_BUILD_CLEAN"));
    if let Some(key) = &args.emit_target {
        return args
            .setup
            .suite
            .emit_target("tier1-run", &args.setup.repo_root, key);
    }
    let json = args.json;
    match execute(args) {
        Ok(outcome) => {
            cli::print_result(&outcome, json);
            if let Some(m) = outcome.gate_message() {
                cli::gate_failed("tier1-run", &m);
            }
            cli::print_ending(&outcome.ending());
            cli::exit(outcome.exit())
        }
        Err(e) => cli::fail("tier1-run", &e),
    }
}

fn execute(args: Args) -> Result<run::RunOutcome, run::RunError> {
    let setup = args.setup.prepare(
        Some(&args.history_root),
        &[&args.history_root, &args.evidence_root],
    )?;
    let run_id = args
        .run_id
        .unwrap_or_else(|| run::default_run_id_now(setup.git.commit.as_deref()));
    let req = RunRequest {
        suite: &setup.suite,
        suite_source: setup.suite_source,
        profile: setup.profile,
        run_id,
        history_root: args.history_root,
        evidence_root: args.evidence_root,
        backend: setup.backend,
        anchor_candidate: args.history_anchor_candidate,
        attestation: setup.attestation,
        git: setup.git,
        repo_root: args.setup.repo_root,
        allow_dirty: args.allow_dirty,
        evidence_artifact_name: args.evidence_artifact_name,
        hook: None,
        passes: None,
        runner_class: setup.runner_class,
        shard: None,
    };
    run::run(&req)
}
