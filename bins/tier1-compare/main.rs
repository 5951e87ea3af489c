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
use tier1::store::open_store;

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
    Run(Box<RunArgs>),
    /// Post the preview comment on a pull request, or update the one posted before.
    Comment(CommentArgs),
}

#[derive(clap::Args, Debug)]
#[command(mut_arg("repository", |a| a.required(true)))]
struct RunArgs {
    #[command(flatten)]
    setup: cli::RunSetupArgs,
    /// Run id of the preview (default `YYYYMMDD_HHMMSS_tier1_preview_<sha8>`).
    #[arg(long)]
    run_id: Option<String>,
    #[command(flatten)]
    github: cli::GithubArgs,
    #[command(flatten)]
    history: cli::HistoryArtifactsArgs,
    /// The default branch (the canonical history's branch; never the pull request's ref).
    #[arg(long, env = "TIER1_DEFAULT_BRANCH")]
    branch: String,
    /// Output directory (absent or empty): preview.json, regression_summary.{json,md}, comment.md.
    #[arg(long, default_value = "artifacts/preview")]
    output: PathBuf,
    #[command(flatten)]
    store: cli::StoreArgs,
}

#[derive(clap::Args, Debug)]
#[command(mut_arg("repository", |a| a.required(true)))]
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
    #[command(flatten)]
    github: cli::GithubArgs,
}

fn main() -> ExitCode {
    cli::init();
    let args = match cli::parse::<Args>(TOOL) {
        Ok(args) => args,
        Err(code) => return code,
    };
    match args.command {
        Command::Run(a) => match run_preview(*a) {
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
    let setup = a.setup.prepare(None, &[&a.output])?;
    let run_id = a
        .run_id
        .unwrap_or_else(|| tier1::preview::default_run_id(setup.git.commit.as_deref()));
    let spec = a
        .store
        .spec()
        .map_err(|e| PreviewError::Invalid(e.to_string()))?;
    let store =
        open_store(&spec, &a.store.config(&a.github)).map_err(|e| PreviewError::Restore {
            branch: a.branch.clone(),
            source: e.into(),
        })?;
    let req = PreviewRequest {
        suite: &setup.suite,
        suite_source: setup.suite_source,
        profile: setup.profile,
        run_id,
        backend: setup.backend,
        attestation: setup.attestation,
        git: setup.git,
        repo_root: a.setup.repo_root,
        artifact_prefix: a.history.artifact_prefix,
        repository: a.github.repository().to_string(),
        workflow: a.history.workflow,
        branch: a.branch,
        output: a.output,
        run_url: tier1::gha::run_url(),
        runner_class: setup.runner_class,
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
    let cfg = GithubConfig::from_env(Some(&a.github.api_url), a.github.repository.as_deref())?;
    let client = GithubClient::new(cfg)?;
    tier1::preview::post::post(&client, a.pr, &a.author, &text)
}
