//! `tier1-compare`: the pull request preview. `run` measures the checked-out commit against the
//! canonical anchor of the default branch (preview, not canonical: no history written, nothing
//! uploaded); `comment` posts or updates the one preview comment on the pull request.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::bench::alloc::CountingAlloc;
use tier1::cli;
use tier1::github::{GithubClient, GithubConfig};
use tier1::preview::post::{Body, DEFAULT_AUTHOR};
use tier1::preview::{PreviewError, PreviewRequest};
use tier1::restore::DEFAULT_WORKFLOW;
use tier1::run;
use tier1::store::{StoreConfig, open_store};

// The same allocator as tier1-run: memory is measured exactly as the nightly measures it.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const TOOL: &str = "tier1-compare";

/// Pull request preview of the tier-1 suite against the canonical anchor (never published).
#[derive(Debug, Parser)]
#[command(name = "tier1-compare", version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the suite on this checkout and compare it with the current anchor of the default
    /// branch's canonical history, as the nightly would; exit 0 when the nightly gate would pass,
    /// 1 when it would fail.
    Run(RunArgs),
    /// Post the preview comment on a pull request, or update the one posted before.
    Comment(CommentArgs),
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Suite YAML (default: configs/benchmark_suites/tier1.yaml when present, else the embedded suite).
    #[arg(long, env = "TIER1_SUITE_CONFIG")]
    suite_config: Option<PathBuf>,
    /// Profile (default: the suite's default when a GPU is usable, else `cpu`).
    #[arg(long, env = "TIER1_PROFILE")]
    profile: Option<String>,
    /// Run id of the preview (default `YYYYMMDD_HHMMSS_tier1_preview_<sha8>`).
    #[arg(long)]
    run_id: Option<String>,
    /// `owner/name` whose canonical history is compared with.
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repository: String,
    /// Artifact prefix of the canonical history (`<prefix>-history-*`).
    #[arg(long, env = "TIER1_ARTIFACT_PREFIX", default_value = tier1::artifacts::DEFAULT_PREFIX)]
    artifact_prefix: String,
    /// Producer workflow file whose runs hold the canonical history.
    #[arg(long, default_value = DEFAULT_WORKFLOW)]
    workflow: String,
    /// The default branch (the canonical history's branch; never the pull request's ref).
    #[arg(long, env = "TIER1_DEFAULT_BRANCH")]
    branch: String,
    /// Output directory (absent or empty): preview.json, regression_summary.{json,md}, comment.md.
    #[arg(long, default_value = "artifacts/preview")]
    output: PathBuf,
    /// Attestation JSON files (tier1-attest, tier1-preflight output) to embed in the manifest.
    #[arg(long = "environment-json", value_name = "FILE")]
    environment_json: Vec<PathBuf>,
    /// The checkout whose commit and cleanliness are recorded.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
    /// Artifact store: `local:DIR` or `github` (default `github` when GITHUB_ACTIONS=true).
    #[arg(long, env = "TIER1_STORE")]
    store: Option<String>,
    /// REST API base URL (github store).
    #[arg(long, env = "GITHUB_API_URL")]
    api_url: Option<String>,
    /// Fixed clock, RFC 3339 (evidence ages are computed against it).
    #[arg(long, env = "TIER1_NOW")]
    now: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(clap::Args, Debug)]
struct CommentArgs {
    /// The pull request number.
    #[arg(long, env = "TIER1_PR_NUMBER")]
    pr: u64,
    /// The `comment.md` written by `tier1-compare run`.
    #[arg(
        long,
        required_unless_present = "preview_failed",
        conflicts_with = "preview_failed"
    )]
    body_file: Option<PathBuf>,
    /// Post that the preview did not complete (with a link to this workflow run).
    #[arg(long)]
    preview_failed: bool,
    /// Login the token posts as; only its comment carrying the preview marker is updated.
    #[arg(long, env = "TIER1_COMMENT_AUTHOR", default_value = DEFAULT_AUTHOR)]
    author: String,
    /// `owner/name` of the pull request.
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repository: String,
    /// REST API base URL.
    #[arg(long, env = "GITHUB_API_URL")]
    api_url: Option<String>,
}

fn main() -> ExitCode {
    cli::init();
    match Args::parse().command {
        Command::Run(a) => match run_preview(a) {
            Ok(outcome) => {
                cli::print_json(&outcome);
                cli::exit(outcome.exit())
            }
            Err(e) => cli::fail(TOOL, &e),
        },
        Command::Comment(a) => match comment(a) {
            Ok(posted) => {
                cli::print_json(&posted);
                cli::exit(tier1::Exit::Ok)
            }
            Err(e) => cli::fail(TOOL, &e),
        },
    }
}

fn run_preview(a: RunArgs) -> Result<tier1::preview::PreviewOutcome, PreviewError> {
    let discovered = tier1::suite::Suite::discover(a.suite_config.as_deref(), &a.repo_root, None)
        .map_err(run::RunError::from)?;
    let suite = discovered.suite;
    let artifact_prefix = tier1::artifacts::ArtifactPrefix::parse(&a.artifact_prefix)
        .map_err(PreviewError::Invalid)?;
    let profile = a.profile.unwrap_or_else(|| run::default_profile(&suite));
    let git = run::detect_git(&a.repo_root, &[&a.output]);
    let run_id = a
        .run_id
        .unwrap_or_else(|| tier1::preview::default_run_id(git.commit.as_deref()));
    let attestation = run::read_attestations(&a.environment_json)?;
    let backend = run::backend_for(&suite, &profile).map_err(run::RunError::from)?;
    let spec = cli::store_spec(a.store).map_err(|e| PreviewError::Invalid(e.to_string()))?;
    let cfg = StoreConfig {
        repository: a.repository.clone(),
        api_url: a.api_url,
        now: a.now,
    };
    let store = open_store(&spec, &cfg).map_err(|e| PreviewError::Restore {
        branch: a.branch.clone(),
        source: e.into(),
    })?;
    let req = PreviewRequest {
        suite: &suite,
        suite_source: discovered.source,
        profile,
        run_id,
        backend,
        attestation,
        git,
        repo_root: a.repo_root,
        artifact_prefix,
        repository: a.repository,
        workflow: a.workflow,
        branch: a.branch,
        output: a.output,
        run_url: tier1::gha::run_url(),
    };
    tier1::preview::preview(store.as_ref(), &req)
}

fn comment(a: CommentArgs) -> Result<tier1::github::comments::Upserted, PreviewError> {
    let body = match a.body_file {
        Some(p) => Body::File(p),
        None => Body::Failed {
            run_url: tier1::gha::run_url(),
        },
    };
    // Everything about the comment is checked before the token is even read.
    let text = tier1::preview::post::prepare(a.pr, &a.author, &body)?;
    let cfg = GithubConfig::from_env(a.api_url.as_deref(), Some(&a.repository))?;
    let client = GithubClient::new(cfg)?;
    tier1::preview::post::post(&client, a.pr, &a.author, &text)
}
