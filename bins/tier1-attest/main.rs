//! `tier1-attest`: attest what can be known about the runner executing this job (the machine's OS
//! and architecture, the runner's version, its `RUNNER_*` report, the labels the job requested)
//! against the canonical policy; prints the attestation, which says what it proves.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::attest::{self, JobsSource, Policy, RunnerEnv, RunnerError, VersionSource, jobs_api};
use tier1::{Exit, cli};

const TOOL: &str = "tier1-attest";

/// Attest the runner executing this job.
#[derive(Debug, Parser)]
#[command(name = TOOL, version, about)]
struct Args {
    /// Labels the job's `runs-on` must include (comma-separated); the jobs API reports what the
    /// job asked for, not the runner's own labels.
    #[arg(
        long,
        env = "TIER1_REQUIRED_LABELS",
        value_delimiter = ',',
        default_value = "self-hosted,linux,x64,gpu,b200,node24-actions"
    )]
    labels: Vec<String>,
    /// A saved jobs API response to read instead of calling the API.
    #[arg(long, env = "TIER1_JOBS_JSON")]
    jobs_json: Option<PathBuf>,
    /// The runner version, instead of asking `Runner.Listener --version`.
    #[arg(long, env = "TIER1_RUNNER_VERSION")]
    runner_version: Option<String>,
    /// The runner's install directory (holding `bin/Runner.Listener`), instead of finding it
    /// from the process ancestry.
    #[arg(long, env = "TIER1_RUNNER_ROOT")]
    runner_root: Option<PathBuf>,
    /// Also write the attestation JSON to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    #[arg(
        long,
        env = "RUNNER_NAME",
        default_value = "",
        hide_default_value = true
    )]
    runner_name: String,
    #[arg(long, env = "RUNNER_OS", default_value = "", hide_default_value = true)]
    runner_os: String,
    #[arg(
        long,
        env = "RUNNER_ARCH",
        default_value = "",
        hide_default_value = true
    )]
    runner_arch: String,
    #[arg(
        long,
        env = "RUNNER_ENVIRONMENT",
        default_value = "",
        hide_default_value = true
    )]
    runner_environment: String,
    #[command(flatten)]
    github: cli::GithubArgs,
    /// The workflow run's id (GitHub's; `--run-id`, its former name, is still accepted).
    #[arg(long, env = "GITHUB_RUN_ID", alias = cli::run_ids::FORMER_WORKFLOW_RUN_ID_FLAG)]
    workflow_run_id: Option<u64>,
    #[arg(long, env = "GITHUB_RUN_ATTEMPT", default_value_t = 1)]
    run_attempt: u32,
    /// Token for the jobs API (needs `actions: read`); only read from the environment.
    #[arg(skip)]
    token: Option<String>,
}

fn missing(what: &str) -> RunnerError {
    RunnerError::Input {
        what: what.to_string(),
        expected: "a value (or --jobs-json)".to_string(),
        found: "nothing".to_string(),
    }
}

fn run(args: Args) -> Result<Exit, RunnerError> {
    let policy = Policy {
        required_labels: args
            .labels
            .iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    };
    let env = RunnerEnv {
        name: args.runner_name,
        os: args.runner_os,
        arch: args.runner_arch,
        environment: args.runner_environment,
    };
    let jobs = match args.jobs_json {
        Some(path) => JobsSource::File(path),
        None => JobsSource::Api(jobs_api::JobsRequest {
            api_url: args.github.api_url,
            repository: args
                .github
                .repository
                .ok_or_else(|| missing("GITHUB_REPOSITORY (--repository)"))?,
            run_id: args
                .workflow_run_id
                .ok_or_else(|| missing("GITHUB_RUN_ID (--workflow-run-id)"))?,
            attempt: args.run_attempt,
            token: args.token.ok_or_else(|| missing("GITHUB_TOKEN"))?,
        }),
    };
    let version = match (args.runner_version, args.runner_root) {
        (Some(v), _) => VersionSource::Given(v),
        (None, Some(root)) => VersionSource::RunnerRoot(root),
        (None, None) => VersionSource::Discover,
    };
    let result = attest::attest_from(&policy, &env, &jobs, &version);
    let record = match &result {
        Ok(a) => a,
        Err(RunnerError::Failed { attestation, .. }) => attestation.as_ref(),
        Err(_) => return result.map(|_| Exit::Ok),
    };
    cli::print_json(record);
    if let Some(path) = &args.output {
        tier1::json::write(path, record)?;
    }
    result.map(|_| Exit::Ok)
}

fn main() -> ExitCode {
    cli::init();
    let mut args = match tier1::cli::parse::<Args>("tier1-attest") {
        Ok(a) => a,
        Err(code) => return code,
    };
    args.token = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty());
    cli::finish(TOOL, run(args))
}
