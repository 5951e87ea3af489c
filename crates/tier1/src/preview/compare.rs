//! The preview itself: restore into a scratch directory, run and compare there, write the outputs
//! and the step summary.

use super::error::io_err;
use super::outputs::write_outputs;
use super::rows::Counts;
use super::{PreviewError, PreviewOutcome, PreviewRequest, STEP_SUMMARY_MAX_CHARS, markdown, rows};
use crate::github::comments::COMMENT_BODY_MAX_CHARS;
use crate::restore::RestoreOptions;
use crate::run::RunRequest;
use crate::store::ArtifactStore;
use std::path::Path;

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
    crate::fsx::stale::tidy_beside(&[&req.output]);
    let scratch = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("preview"))
        .tempdir()
        .map_err(io_err(&std::env::temp_dir()))?;
    let history_root = scratch.path().join("history");
    let restored = crate::restore::restore(
        store,
        &RestoreOptions {
            repository: req.repository.clone(),
            artifact_prefix: crate::suite::class_prefix(
                &req.artifact_prefix,
                req.runner_class.as_deref(),
            )
            .map_err(PreviewError::Invalid)?,
            runner_class: req.runner_class.clone(),
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
        runner_class: req.runner_class.clone(),
        shard: None,
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
