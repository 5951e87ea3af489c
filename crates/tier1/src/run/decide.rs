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

/// Decide the gate, write the report, append the run to the candidate history: the run's
/// acceptance and anchor eligibility, its report, its evidence checked as promotion would check
/// it, its row appended, its failures logged, its verdict, and the outcome printed as JSON.
pub(crate) fn decide(m: Measured<'_>) -> Result<Ran, RunError> {
    let acceptance = gate::run_acceptance(&m.summary, &m.comparison, false, false);
    let eligibility = gate::baseline_eligibility(
        &m.summary,
        &m.comparison,
        acceptance.passed(),
        !m.anchor_candidate,
    );
    report::write(
        &m.evidence_root.join(&m.run_id),
        &m.summary,
        &m.comparison,
        &m.results,
    )?;
    // Evidence its own promotion would refuse is refused here, before the run is recorded.
    refuse_unpackable(m.evidence_root, &m.evidence_dirs)?;
    let row = candidate::append(
        m.history_root,
        &candidate::CandidateRun {
            summary: &m.summary,
            regression: &m.comparison,
            run_accepted: acceptance.passed(),
            baseline_eligible: eligibility.passed(),
        },
    )?;
    let failures = failures(&m.results);
    for f in &failures {
        tracing::error!(target = %f.key, status = %f.status, "{}", f.message);
    }
    let verdict = gate::verdict(&gate::RunOutcome {
        summary: Some(&m.summary),
        comparison: Some(&m.comparison),
        execution_failed: execution_failed(&m.results),
        history_integrity_failed: false,
        run_accepted: acceptance.passed(),
    });
    let gated = Gated {
        acceptance,
        eligibility,
        verdict,
        failures,
        summary_path: row.summary_path,
    };
    let outcome = outcome(&m, gated);
    verdicts::log(&m.comparison);
    super::timings::log(&outcome.timings);
    Ok(Ran {
        outcome,
        summary: m.summary,
        anchor: m.anchor,
        comparison: m.comparison,
    })
}

/// Refuses evidence its own promotion would refuse (the run's evidence directories removed).
fn refuse_unpackable(evidence_root: &Path, evidence_dirs: &[String]) -> Result<(), RunError> {
    if let Err(e) = crate::evidence::packable::check(evidence_root, evidence_dirs) {
        for d in evidence_dirs {
            let _ = std::fs::remove_dir_all(evidence_root.join(d));
        }
        return Err(e.into());
    }
    Ok(())
}

/// Every target of `results` that did not succeed, with its status and message.
fn failures(results: &ResultsFile) -> Vec<TargetFailed> {
    results
        .targets
        .iter()
        .filter(|t| t.status != result::status::SUCCEEDED)
        .map(|t| TargetFailed {
            key: t.key.clone(),
            target: t.target.clone(),
            status: t.status.clone(),
            message: t.message.clone().unwrap_or_default(),
        })
        .collect()
}

/// How many targets of `results` failed to execute (the verdict's execution failures).
fn execution_failed(results: &ResultsFile) -> u32 {
    results
        .targets
        .iter()
        .filter(|t| failed_to_execute(&t.status))
        .count() as u32
}

/// Whether a target with `status` failed to execute: it errored or ran out of time (a target
/// that ran and missed its goal executed).
fn failed_to_execute(status: &str) -> bool {
    status == result::status::FAILED_ERROR || status == result::status::FAILED_TIMEOUT
}

/// What the gate decided of a run, and where its row's summary is.
struct Gated {
    acceptance: gate::Check,
    eligibility: gate::Check,
    verdict: gate::Verdict,
    failures: Vec<TargetFailed>,
    summary_path: String,
}

/// The outcome printed for run `m` as `gated` decided it, with its ending.
fn outcome(m: &Measured<'_>, gated: Gated) -> RunOutcome {
    let comparison = &m.comparison;
    let outcome = RunOutcome {
        run_id: m.run_id.clone(),
        suite: SuiteUsed {
            name: m.suite.suite_name.clone(),
            version: m.suite.version,
            source: m.suite_source.clone(),
        },
        profile: m.profile.clone(),
        backend: m.results.backend.clone(),
        summary: m.summary.summary.clone(),
        failures: gated.failures,
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
        run_accepted: gated.acceptance.passed(),
        run_accepted_reasons: gated.acceptance.reasons,
        baseline_eligible: gated.eligibility.passed(),
        baseline_eligible_reasons: gated.eligibility.reasons,
        verdict: gated.verdict,
        summary_path: gated.summary_path,
        evidence_dirs: m.evidence_dirs.clone(),
        targets: verdicts::targets(&m.summary, comparison),
        timings: m.timings.clone(),
        ending: Default::default(),
    };
    RunOutcome {
        ending: super::ending::Ending::of(&outcome.targets, comparison.baseline_run_id.as_deref()),
        ..outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_and_timeouts_count_as_failures_to_execute() {
        for (status, failed) in [
            (result::status::FAILED_ERROR, true),
            (result::status::FAILED_TIMEOUT, true),
            (result::status::SUCCEEDED, false),
            (result::status::FAILED_VERIFICATION, false),
        ] {
            assert_eq!(failed_to_execute(status), failed, "{status}");
        }
    }
}
