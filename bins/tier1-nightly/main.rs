//! `tier1-nightly`: the main job, run locally against the local store (the embedded default).

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::bench::alloc::CountingAlloc;
use tier1::cli;
use tier1::nightly::{self, NightlyRequest};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

/// Run the tier1-nightly job chain locally: restore, run, bind, pack, upload evidence, verify,
/// upload the candidate, then publish (or promote with --accept), against a local artifact store.
#[derive(Debug, Parser)]
#[command(name = "tier1-nightly", version)]
struct Args {
    /// The local store directory (created when absent).
    #[arg(long, env = "TIER1_STORE_DIR", default_value = ".tier1/store")]
    store: PathBuf,
    #[command(flatten)]
    suite: cli::SuiteArgs,
    /// The workflow file recorded (default: the suite's `workflow`, else tier1-nightly.yml).
    #[arg(long, env = "TIER1_WORKFLOW")]
    workflow: Option<String>,
    /// The artifact prefix (default: the suite's `artifact_prefix`, else `tier1`).
    #[arg(long, env = "TIER1_ARTIFACT_PREFIX", value_parser = cli::parsers::artifact_prefix)]
    artifact_prefix: Option<tier1::artifacts::ArtifactPrefix>,
    /// Establish the first anchor (requires --accept and --note).
    #[arg(long)]
    bootstrap: bool,
    /// Ratify this run as the new anchor through tier1-promote (requires --note).
    #[arg(long)]
    accept: bool,
    /// The public acceptance note.
    #[arg(long)]
    note: Option<String>,
    /// Who requests the acceptance (default: $GITHUB_TRIGGERING_ACTOR, else $GITHUB_ACTOR, else $USER).
    #[arg(long)]
    requester: Option<String>,
    /// Refuse to bootstrap a brand-new store automatically.
    #[arg(long)]
    no_auto_bootstrap: bool,
    /// Leave a copy of the published history here (replaced if it exists).
    #[arg(long)]
    history_out: Option<PathBuf>,
    /// Branch recorded for the run.
    #[arg(long, default_value = "main")]
    branch: String,
    /// The checkout whose commit is recorded.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
    /// Clock override (RFC 3339) for the store's age and expiry checks.
    #[arg(long)]
    now: Option<chrono::DateTime<chrono::Utc>>,
    /// Keep the job's work directory under the store.
    #[arg(long)]
    keep_work: bool,
    /// Print the JSON outcome on stdout even when stdout is a terminal (it is always printed when
    /// stdout is a pipe or a file); the ending table goes to stderr either way.
    #[arg(long)]
    json: bool,
    /// Measure only this built-in target of the checkout's suite, one short pass, and print its
    /// `tier1.command_result.v1` document (as `tier1-run --emit-target`: side by side invokes the
    /// running binary this way). Runs no job and writes nothing.
    #[arg(long, value_name = "KEY")]
    emit_target: Option<String>,
    /// Shard the night (docs/sharding.md): plan, N shard jobs one after another, combine
    /// (default: the runner class's `shards`, else the suite's; 1 and unset: one job).
    #[arg(long, env = "TIER1_SHARDS")]
    shards: Option<u32>,
    /// The runner class measured on (a `runner_classes` entry of the suite): its profile, its own
    /// history and artifact names.
    #[arg(long = "class", env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    runner_class: Option<String>,
}

fn main() -> ExitCode {
    let a = match cli::parse::<Args>("tier1-nightly") {
        Ok(a) => a,
        Err(code) => return code,
    };
    cli::init_at(if a.emit_target.is_some() {
        "warn"
    } else {
        "info"
    });
    tier1::process::install_termination_handler();
    // This build's commit: a night proves with it that this binary is the checkout's build.
    tier1::sidebyside::running::record(env!("TIER1_BUILD_COMMIT"), env!("TIER1_BUILD_CLEAN"));
    if let Some(key) = &a.emit_target {
        return a.suite.emit_target("tier1-nightly", &a.repo_root, key);
    }
    let json = a.json;
    let req = NightlyRequest {
        profile: a.suite.profile,
        workflow: a.workflow,
        artifact_prefix: a.artifact_prefix.map(|p| p.to_string()),
        suite_config: a.suite.file.suite_config,
        store_dir: a.store,
        repo_root: a.repo_root,
        branch: a.branch,
        bootstrap: a.bootstrap,
        accept: a.accept,
        note: a.note,
        requester: a.requester,
        auto_bootstrap: !a.no_auto_bootstrap,
        history_out: a.history_out,
        now: a.now,
        keep_work: a.keep_work,
        shards: a.shards,
        runner_class: a.runner_class.filter(|c| !c.is_empty()),
    };
    match nightly::run(&req) {
        Ok(outcome) => {
            if let Some(f) = &outcome.failure {
                cli::print_error("tier1-nightly", f);
            }
            cli::print_result(&outcome, json);
            cli::print_ending(&outcome.ending());
            cli::exit(outcome.exit)
        }
        Err(e) => cli::fail("tier1-nightly", &e),
    }
}
