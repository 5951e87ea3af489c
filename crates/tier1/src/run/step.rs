//! The producer step: refuse invalid history, measure, compare, recheck, decide the gate, append
//! the candidate run.

use super::execute::{execute, run_rechecks};
use super::{
    Ran, RunError, RunOutcome, RunRequest, SuiteUsed, TargetFailed, build_summary, candidate,
    report, side_by_side, timings, verdicts,
};
use crate::bench::harness::HarnessError;
use crate::bench::result;
use crate::gate;
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
            let checked = run_rechecks(req, &first, &mut recheck_seconds)?;
            evidence_dirs.extend(
                checked
                    .iter()
                    .map(|r| recheck::recheck_run_id(&req.run_id, &r.key)),
            );
            let rechecked = recheck::apply(first, &summary, anchor, &checked, &th, &noise);
            let suspects = crate::confirmation::suspected(&rechecked, &summary);
            match side_by_side::confirm_suspects(req, &suspects, anchor, &night)? {
                // Its evidence lies inside the run's own directory (`<run_id>/sidebyside/`).
                Some(block) => crate::confirmation::apply(rechecked, &summary, anchor, block),
                None => rechecked,
            }
        }
        None => first,
    };
    let acceptance = gate::run_acceptance(&summary, &comparison, false, false);
    let eligibility = gate::baseline_eligibility(
        &summary,
        &comparison,
        acceptance.passed(),
        !req.anchor_candidate,
    );
    report::write(
        &req.evidence_root.join(&req.run_id),
        &summary,
        &comparison,
        &results,
    )?;
    // Evidence its own promotion would refuse is refused here, before the run is recorded.
    if let Err(e) = crate::evidence::packable::check(&req.evidence_root, &evidence_dirs) {
        for d in &evidence_dirs {
            let _ = std::fs::remove_dir_all(req.evidence_root.join(d));
        }
        return Err(e.into());
    }
    let row = candidate::append(
        &req.history_root,
        &candidate::CandidateRun {
            summary: &summary,
            regression: &comparison,
            run_accepted: acceptance.passed(),
            baseline_eligible: eligibility.passed(),
        },
    )?;
    let failures: Vec<TargetFailed> = results
        .targets
        .iter()
        .filter(|t| t.status != result::status::SUCCEEDED)
        .map(|t| TargetFailed {
            key: t.key.clone(),
            target: t.target.clone(),
            status: t.status.clone(),
            message: t.message.clone().unwrap_or_default(),
        })
        .collect();
    for f in &failures {
        tracing::error!(target = %f.key, status = %f.status, "{}", f.message);
    }
    let execution_failed = results
        .targets
        .iter()
        .filter(|t| {
            t.status == result::status::FAILED_ERROR || t.status == result::status::FAILED_TIMEOUT
        })
        .count() as u32;
    let verdict = gate::verdict(&gate::RunOutcome {
        summary: Some(&summary),
        comparison: Some(&comparison),
        execution_failed,
        history_integrity_failed: false,
        run_accepted: acceptance.passed(),
    });
    let outcome = RunOutcome {
        run_id: req.run_id.clone(),
        suite: SuiteUsed {
            name: req.suite.suite_name.clone(),
            version: req.suite.version,
            source: req.suite_source.clone(),
        },
        profile: req.profile.clone(),
        backend: results.backend.clone(),
        summary: summary.summary.clone(),
        failures,
        baseline_run_id: comparison.baseline_run_id.clone(),
        regressions: comparison.regressions.len(),
        improvements: comparison.improvements.len(),
        anchor_declines: comparison.anchor_declines.len(),
        suppressed_regressions: comparison.suppressed_regressions.len(),
        unknown: comparison.inconclusive.len(),
        held_by_floor: comparison.held_by_floor.len(),
        missing_targets: comparison.missing_targets.len(),
        rechecks: comparison
            .rechecks
            .iter()
            .map(|r| r.recheck_run_id.clone())
            .collect(),
        run_accepted: acceptance.passed(),
        run_accepted_reasons: acceptance.reasons,
        baseline_eligible: eligibility.passed(),
        baseline_eligible_reasons: eligibility.reasons,
        verdict,
        summary_path: row.summary_path,
        evidence_dirs,
        targets: verdicts::targets(&summary, &comparison),
        timings: timings::collect(
            &pass_seconds,
            &recheck_seconds,
            comparison.side_by_side.as_ref(),
        ),
        ending: Default::default(),
    };
    let outcome = RunOutcome {
        ending: super::ending::Ending::of(&outcome.targets, comparison.baseline_run_id.as_deref()),
        ..outcome
    };
    verdicts::log(&comparison);
    timings::log(&outcome.timings);
    Ok(Ran {
        outcome,
        summary,
        anchor,
        comparison,
    })
}

/// Refuse invalid history and existing run ids or directories; return the anchor's summary.
fn preflight(req: &RunRequest<'_>) -> Result<Option<Summary>, RunError> {
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
    let Some(anchor) = history.latest_anchor else {
        return Ok(None);
    };
    let doc = IndexDoc::load(&req.history_root)?
        .ok_or_else(|| HistoryError::structural(INDEX_FILE, "disappeared"))?;
    let row = doc.row(&anchor.run_id).ok_or_else(|| {
        HistoryError::structural(INDEX_FILE, format!("anchor {} has no row", anchor.run_id))
    })?;
    Ok(Some(load_run(&req.history_root, row)?.summary))
}

/// How many passes this run measures in: the profile's `anchor_passes` when the run may become
/// the anchor (no anchor yet, or a candidate for protected promotion), else one.
fn anchor_passes(req: &RunRequest<'_>, no_anchor: bool) -> u32 {
    if let Some(n) = req.passes {
        return n.max(1);
    }
    let profile = req.suite.profile(&req.profile);
    match profile {
        Some(p) if no_anchor || req.anchor_candidate => p.anchor_passes,
        _ => 1,
    }
}
