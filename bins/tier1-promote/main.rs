//! `tier1-promote`: the protected promotion that ratifies a candidate run as the canonical history
//! anchor after every check of the reference contract. See docs/tier1-promote.md.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::Exit;
use tier1::promote::{PromoteError, PromoteRequest, inputs, promote, reviews};
use tier1::store::github::GithubStore;

/// Ratify the candidate's newest run as the canonical anchor.
#[derive(Parser, Debug)]
#[command(name = "tier1-promote", version, about)]
#[command(mut_arg("run_id", tier1::cli::tier1_run_id_env))]
struct Args {
    /// The immutable candidate history tree.
    #[arg(long, env = "TIER1_HISTORY_ROOT")]
    history_root: PathBuf,
    /// The evidence tree (`<run_id>/manifest.json`, ...).
    #[arg(
        long,
        env = "TIER1_EVIDENCE_ROOT",
        required_unless_present = "evidence_archive",
        conflicts_with = "evidence_archive"
    )]
    evidence_root: Option<PathBuf>,
    /// The packed evidence file as downloaded (`archive: false`): its digest must equal
    /// --expected-evidence-digest before it is safely extracted and checked.
    #[arg(long, env = "TIER1_EVIDENCE_ARCHIVE")]
    evidence_archive: Option<PathBuf>,
    /// Read the protected environment's approvals of this workflow run from the GitHub API and
    /// record the approving reviewers; refused when the environment has no required reviewers,
    /// when a record is not `approved`, or when only the requester approved.
    #[arg(long, value_name = "RUN_ID")]
    approvals_from_run: Option<u64>,
    /// The environment whose approval counts.
    #[arg(long, default_value = tier1::promote::inputs::ACCEPTANCE_ENVIRONMENT)]
    approval_environment: String,
    // The REST base URL and owner/name for --approvals-from-run.
    #[command(flatten)]
    github: tier1::cli::GithubArgs,
    /// The run to ratify (the candidate's newest run; the variable `RUN_ID` is read when
    /// `TIER1_RUN_ID` is not set).
    #[arg(long, env = "TIER1_RUN_ID")]
    run_id: String,
    /// Who requested the promotion: who started this attempt of the run (on a re-run
    /// `$GITHUB_ACTOR` is still the run's first actor, `$GITHUB_TRIGGERING_ACTOR` who re-ran it).
    #[arg(long, env = "GITHUB_TRIGGERING_ACTOR")]
    requester: String,
    /// Public acceptance note.
    #[arg(long, env = "TIER1_ACCEPTANCE_NOTE")]
    note: String,
    /// Actions run URL of this promotion.
    #[arg(long, env = "TIER1_WORKFLOW_RUN")]
    workflow_run: String,
    /// The commit the evidence must come from.
    #[arg(long, env = "TIER1_EXPECTED_GIT_COMMIT")]
    expected_git_commit: String,
    /// The evidence artifact name (`tier1-evidence-<suffix>`).
    #[arg(long, env = "TIER1_EXPECTED_EVIDENCE_ARTIFACT")]
    expected_evidence_artifact: String,
    /// The evidence artifact digest (`sha256:<hex>` or bare hex).
    #[arg(long, env = "TIER1_EXPECTED_EVIDENCE_DIGEST")]
    expected_evidence_digest: String,
    /// Live canonical history (required unless --allow-bootstrap).
    #[arg(long, env = "TIER1_CANONICAL_HISTORY_ROOT")]
    canonical_history_root: Option<PathBuf>,
    /// Output root for the ratified tree; must not exist or be empty.
    #[arg(long, env = "TIER1_OUTPUT_HISTORY_ROOT")]
    output_history_root: PathBuf,
    #[command(flatten)]
    suite: tier1::cli::SuiteFileArg,
    /// Allow the audited bootstrap reset (no live history, or a new suite version).
    #[arg(long, env = "TIER1_ALLOW_BOOTSTRAP")]
    allow_bootstrap: bool,
    /// A reviewer who approved the protected environment (repeatable).
    #[arg(long = "reviewer")]
    reviewers: Vec<String>,
    /// Accept `local://<store>/actions/runs/<n>` as the workflow run (local main job).
    #[arg(long, env = "TIER1_ALLOW_LOCAL_WORKFLOW_RUN")]
    allow_local_workflow_run: bool,
    /// The runner class ratified (docs/sharding.md): the run and the live history must be of it
    /// (absent: the unnamed class).
    #[arg(long, env = "TIER1_RUNNER_CLASS", value_name = "NAME")]
    runner_class: Option<String>,
    /// A directory holding the shard packages of a combined run (docs/sharding.md §5), as
    /// download-artifact leaves them (`DIR/<name>` or `DIR/<name>/<name>`), found by name.
    #[arg(long, value_name = "DIR")]
    shard_archives: Option<PathBuf>,
}

fn main() -> ExitCode {
    tier1::cli::init();
    let args = match tier1::cli::parse::<Args>("tier1-promote") {
        Ok(a) => a,
        Err(code) => return code,
    };
    tier1::cli::finish("tier1-promote", run(args))
}

fn run(a: Args) -> Result<Exit, PromoteError> {
    let mut reviewers = a.reviewers;
    if let Some(run_id) = a.approvals_from_run {
        let store = GithubStore::from_env(Some(&a.github.api_url), a.github.repository.as_deref())?;
        reviewers.extend(reviews::reviewers_from_run(
            &store,
            run_id,
            &a.approval_environment,
            &a.requester,
        )?);
        reviewers.sort();
        reviewers.dedup();
    }
    let unpacked = tempfile::Builder::new()
        .prefix(&tier1::fsx::stale::temp_prefix("promote"))
        .tempdir()
        .map_err(|source| PromoteError::Io {
            path: "<tmp>".into(),
            source,
        })?;
    let evidence_root = match (a.evidence_root, &a.evidence_archive) {
        (Some(root), _) => root,
        (None, Some(archive)) => {
            let dest = unpacked.path().join("evidence");
            inputs::unpack_evidence_archive(archive, &a.expected_evidence_digest, &dest)?;
            dest
        }
        (None, None) => {
            return Err(PromoteError::Invalid(
                "--evidence-root or --evidence-archive is required".into(),
            ));
        }
    };
    let req = PromoteRequest {
        history_root: a.history_root,
        evidence_root,
        run_id: a.run_id,
        requester: a.requester,
        note: a.note,
        workflow_run: a.workflow_run,
        expected_git_commit: a.expected_git_commit,
        expected_evidence_artifact: a.expected_evidence_artifact,
        expected_evidence_digest: a.expected_evidence_digest,
        canonical_history_root: a.canonical_history_root,
        output_history_root: a.output_history_root,
        suite_config: a.suite.suite_config,
        repo_root: ".".into(),
        allow_bootstrap: a.allow_bootstrap,
        reviewers,
        allow_local_workflow_run: a.allow_local_workflow_run,
        runner_class: a.runner_class.filter(|c| !c.is_empty()),
        shard_archives: match &a.shard_archives {
            Some(dir) => inputs::files_in(dir)?,
            None => Vec::new(),
        },
    };
    let out = promote(&req)?;
    tier1::cli::print_json(&out);
    Ok(Exit::Ok)
}
