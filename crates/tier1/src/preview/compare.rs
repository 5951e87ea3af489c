//! The preview itself: restore into a scratch directory, run and compare there, write the outputs
//! and the step summary.

use super::error::io_err;
use super::outputs::write_outputs;
use super::rows::Counts;
use super::{PreviewError, PreviewOutcome, PreviewRequest, STEP_SUMMARY_MAX_CHARS, markdown, rows};
use crate::github::comments::COMMENT_BODY_MAX_CHARS;
use crate::restore::{RestoreOptions, RestoreOutcome};
use crate::run::RunRequest;
use crate::store::ArtifactStore;
use std::path::{Path, PathBuf};

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
    // 1. The branch, and an output that is empty and apart from the store.
    check_request(store, req)?;
    // 2. The branch's canonical history restored into a scratch directory; the run compared there.
    let scratch = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("preview"))
        .tempdir()
        .map_err(io_err(&std::env::temp_dir()))?;
    let history_root = scratch.path().join("history");
    let restored = restore_history(store, req, &history_root)?;
    let ran = crate::run::run_and_compare(&run_request(req, history_root, scratch.path()))?;
    let anchor = ran.anchor.as_ref().ok_or_else(|| {
        PreviewError::Invalid(format!(
            "the restored history of branch {} has no anchor to compare with",
            req.branch
        ))
    })?;
    // 3. The rows, the notes, the comment and the step summary.
    let targets = rows::rows(&ran.summary, anchor, &ran.comparison);
    let notes = notes(
        restored.anchor_renewal_required,
        restored.evidence_artifact_name.as_deref(),
    );
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
    let step_summary = step_summary(&markdown::comment(&ctx, STEP_SUMMARY_MAX_CHARS).body);
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
    // 4. The outputs written, then the step summary and the step's outputs.
    write_outputs(&req.output, &outcome, &ran.comparison, &comment.body)?;
    drop(scratch);
    let _ = crate::gha::step_summary(&step_summary);
    let _ = crate::gha::set_output("verdict", verdict(outcome.gate.passed));
    let _ = crate::gha::set_output("output", &outcome.output);
    Ok(outcome)
}

/// The branch is named, and the output is absent or empty and apart from the store's own files;
/// stale staging beside it goes.
fn check_request(store: &dyn ArtifactStore, req: &PreviewRequest<'_>) -> Result<(), PreviewError> {
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
    Ok(())
}

/// The branch's canonical history of the class restored into `history_root` (never a bootstrap).
fn restore_history(
    store: &dyn ArtifactStore,
    req: &PreviewRequest<'_>,
    history_root: &Path,
) -> Result<RestoreOutcome, PreviewError> {
    crate::restore::restore(
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
            destination: history_root.to_path_buf(),
            allow_bootstrap: false,
            // A preview compares with the anchor the nightly uses; renewing it is the nightly's
            // business, so an anchor due for renewal is reported, not refused.
            allow_anchor_renewal: true,
        },
    )
    .map_err(|source| PreviewError::Restore {
        branch: req.branch.clone(),
        source,
    })
}

/// The run of the preview: one pass as an anchor candidate, its evidence under `scratch`.
fn run_request<'a>(
    req: &PreviewRequest<'a>,
    history_root: PathBuf,
    scratch: &Path,
) -> RunRequest<'a> {
    RunRequest {
        suite: req.suite,
        suite_source: req.suite_source.clone(),
        profile: req.profile.clone(),
        run_id: req.run_id.clone(),
        history_root,
        evidence_root: scratch.join("runs"),
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
    }
}

/// The preview's notes: the anchor's evidence due for renewal (`renewal_required`), named by its
/// artifact.
fn notes(renewal_required: Option<bool>, evidence_artifact: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    if renewal_required == Some(true) {
        notes.push(format!(
            "{}: the anchor's evidence is 60 days old or more; the nightly needs a protected renewal before it expires at 90 days.",
            evidence_artifact.unwrap_or("the anchor evidence")
        ));
    }
    notes
}

/// The step summary: the comment without its marker (made within the step summary's limit).
fn step_summary(whole: &str) -> String {
    whole
        .strip_prefix(markdown::MARKER)
        .unwrap_or(whole)
        .trim_start()
        .to_string()
}

/// The step's `verdict` output.
fn verdict(passed: bool) -> &'static str {
    if passed { "pass" } else { "fail" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_rows() {
        let renewal = |name: &str| {
            format!(
                "{name}: the anchor's evidence is 60 days old or more; the nightly needs a protected renewal before it expires at 90 days."
            )
        };
        let rows: [(Option<bool>, Option<&str>, Vec<String>); 5] = [
            (None, None, vec![]),
            (Some(false), Some("tier1-evidence-7-1"), vec![]),
            (None, Some("tier1-evidence-7-1"), vec![]),
            (
                Some(true),
                Some("tier1-evidence-7-1"),
                vec![renewal("tier1-evidence-7-1")],
            ),
            (Some(true), None, vec![renewal("the anchor evidence")]),
        ];
        for (required, name, want) in rows {
            assert_eq!(notes(required, name), want, "{required:?} {name:?}");
        }
    }

    #[test]
    fn step_summary_and_verdict_rows() {
        let marked = format!("{}\n\n## Preview", markdown::MARKER);
        for (whole, want) in [
            (marked.as_str(), "## Preview"),
            ("## Preview", "## Preview"),
            ("  x", "x"),
            ("", ""),
        ] {
            assert_eq!(step_summary(whole), want, "{whole:?}");
        }
        assert_eq!((verdict(true), verdict(false)), ("pass", "fail"));
    }
}
