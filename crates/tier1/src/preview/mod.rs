//! `tier1-compare`: the pull request preview. Restore the default branch's canonical history with
//! every check restore makes into a scratch directory, run the suite on the checked-out commit
//! through `run::run_and_compare` against that scratch copy (so the anchor, the rechecks, the
//! noise history, the detection rule and the gate are the nightly's by construction), and write
//! the comparison: `preview.json` (also on stdout), `regression_summary.{json,md}`, `comment.md`
//! and the step summary, all saying "preview, not canonical". The scratch history and evidence are
//! deleted afterwards: a preview writes no history and uploads nothing.

pub mod markdown;
pub mod post;
pub mod rows;

use crate::bench::backend::Backend;
use crate::evidence::git::GitInfo;
use crate::exit::{Classify, Exit};
use crate::gate::Verdict;
use crate::github::comments::COMMENT_BODY_MAX_CHARS;
use crate::history::model::RegressionSummary;
use crate::restore::{RestoreError, RestoreOptions, RestoreOutcome};
use crate::run::{RunError, RunRequest};
use crate::store::ArtifactStore;
use crate::suite::Suite;
use rows::{Counts, TargetRow};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `preview.json`.
pub const PREVIEW_JSON: &str = "preview.json";
/// The comment body.
pub const COMMENT_MD: &str = "comment.md";
/// The comparison, as the nightly would record it.
pub const REGRESSION_JSON: &str = "regression_summary.json";
/// The comparison in Markdown, titled as a preview.
pub const REGRESSION_MD: &str = "regression_summary.md";
/// Characters of the step summary: GitHub takes at most 1 MiB per step, and a character is at most
/// 4 bytes.
pub const STEP_SUMMARY_MAX_CHARS: usize = 1024 * 1024 / 4;

/// What to preview.
pub struct PreviewRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// How the suite was chosen ([`Suite::discover`]).
    pub suite_source: crate::suite::SuiteSource,
    /// Profile name.
    pub profile: String,
    /// Run id of the preview (safe pattern).
    pub run_id: String,
    /// Backend to measure on.
    pub backend: Arc<dyn Backend>,
    /// Attestation records to embed in the (scratch) manifest.
    pub attestation: Option<Value>,
    /// The checkout.
    pub git: GitInfo,
    /// The checkout's directory.
    pub repo_root: PathBuf,
    /// Artifact prefix of the canonical history (`<prefix>-history-*`).
    pub artifact_prefix: crate::artifacts::ArtifactPrefix,
    /// `owner/name` whose canonical history is restored.
    pub repository: String,
    /// The producer workflow file whose runs hold that history.
    pub workflow: String,
    /// The default branch, whose history is the canonical one.
    pub branch: String,
    /// Output directory (absent or empty).
    pub output: PathBuf,
    /// Link to this workflow run, for the comment.
    pub run_url: Option<String>,
}

impl std::fmt::Debug for PreviewRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewRequest")
            .field("run_id", &self.run_id)
            .field("branch", &self.branch)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// What a preview found, printed as JSON and written as `preview.json`.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewOutcome {
    /// Always "preview, not canonical".
    pub notice: &'static str,
    /// Always false: nothing of a preview is canonical.
    pub canonical: bool,
    /// The preview's run id.
    pub run_id: String,
    /// The checked-out commit.
    pub commit: Option<String>,
    /// Profile.
    pub profile: String,
    /// Backend.
    pub backend: String,
    /// The branch whose canonical history was compared with.
    pub branch: String,
    /// What restore found (the same status `tier1-restore` prints).
    pub restore: RestoreOutcome,
    /// The anchor compared with.
    pub anchor_run_id: String,
    /// The anchor's commit.
    pub anchor_commit: Option<String>,
    /// The nightly gate's verdict on this commit against that anchor.
    pub gate: Verdict,
    /// Counts of the target verdicts.
    pub counts: Counts,
    /// One row per target, most serious first.
    pub targets: Vec<TargetRow>,
    /// Notes about the comparison (anchor due for renewal, ...).
    pub notes: Vec<String>,
    /// Link to the workflow run.
    pub run_url: Option<String>,
    /// The output directory.
    pub output: String,
    /// Characters of `comment.md` (GitHub allows 65,536).
    pub comment_chars: usize,
    /// Table rows in the comment (the rest did not fit).
    pub comment_rows: usize,
}

