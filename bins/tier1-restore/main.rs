//! `tier1-restore`: restore the latest canonical tier-1 history (or report bootstrap) into an empty
//! destination, from the GitHub Actions artifact store or a local store, or offline from a
//! `tier1-export` archive (`--from-export`).

use chrono::{DateTime, Utc};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::restore::{DEFAULT_WORKFLOW, RestoreError, RestoreOptions};
use tier1::store::{StoreConfig, open_store};

/// Restore canonical tier-1 history from workflow artifacts (fail closed).
#[derive(Debug, Parser)]
#[command(name = "tier1-restore", version)]
struct Args {
    /// `owner/name` of the repository whose history is restored (a local store: default and only
    /// accepted value is the repository the store models, `local/<dir name>` for tier1-nightly's).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repository: Option<String>,
    /// Workflow file that produces the history.
    #[arg(long, default_value = DEFAULT_WORKFLOW)]
    workflow: String,
    /// Branch whose history is restored.
    #[arg(long, env = "GITHUB_REF_NAME", required_unless_present = "from_export")]
    branch: Option<String>,
    /// The current run id (never a candidate).
    #[arg(long, env = "GITHUB_RUN_ID")]
    current_run_id: Option<u64>,
    /// Let the current run be a candidate too (a publication job: a history an earlier attempt of
    /// this run published is live history; docs/tier1-restore.md).
    #[arg(long)]
    include_current_run: bool,
    /// Destination directory (absent or empty).
    #[arg(long)]
    destination: PathBuf,
    /// REST API base URL (github store).
    #[arg(long, env = "GITHUB_API_URL")]
    api_url: Option<String>,
    /// Print the bootstrap status instead of failing when no usable history exists.
    #[arg(long)]
    allow_bootstrap: bool,
    /// Allow anchor evidence 60 days old or older (protected renewal).
    #[arg(long)]
    allow_anchor_renewal: bool,
    /// Artifact prefix: candidates are `<prefix>-history-*` paired with `<prefix>-evidence-*`.
    #[arg(long, env = "TIER1_ARTIFACT_PREFIX", default_value = tier1::artifacts::DEFAULT_PREFIX)]
    artifact_prefix: String,
    /// Artifact store: `local:DIR` or `github` (default `github` when GITHUB_ACTIONS=true).
    #[arg(long, env = "TIER1_STORE")]
    store: Option<String>,
    /// Fixed clock, RFC 3339 (ages and expiry are computed against it).
    #[arg(long, env = "TIER1_NOW")]
    now: Option<DateTime<Utc>>,
    /// Restore offline from a `tier1-export` archive instead of the artifact store.
    #[arg(long, value_name = "FILE")]
    from_export: Option<PathBuf>,
    /// The export's expected SHA-256 (hex or `sha256:<hex>`; default: `FILE.sha256` when present).
    #[arg(long, value_name = "HEX", requires = "from_export")]
    sha256: Option<String>,
}

/// `--from-export`: the export verified and restored offline.
fn from_export(args: Args, export: PathBuf) -> ExitCode {
    let opts = tier1::restore::export::ExportRestoreOptions {
        export,
        sha256: args.sha256,
        destination: args.destination,
    };
    let result = tier1::restore::export::restore_from_export(&opts).map(|outcome| {
        tier1::cli::print_json(&outcome);
        tier1::Exit::Ok
    });
    tier1::cli::finish("tier1-restore", result)
}

fn run(args: Args) -> Result<tier1::Exit, RestoreError> {
    let spec =
        tier1::cli::store_spec(args.store).map_err(|e| RestoreError::Invalid(e.to_string()))?;
    let artifact_prefix = tier1::artifacts::ArtifactPrefix::parse(&args.artifact_prefix)
        .map_err(RestoreError::Invalid)?;
    let cfg = StoreConfig {
        repository: args.repository.unwrap_or_default(),
        api_url: args.api_url,
        now: args.now,
    };
    let store = open_store(&spec, &cfg)?;
    let opts = RestoreOptions {
        repository: store.repository().to_string(),
        artifact_prefix,
        workflow: args.workflow,
        branch: args.branch.unwrap_or_default(),
        current_run_id: args.current_run_id.filter(|_| !args.include_current_run),
        destination: args.destination,
        allow_bootstrap: args.allow_bootstrap,
        allow_anchor_renewal: args.allow_anchor_renewal,
    };
    let outcome = tier1::restore::restore(store.as_ref(), &opts)?;
    tier1::cli::print_json(&outcome);
    Ok(tier1::Exit::Ok)
}

fn main() -> ExitCode {
    tier1::cli::init();
    let mut args = Args::parse();
    if let Some(export) = args.from_export.take() {
        return from_export(args, export);
    }
    tier1::cli::finish("tier1-restore", run(args))
}
