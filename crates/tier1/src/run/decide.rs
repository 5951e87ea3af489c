//! The end of a measured run, one runner's or a sharded night's combined one: the release gate
//! on the whole comparison, the report, the run appended to the candidate history, and the
//! outcome printed as JSON.

use super::{Ran, RunError, RunOutcome, SuiteUsed, TargetFailed, candidate, report, verdicts};
use crate::bench::result::{self, ResultsFile};
use crate::gate;
use crate::history::model::{RegressionSummary, Summary};
use crate::suite::{Suite, SuiteSource};
use std::path::Path;

/// A run measured and compared, to be decided and recorded.
pub(crate) struct Measured<'a> {
    /// The suite.
    pub(crate) suite: &'a Suite,
    /// How it was chosen.
    pub(crate) suite_source: SuiteSource,
    /// The profile.
    pub(crate) profile: String,
    /// The run id.
    pub(crate) run_id: String,
    /// The candidate history (appended in place).
    pub(crate) history_root: &'a Path,
    /// The evidence root (`<run_id>/report.md` is written there).
    pub(crate) evidence_root: &'a Path,
    /// The run may not elect itself as the first anchor.
    pub(crate) anchor_candidate: bool,
    /// The results measured.
    pub(crate) results: ResultsFile,
    /// Its summary.
    pub(crate) summary: Summary,
    /// The anchor's summary.
    pub(crate) anchor: Option<Summary>,
    /// The final comparison.
    pub(crate) comparison: RegressionSummary,
    /// Evidence directories written.
    pub(crate) evidence_dirs: Vec<String>,
    /// Each measured target's seconds by phase (empty where not measured here).
    pub(crate) timings: Vec<super::timings::TargetTimings>,
}

/// Decide the gate, write the report, append the run to the candidate history.
pub(crate) fn decide(m: Measured<'_>) -> Result<Ran, RunError> {
    let Measured {
        results,
        summary,
        anchor,
        comparison,
        evidence_dirs,
        timings,
        ..
    } = m;
    let acceptance = gate::run_acceptance(&summary, &comparison, false, false);
    let eligibility = gate::baseline_eligibility(
        &summary,
        &comparison,
        acceptance.passed(),
        !m.anchor_candidate,
    );
    report::write(
        &m.evidence_root.join(&m.run_id),
        &summary,
        &comparison,
        &results,
    )?;
    // Evidence its own promotion would refuse is refused here, before the run is recorded.
    if let Err(e) = crate::evidence::packable::check(m.evidence_root, &evidence_dirs) {
        for d in &evidence_dirs {
            let _ = std::fs::remove_dir_all(m.evidence_root.join(d));
        }
        return Err(e.into());
    }
    let row = candidate::append(
        m.history_root,
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
        run_id: m.run_id.clone(),
        suite: SuiteUsed {
            name: m.suite.suite_name.clone(),
            version: m.suite.version,
            source: m.suite_source,
        },
        profile: m.profile,
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
        timings,
        ending: Default::default(),
    };
    let outcome = RunOutcome {
        ending: super::ending::Ending::of(&outcome.targets, comparison.baseline_run_id.as_deref()),
        ..outcome
    };
    verdicts::log(&comparison);
    super::timings::log(&outcome.timings);
    Ok(Ran {
        outcome,
        summary,
        anchor,
        comparison,
    })
}
