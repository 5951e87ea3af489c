//! The exit verdict of a run: what the run step knows ([`RunOutcome`]) and every failing
//! condition it leads to ([`Verdict`]), fail closed.

use super::Check;
use super::acceptance::comparison_blockers;
use crate::exit::Exit;
use crate::history::model::{RegressionSummary, Summary};
use serde::Serialize;

/// What the run step knows when it decides its exit code (reference `_tier1_result_failure_count`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunOutcome<'a> {
    /// The run summary (None when it could not be built).
    pub(crate) summary: Option<&'a Summary>,
    /// The final comparison, after rechecks (None when it could not be computed).
    pub(crate) comparison: Option<&'a RegressionSummary>,
    /// `execution.total_failed`: benchmark executions that failed.
    pub(crate) execution_failed: u32,
    /// The history failed its integrity checks.
    pub(crate) history_integrity_failed: bool,
    /// The gate's `run_accepted`.
    pub(crate) run_accepted: bool,
}

/// The exit verdict: every failing condition, fail closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Verdict {
    /// True when there are no failures.
    pub(crate) passed: bool,
    /// One line per failing condition.
    pub(crate) failures: Vec<String>,
}

impl Verdict {
    /// `Exit::Ok` when passed, else `Exit::Gate`.
    pub(crate) fn exit(&self) -> Exit {
        if self.passed { Exit::Ok } else { Exit::Gate }
    }
}

/// The verdict of a run (`baseline_eligible: false` on an accepted run still passes).
pub(crate) fn verdict(outcome: &RunOutcome<'_>) -> Verdict {
    let mut c = Check::default();
    match outcome.summary {
        None => c.fail("the run summary is missing"),
        Some(s) => {
            let a = &s.summary;
            c.require(a.target_count > 0, || "summary.target_count is 0".into());
            for (field, n) in [
                ("failed", a.failed),
                ("skipped", a.skipped),
                ("missing", a.missing),
            ] {
                c.require(n == 0, || format!("summary.{field} is {n}, expected 0"));
            }
        }
    }
    let ef = outcome.execution_failed;
    c.require(ef == 0, || {
        format!("execution.total_failed is {ef}, expected 0")
    });
    match outcome.comparison {
        None => c.fail("the comparison against the anchor is missing"),
        Some(cmp) => c.absorb(comparison_blockers(cmp)),
    }
    c.require(!outcome.history_integrity_failed, || {
        "the history failed integrity checks".into()
    });
    c.require(outcome.run_accepted, || "run_accepted is false".into());
    Verdict {
        passed: c.passed(),
        failures: c.reasons,
    }
}
