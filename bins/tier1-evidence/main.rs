//! `tier1-evidence`: bind a run's evidence identity to the checkout, pack it deterministically, and
//! verify the uploaded artifact's digest.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::cli;
use tier1::evidence::verify::{ArtifactRef, VerifyError, VerifyRequest, verify};
use tier1::evidence::{bind, pack};
use tier1::store::github::GithubStore;

const TOOL: &str = "tier1-evidence";

/// Evidence package operations.
#[derive(Debug, Parser)]
#[command(name = "tier1-evidence", version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check that the summary, manifest and results name this run and this clean commit (reference
    /// §4.2 step 11), and record the checkout's identity in them.
    #[command(mut_arg("run_id", cli::tier1_run_id_env))]
    Bind {
        /// tier1's run id (the variable `RUN_ID` is read when `TIER1_RUN_ID` is not set).
        #[arg(long, env = "TIER1_RUN_ID")]
        run_id: String,
        /// Evidence root holding `<run_id>/`.
        #[arg(long, env = "TIER1_EVIDENCE_ROOT", default_value = "artifacts/runs")]
        evidence_root: PathBuf,
        /// Candidate history root holding `<run_id>/summary.json`.
        #[arg(
            long,
            env = "TIER1_HISTORY_ROOT",
            default_value = "artifacts/history/tier1"
        )]
        history_root: PathBuf,
        /// The expected commit (default: `GITHUB_SHA`, else the checkout's HEAD).
        #[arg(long)]
        commit: Option<String>,
        /// The checkout to check for cleanliness.
        #[arg(long, default_value = ".")]
        repo_root: PathBuf,
        /// When given, the summary's evidence artifact name must equal it.
        #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_NAME")]
        evidence_artifact_name: Option<String>,
    },
    /// Pack `<run_id>/` and `<run_id>__recheck__*/` into one deterministic zip; print its digest.
    #[command(mut_arg("run_id", cli::tier1_run_id_env))]
    Pack {
        /// tier1's run id (the variable `RUN_ID` is read when `TIER1_RUN_ID` is not set).
        #[arg(long, env = "TIER1_RUN_ID")]
        run_id: String,
        /// Evidence root.
        #[arg(long, env = "TIER1_EVIDENCE_ROOT", default_value = "artifacts/runs")]
        evidence_root: PathBuf,
        /// The zip to write.
        #[arg(long)]
        output: PathBuf,
    },
    /// Require the uploaded evidence artifact's REST digest to equal the local file's digest and
    /// the upload action's `artifact-digest` output; write the identity to $GITHUB_OUTPUT.
    Verify(VerifyArgs),
}

#[derive(clap::Args, Debug)]
#[command(mut_arg("repository", |a| a.required(true)))]
struct VerifyArgs {
    /// The packed evidence file that was uploaded.
    #[arg(long, env = "TIER1_EVIDENCE_FILE")]
    file: PathBuf,
    /// Artifact name to look up in this run (the highest id wins on re-runs).
    #[arg(
        long,
        env = "TIER1_EVIDENCE_ARTIFACT_NAME",
        required_unless_present = "artifact_id"
    )]
    artifact_name: Option<String>,
    /// Artifact id (upload-artifact's `artifact-id` output); must belong to this run.
    #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_ID")]
    artifact_id: Option<u64>,
    /// upload-artifact's `artifact-digest` output (bare hex or `sha256:<hex>`).
    #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_DIGEST")]
    expected_digest: String,
    /// This workflow run's id (GitHub's; `--run-id`, its former name, is still accepted).
    #[arg(long, env = "GITHUB_RUN_ID", alias = tier1::cli::run_ids::FORMER_WORKFLOW_RUN_ID_FLAG)]
    workflow_run_id: u64,
    #[command(flatten)]
    github: cli::GithubArgs,
    /// Step-outputs file (set by the runner).
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

fn main() -> ExitCode {
    cli::init();
    let args: Args = match tier1::cli::parse::<Args>("tier1-evidence") {
        Ok(a) => a,
        Err(code) => return code,
    };
    match args.command {
        Command::Bind {
            run_id,
            evidence_root,
            history_root,
            commit,
            repo_root,
            evidence_artifact_name,
        } => {
            let git = tier1::run::detect_git(&repo_root, &[&history_root, &evidence_root]);
            let commit = commit.or(git.commit).unwrap_or_default();
            let req = bind::BindRequest {
                run_id: &run_id,
                evidence_root: &evidence_root,
                history_root: &history_root,
                commit: &commit,
                dirty: git.dirty.unwrap_or(true),
                dirty_files: &git.dirty_files,
                evidence_artifact_name: evidence_artifact_name.as_deref(),
            };
            match bind::bind(&req) {
                Ok(b) => {
                    cli::print_json(&b);
                    cli::exit(Exit::Ok)
                }
                Err(e) => cli::fail("tier1-evidence bind", &e),
            }
        }
        Command::Pack {
            run_id,
            evidence_root,
            output,
        } => match pack::pack(&evidence_root, &run_id, &output) {
            Ok(p) => {
                let _ = tier1::gha::set_output("evidence_digest", p.digest.as_str());
                cli::print_json(&p);
                cli::exit(Exit::Ok)
            }
            Err(e) => cli::fail("tier1-evidence pack", &e),
        },
        Command::Verify(a) => cli::finish(TOOL, run_verify(a)),
    }
}

fn run_verify(a: VerifyArgs) -> Result<Exit, VerifyError> {
    let artifact = match (a.artifact_id, a.artifact_name) {
        (Some(id), Some(name)) => ArtifactRef::IdAndName(id, name),
        (Some(id), None) => ArtifactRef::Id(id),
        (None, Some(name)) => ArtifactRef::Name(name),
        (None, None) => {
            return Err(VerifyError::Invalid(
                "--artifact-name or --artifact-id is required".into(),
            ));
        }
    };
    let store = GithubStore::from_env(Some(&a.github.api_url), a.github.repository.as_deref())?;
    let report = verify(
        &store,
        &VerifyRequest {
            file: a.file,
            run_id: a.workflow_run_id,
            artifact,
            expected_digest: a.expected_digest,
            github_output: a.github_output.filter(|p| !p.as_os_str().is_empty()),
        },
    )?;
    tracing::info!(
        "evidence artifact {} (id {}) verified: {}",
        report.evidence_artifact_name,
        report.evidence_artifact_id,
        report.evidence_artifact_digest
    );
    tier1::cli::print_json(&report);
    Ok(Exit::Ok)
}
