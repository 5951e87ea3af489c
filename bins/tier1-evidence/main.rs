//! `tier1-evidence`: evidence of a tier-1 run. `verify` checks the uploaded evidence artifact's
//! REST digest against the local file and the upload action's `artifact-digest` output.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::evidence::verify::{ArtifactRef, VerifyError, VerifyRequest, verify};
use tier1::store::github::GithubStore;

const TOOL: &str = "tier1-evidence";

#[derive(Parser, Debug)]
#[command(name = TOOL, version, about = "Evidence of a tier-1 run")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Require the uploaded evidence artifact's REST digest to equal the local file's digest and
    /// the upload action's `artifact-digest` output; write the identity to $GITHUB_OUTPUT.
    Verify(VerifyArgs),
}

#[derive(clap::Args, Debug)]
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
    /// upload-artifact's `artifact-digest` output (bare hex or sha256:<hex>).
    #[arg(long, env = "TIER1_EVIDENCE_ARTIFACT_DIGEST")]
    expected_digest: String,
    /// This workflow run.
    #[arg(long, env = "GITHUB_RUN_ID")]
    run_id: u64,
    /// owner/name.
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repository: String,
    /// REST base URL.
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    api_url: String,
    /// Step-outputs file (set by the runner).
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

fn main() -> ExitCode {
    tier1::cli::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Verify(a) => tier1::cli::finish(TOOL, run_verify(a)),
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
    let store = GithubStore::from_env(Some(&a.api_url), Some(&a.repository))?;
    let report = verify(
        &store,
        &VerifyRequest {
            file: a.file,
            run_id: a.run_id,
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