impl PreviewOutcome {
    /// 0 when the nightly gate would pass this commit, 1 when it would fail.
    pub fn exit(&self) -> Exit {
        self.gate.exit()
    }
}

/// A preview that could not run or could not post. Nothing is written to the output.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// A request value is unusable.
    #[error("{0}")]
    Invalid(String),
    /// The output directory holds data.
    #[error("--output {path}: expected an absent or empty directory, found one with files")]
    OutputNotEmpty {
        /// The directory.
        path: String,
    },
    /// The canonical history could not be restored.
    #[error("restoring the canonical history of branch {branch}: {source}")]
    Restore {
        /// The branch.
        branch: String,
        /// Why.
        source: RestoreError,
    },
    /// The suite run or the comparison failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// GitHub refused or failed.
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for PreviewError {
    fn exit(&self) -> Exit {
        match self {
            PreviewError::Invalid(_) => Exit::Invalid,
            PreviewError::OutputNotEmpty { .. } => Exit::Conflict,
            PreviewError::Restore { source, .. } => source.exit(),
            PreviewError::Run(e) => e.exit(),
            PreviewError::Github(e) => e.exit(),
            PreviewError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PreviewError + '_ {
    move |source| PreviewError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// `YYYYMMDD_HHMMSS_tier1_preview_<sha8>` at the current time.
pub fn default_run_id(commit: Option<&str>) -> String {
    let sha8 = commit.and_then(|c| c.get(..8)).unwrap_or("00000000");
    format!(
        "{}_tier1_preview_{sha8}",
        chrono::Utc::now().format("%Y%m%d_%H%M%S")
    )
}

/// Run the preview; see the module docs.
pub fn preview(
    store: &dyn ArtifactStore,
    req: &PreviewRequest<'_>,
) -> Result<PreviewOutcome, PreviewError> {
    if req.branch.trim().is_empty() {
        return Err(PreviewError::Invalid(
            "--branch: expected the default branch whose canonical history is compared, found an empty value".into(),
        ));
    }
    let output_free = crate::fsx::is_absent_or_empty(&req.output).map_err(io_err(&req.output))?;
    if !output_free {
        return Err(PreviewError::OutputNotEmpty {
            path: req.output.display().to_string(),
        });
    }
    let own = store.own_paths();
    let inputs: Vec<(&str, &Path)> = own.iter().map(|p| ("local store", p.as_path())).collect();
    crate::fsx::check_disjoint(&req.output, &inputs)
        .map_err(|e| PreviewError::Invalid(format!("--output: {e}")))?;
    let scratch = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("preview"))
        .tempdir()
        .map_err(io_err(&std::env::temp_dir()))?;
    let history_root = scratch.path().join("history");
    let restored = crate::restore::restore(
        store,
        &RestoreOptions {
            repository: req.repository.clone(),
            artifact_prefix: req.artifact_prefix.clone(),
            workflow: req.workflow.clone(),
            branch: req.branch.clone(),
            current_run_id: None,
            destination: history_root.clone(),
            allow_bootstrap: false,
            // A preview compares with the anchor the nightly uses; renewing it is the nightly's
            // business, so an anchor due for renewal is reported, not refused.
            allow_anchor_renewal: true,
        },
    )
    .map_err(|source| PreviewError::Restore {
        branch: req.branch.clone(),
        source,
    })?;
    let run_req = RunRequest {
        suite: req.suite,
        suite_source: req.suite_source.clone(),
        profile: req.profile.clone(),
        run_id: req.run_id.clone(),
        history_root,
        evidence_root: scratch.path().join("runs"),
        backend: req.backend.clone(),
        anchor_candidate: true,
        attestation: req.attestation.clone(),
        git: req.git.clone(),
        repo_root: req.repo_root.clone(),
        // A dirty checkout is measured and shown as failing the gate, as the nightly would record it.
        allow_dirty: true,
        evidence_artifact_name: None,
        hook: None,
        passes: Some(1),
    };
    let ran = crate::run::run_and_compare(&run_req)?;
    let anchor = ran.anchor.as_ref().ok_or_else(|| {
        PreviewError::Invalid(format!(
            "the restored history of branch {} has no anchor to compare with",
            req.branch
        ))
    })?;
    let targets = rows::rows(&ran.summary, anchor, &ran.comparison);
    let mut notes = Vec::new();
    if restored.anchor_renewal_required == Some(true) {
        notes.push(format!(
            "{}: the anchor's evidence is 60 days old or more; the nightly needs a protected renewal before it expires at 90 days.",
            restored
                .evidence_artifact_name
                .as_deref()
                .unwrap_or("the anchor evidence")
        ));
    }
    let devices = ran
        .summary
        .environment
        .as_ref()
        .map(|e| e.device_names.clone())
        .unwrap_or_default();
    let ctx = markdown::Context {
        run_id: &req.run_id,
        commit: ran.summary.source_git_commit.as_deref(),
        anchor_run_id: &anchor.run_id,
        anchor_commit: anchor.source_git_commit.as_deref(),
        branch: &req.branch,
        profile: &req.profile,
        devices: &devices,
        run_url: req.run_url.as_deref(),
        gate: &ran.outcome.verdict,
        rows: &targets,
        comparison: &ran.comparison,
        notes: &notes,
    };
    let comment = markdown::comment(&ctx, COMMENT_BODY_MAX_CHARS);
    // The step summary is the comment without its marker, within the step summary's limit.
    let whole = markdown::comment(&ctx, STEP_SUMMARY_MAX_CHARS).body;
    let step_summary = whole
        .strip_prefix(markdown::MARKER)
        .unwrap_or(&whole)
        .trim_start()
        .to_string();
    let outcome = PreviewOutcome {
        notice: markdown::NOTICE,
        canonical: false,
        run_id: req.run_id.clone(),
        commit: ran.summary.source_git_commit.clone(),
        profile: req.profile.clone(),
        backend: ran.outcome.backend.clone(),
        branch: req.branch.clone(),
        restore: restored,
        anchor_run_id: anchor.run_id.clone(),
        anchor_commit: anchor.source_git_commit.clone(),
        gate: ran.outcome.verdict.clone(),
        counts: Counts::of(&targets),
        targets,
        notes,
        run_url: req.run_url.clone(),
        output: req.output.display().to_string(),
        comment_chars: comment.body.chars().count(),
        comment_rows: comment.rows_shown,
    };
    write_outputs(&req.output, &outcome, &ran.comparison, &comment.body)?;
    drop(scratch);
    let _ = crate::gha::step_summary(&step_summary);
    let verdict = if outcome.gate.passed { "pass" } else { "fail" };
    let _ = crate::gha::set_output("verdict", verdict);
    let _ = crate::gha::set_output("output", &outcome.output);
    Ok(outcome)
}

/// Write the four output files through a staged directory renamed into place.
fn write_outputs(
    dir: &Path,
    outcome: &PreviewOutcome,
    comparison: &RegressionSummary,
    comment: &str,
) -> Result<(), PreviewError> {
    let stage = crate::fsx::StagedDir::new(dir).map_err(io_err(dir))?;
    let json = |bytes: Result<Vec<u8>, crate::json::JsonError>, file: &str| {
        bytes.map_err(|e| PreviewError::Io {
            path: dir.join(file).display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })
    };
    let files: [(&str, Vec<u8>); 4] = [
        (
            PREVIEW_JSON,
            json(crate::json::to_pretty(outcome, PREVIEW_JSON), PREVIEW_JSON)?,
        ),
        (
            REGRESSION_JSON,
            json(
                crate::json::to_pretty(comparison, REGRESSION_JSON),
                REGRESSION_JSON,
            )?,
        ),
        (
            REGRESSION_MD,
            crate::regress_md::render_titled(comparison, markdown::SUMMARY_TITLE).into_bytes(),
        ),
        (COMMENT_MD, comment.as_bytes().to_vec()),
    ];
    for (name, bytes) in files {
        let p = stage.path().join(name);
        crate::fsx::write_atomic(&p, &bytes).map_err(io_err(&dir.join(name)))?;
    }
    stage.commit().map_err(io_err(dir))?;
    Ok(())
}
