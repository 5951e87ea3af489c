//! `tier1-restore`: restore the latest canonical tier-1 history (or report bootstrap) into an empty
//! destination, from the GitHub Actions artifact store or a local store, or offline from a
//! `tier1-export` archive (`--from-export`).

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::restore::{RestoreError, RestoreOptions};
use tier1::store::open_store;

/// `--repository`, as restore reads it.
const REPOSITORY_HELP: &str = "`owner/name` of the repository whose history is restored (a local store: default and only accepted value is the repository the store models, `local/<dir name>` for tier1-nightly's)";

/// Restore canonical tier-1 history from workflow artifacts (fail closed).
#[derive(Debug, Parser)]
#[command(name = "tier1-restore", version)]
#[command(mut_arg("repository", |a| a.help(REPOSITORY_HELP)))]
struct Args {
    #[command(flatten)]
    github: tier1::cli::GithubArgs,
    #[command(flatten)]
    history: tier1::cli::HistoryArtifactsArgs,
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
    /// Print the bootstrap status instead of failing when no usable history exists.
    #[arg(long)]
    allow_bootstrap: bool,
    /// Allow anchor evidence 60 days old or older (protected renewal).
    #[arg(long)]
    allow_anchor_renewal: bool,
    #[command(flatten)]
    store: tier1::cli::StoreArgs,
    /// Restore offline from a `tier1-export` archive instead of the artifact store.
    #[arg(long, value_name = "FILE")]
    from_export: Option<PathBuf>,
    /// The export's expected SHA-256 (hex or `sha256:<hex>`; default: `FILE.sha256` when present).
    #[arg(long, value_name = "HEX", requires = "from_export")]
    sha256: Option<String>,
    /// The runner class whose history is restored (docs/sharding.md): artifacts are named with
    /// the class's prefix `<artifact-prefix>-<class>`, and a package (or, with `--from-export`, an
    /// export) whose index names another class is refused (exit 4).
    #[arg(long, env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    runner_class: Option<String>,
}

/// `--from-export`: the export verified and restored offline.
fn from_export(args: Args, export: PathBuf) -> ExitCode {
    let opts = tier1::restore::export::ExportRestoreOptions {
        export,
        sha256: args.sha256,
        destination: args.destination,
        runner_class: args.runner_class.filter(|c| !c.is_empty()),
    };
    let result = tier1::restore::export::restore_from_export(&opts).map(|outcome| {
        tier1::cli::print_json(&outcome);
        tier1::Exit::Ok
    });
    tier1::cli::finish("tier1-restore", result)
}

fn run(args: Args) -> Result<tier1::Exit, RestoreError> {
    let spec = args
        .store
        .spec()
        .map_err(|e| RestoreError::Invalid(e.to_string()))?;
    let store = open_store(&spec, &args.store.config(&args.github))?;
    let class = args.runner_class.clone().filter(|c| !c.is_empty());
    let artifact_prefix =
        tier1::suite::class_prefix(&args.history.artifact_prefix, class.as_deref())
            .map_err(RestoreError::Invalid)?;
    let opts = RestoreOptions {
        repository: store.repository().to_string(),
        artifact_prefix,
        workflow: args.history.workflow,
        branch: args.branch.unwrap_or_default(),
        current_run_id: args.current_run_id.filter(|_| !args.include_current_run),
        destination: args.destination,
        allow_bootstrap: args.allow_bootstrap,
        allow_anchor_renewal: args.allow_anchor_renewal,
        runner_class: class,
    };
    let outcome = tier1::restore::restore(store.as_ref(), &opts)?;
    tier1::cli::print_json(&outcome);
    Ok(tier1::Exit::Ok)
}

fn main() -> ExitCode {
    tier1::cli::init();
    let mut args = match tier1::cli::parse::<Args>("tier1-restore") {
        Ok(args) => args,
        Err(code) => return code,
    };
    if let Some(export) = args.from_export.take() {
        return from_export(args, export);
    }
    tier1::cli::finish("tier1-restore", run(args))
}
