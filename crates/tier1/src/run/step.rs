//! The producer step: refuse invalid history, measure, compare, recheck, decide the gate, append
//! the candidate run.

use super::execute::execute;
use super::{Ran, RunError, RunOutcome, RunRequest, build_summary, report, side_by_side, timings};
use crate::bench::harness::HarnessError;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, Summary};
use crate::history::package::{IndexDoc, load_run};
use crate::history_check::validate_history_root;
use crate::recheck;
use crate::regress;
use crate::regress::noise::NoiseHistory;
use std::path::Path;

/// Run the producer step; see the module docs. In Actions it also writes the step summary.
pub fn run(req: &RunRequest<'_>) -> Result<RunOutcome, RunError> {
    let ran = run_and_compare(req)?;
    let _ = crate::gha::step_summary(&report::step_summary(
        &ran.outcome,
        &ran.summary,
        &ran.comparison,
    ));
    Ok(ran.outcome)
}

/// [`run`] without the step summary, returning the summaries and the comparison as well (the
/// preview reports them in its own words).
pub(crate) fn run_and_compare(req: &RunRequest<'_>) -> Result<Ran, RunError> {
    let night = side_by_side::NightBudget::start(req);
    let anchor = preflight(req)?;
    // Leftovers of killed runs: in the roots this run writes and the temporary directory.
    crate::fsx::stale::tidy([
        req.evidence_root.clone(),
        req.history_root.clone(),
        std::env::temp_dir(),
    ]);
    let passes = anchor_passes(req, anchor.is_none());
    crate::gha::group(&format!("Tier-1 suite: profile {}", req.profile));
    if passes > 1 {
        tracing::info!(
            passes,
            "this run may become the anchor: every target is measured in {passes} passes, pooled"
        );
    }
    let results = execute(req, &req.run_id, &[], None, passes);
    crate::gha::endgroup();
    let (results, pass_seconds) = results?;
    let mut recheck_seconds = Vec::new();
    let summary = build_summary(
        req.suite,
        &results,
        &req.git,
        req.evidence_artifact_name.as_deref(),
    )?;
    let noise = match &anchor {
        Some(_) => NoiseHistory::for_run(&req.history_root, req.suite, &summary)?,
        None => NoiseHistory::default(),
    };
    let th = req.suite.threshold_book();
    let first = regress::compare_in(&summary, anchor.as_ref(), &th, &noise)?;
    let mut evidence_dirs = vec![req.run_id.clone()];
    let comparison = match &anchor {
        Some(anchor) => {
            let every = |_: &str| true;
            let c = super::confirm_night::recheck_and_confirm(
                req,
                first,
                &summary,
                anchor,
                &noise,
                &night,
                &every,
                &mut recheck_seconds,
            )?;
            evidence_dirs.extend(
                c.checked
                    .iter()
                    .map(|r| recheck::recheck_run_id(&req.run_id, &r.key)),
            );
            // The side-by-side evidence lies inside the run's own directory
            // (`<run_id>/sidebyside/`).
            c.comparison
        }
        None => first,
    };
    let timings = timings::collect(
        &pass_seconds,
        &recheck_seconds,
        comparison.side_by_side.as_ref(),
    );
    super::decide::decide(super::decide::Measured {
        suite: req.suite,
        suite_source: req.suite_source.clone(),
        profile: req.profile.clone(),
        run_id: req.run_id.clone(),
        history_root: &req.history_root,
        evidence_root: &req.evidence_root,
        anchor_candidate: req.anchor_candidate,
        results,
        timings,
        summary,
        anchor,
        comparison,
        evidence_dirs,
    })
}

/// Refuse invalid history and existing run ids or directories; return the anchor's summary.
pub(super) fn preflight(req: &RunRequest<'_>) -> Result<Option<Summary>, RunError> {
    if !crate::fsx::is_safe_run_id(&req.run_id) {
        return Err(RunError::Harness(HarnessError::BadRunId(
            req.run_id.clone(),
        )));
    }
    if !req.allow_dirty
        && let Some(message) = req.git.dirty_message(&req.repo_root)
    {
        return Err(RunError::DirtyCheckout(message));
    }
    let history = if req.history_root.join(INDEX_FILE).is_file() {
        Some(validate_history_root(&req.history_root).map_err(RunError::InvalidHistory)?)
    } else {
        None
    };
    let exists = |p: &Path| p.exists().then(|| p.display().to_string());
    if let Some(p) = exists(&req.history_root.join(&req.run_id))
        .or_else(|| exists(&req.evidence_root.join(&req.run_id)))
    {
        return Err(RunError::Exists(format!(
            "{p}: run {:?} already exists; refusing to overwrite",
            req.run_id
        )));
    }
    let Some(history) = history else {
        return Ok(None);
    };
    if history.doc.contains_run(&req.run_id) {
        return Err(RunError::Exists(format!(
            "{}: run {:?} is already in the index",
            req.history_root.join(INDEX_FILE).display(),
            req.run_id
        )));
    }
    anchor_summary(&req.history_root, history.latest_anchor.as_ref())
}

/// The summary of `anchor` (the latest eligible anchor of the validated history at `root`).
pub(crate) fn anchor_summary(
    root: &Path,
    anchor: Option<&crate::history_check::AnchorRef>,
) -> Result<Option<Summary>, RunError> {
    let Some(anchor) = anchor else {
        return Ok(None);
    };
    let doc =
        IndexDoc::load(root)?.ok_or_else(|| HistoryError::structural(INDEX_FILE, "disappeared"))?;
    let row = doc.row(&anchor.run_id).ok_or_else(|| {
        HistoryError::structural(INDEX_FILE, format!("anchor {} has no row", anchor.run_id))
    })?;
    Ok(Some(load_run(root, row)?.summary))
}

/// How many passes this run measures in: the profile's `anchor_passes` when the run may become
/// the anchor (no anchor yet, or a candidate for protected promotion), else one.
pub(super) fn anchor_passes(req: &RunRequest<'_>, no_anchor: bool) -> u32 {
    if let Some(n) = req.passes {
        return n.max(1);
    }
    let profile = req.suite.profile(&req.profile);
    match profile {
        Some(p) if no_anchor || req.anchor_candidate => p.anchor_passes,
        _ => 1,
    }
}
