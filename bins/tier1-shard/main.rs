//! `tier1-shard`: the steps of a sharded night (docs/sharding.md, docs/tier1-shard.md): `plan`
//! after the class's history is restored, `run` on each shard job's runner, `combine` once every
//! shard job ended.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::bench::alloc::CountingAlloc;
use tier1::cli;
use tier1::shard::ShardError;
use tier1::shard::combine::{CombineCommand, combine};
use tier1::shard::plan_cmd::{PlanCommand, plan};
use tier1::shard::run_cmd::{ShardRunCommand, run_shard};
use tier1::store::open_store;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const TOOL: &str = "tier1-shard";

/// A sharded night's steps.
#[derive(Debug, Parser)]
#[command(name = "tier1-shard", version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Split the suite's targets over the shards (by their recorded times in the restored
    /// history) and write plan.json; on GitHub also the plan job's outputs (the job matrix).
    Plan(PlanArgs),
    /// Measure one shard of the plan on this runner and pack its evidence package.
    Run(RunArgs),
    /// Fetch and verify every shard's package of this workflow run, merge them into one run,
    /// decide the gate, append the run to the candidate history and pack the combined evidence.
    Combine(CombineArgs),
}

#[derive(clap::Args, Debug)]
struct PlanArgs {
    /// The restored history (absent or empty: the first night, a bootstrap).
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    /// Where plan.json is written (must not exist).
    #[arg(long)]
    output: PathBuf,
    #[command(flatten)]
    suite: cli::SuiteArgs,
    /// The runner class (a `runner_classes` entry of the suite).
    #[arg(long, env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    runner_class: Option<String>,
    /// Shards (default: the class's `shards`, else the suite's, else 1).
    #[arg(long, env = "TIER1_SHARDS")]
    shards: Option<String>,
    /// The night's run id (default `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>`).
    #[arg(long, env = "RUN_ID")]
    run_id: Option<String>,
    /// The workflow run whose artifacts will hold the shards.
    #[arg(long, env = "GITHUB_RUN_ID")]
    workflow_run_id: u64,
    /// Its attempt.
    #[arg(long, env = "GITHUB_RUN_ATTEMPT", default_value_t = 1)]
    attempt: u32,
    /// The base artifact prefix (default: the suite's, else `tier1`); a class adds `-<class>`.
    #[arg(long, env = "TIER1_ARTIFACT_PREFIX")]
    artifact_prefix: Option<String>,
    /// The night is an accept dispatch's candidate (measured in the anchor's passes).
    #[arg(long)]
    anchor_candidate: bool,
    /// The checkout.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// plan.json of the plan job.
    #[arg(long)]
    plan: PathBuf,
    /// The plan job's `plan_digest` output: the plan read must be that plan.
    #[arg(long, env = "TIER1_PLAN_DIGEST")]
    plan_digest: Option<String>,
    /// The shard to measure (1-based).
    #[arg(long, env = "TIER1_SHARD")]
    shard: u32,
    /// The history the plan restored.
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    /// Where the shard's evidence is written.
    #[arg(long, env = "TIER1_EVIDENCE_ROOT", default_value = "artifacts/runs")]
    evidence_root: PathBuf,
    /// The package to write (its file name is the artifact name).
    #[arg(long)]
    package: PathBuf,
    #[command(flatten)]
    suite: cli::SuiteFileArg,
    /// Attestation JSON files (tier1-attest, tier1-preflight output) to embed in the manifest.
    #[arg(long = "environment-json", value_name = "FILE")]
    environment_json: Vec<PathBuf>,
    /// The checkout.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
}

#[derive(clap::Args, Debug)]
struct CombineArgs {
    /// plan.json of the plan job.
    #[arg(long)]
    plan: PathBuf,
    /// The plan job's `plan_digest` output.
    #[arg(long, env = "TIER1_PLAN_DIGEST")]
    plan_digest: Option<String>,
    /// The history the plan restored: the candidate, appended in place.
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    /// Where the shards are unpacked and the combined evidence is written.
    #[arg(long, env = "TIER1_EVIDENCE_ROOT", default_value = "artifacts/runs")]
    evidence_root: PathBuf,
    /// The combined evidence package to write (its file name is the evidence artifact name).
    #[arg(long)]
    package: PathBuf,
    /// The evidence artifact name recorded in the summary.
    #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_NAME")]
    evidence_artifact_name: String,
    #[command(flatten)]
    suite: cli::SuiteFileArg,
    /// The checkout.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
    /// The workflow run's current attempt.
    #[arg(long, env = "GITHUB_RUN_ATTEMPT", default_value_t = 1)]
    attempt: u32,
    #[command(flatten)]
    store: cli::StoreArgs,
    #[command(flatten)]
    github: cli::GithubArgs,
}

fn main() -> ExitCode {
    cli::init();
    tier1::process::install_termination_handler();
    let a = match cli::parse::<Args>(TOOL) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match a.command {
        Command::Plan(p) => cli::finish(TOOL, do_plan(p)),
        Command::Run(r) => cli::finish(TOOL, do_run(r)),
        Command::Combine(c) => match do_combine(c) {
            Ok(out) => {
                cli::print_json(&out);
                if let Some(m) = out.run.gate_message() {
                    cli::gate_failed(TOOL, &m);
                }
                cli::exit(out.run.exit())
            }
            Err(e) => cli::fail(TOOL, &e),
        },
    }
}

fn do_plan(a: PlanArgs) -> Result<tier1::Exit, ShardError> {
    let shards = match a
        .shards
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "0")
    {
        None => None,
        Some(s) => Some(s.parse::<u32>().map_err(|_| {
            ShardError::Invalid(format!(
                "--shards: expected a whole number of shards, found {s:?}"
            ))
        })?),
    };
    let out = plan(&PlanCommand {
        history_root: a.history_root,
        output: a.output,
        suite_config: a.suite.file.suite_config,
        repo_root: a.repo_root,
        profile: a.suite.profile,
        runner_class: a.runner_class.filter(|c| !c.is_empty()),
        shards,
        run_id: a.run_id.filter(|r| !r.is_empty()),
        workflow_run_id: a.workflow_run_id,
        attempt: a.attempt,
        artifact_prefix: a.artifact_prefix.filter(|p| !p.is_empty()),
        anchor_candidate: a.anchor_candidate,
    })?;
    cli::print_json(&out);
    Ok(tier1::Exit::Ok)
}

fn do_run(a: RunArgs) -> Result<tier1::Exit, ShardError> {
    let out = run_shard(&ShardRunCommand {
        plan: a.plan,
        expected_plan_digest: a.plan_digest,
        shard: a.shard,
        history_root: a.history_root,
        evidence_root: a.evidence_root,
        package: a.package,
        suite_config: a.suite.suite_config,
        repo_root: a.repo_root,
        environment_json: a.environment_json,
    })?;
    cli::print_json(&out);
    Ok(tier1::Exit::Ok)
}

fn do_combine(a: CombineArgs) -> Result<tier1::shard::combine::CombineOutcome, ShardError> {
    let spec = a.store.spec()?;
    let store = open_store(&spec, &a.store.config(&a.github))?;
    combine(
        &CombineCommand {
            plan: a.plan,
            expected_plan_digest: a.plan_digest,
            history_root: a.history_root,
            evidence_root: a.evidence_root,
            package: a.package,
            evidence_artifact_name: a.evidence_artifact_name,
            suite_config: a.suite.suite_config,
            repo_root: a.repo_root,
            current_attempt: a.attempt,
        },
        store.as_ref(),
    )
}
