//! What a run decided: the printed outcome, its failures and suite, and everything it compared.

use super::verdicts;
use crate::exit::Exit;
use crate::gate::Verdict;
use crate::history::model::{Aggregates, RegressionSummary, Summary};
use crate::suite::SuiteSource;
use serde::Serialize;

/// What a run decided, printed as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The run id.
    pub(crate) run_id: String,
    /// The suite run: name, version and how it was chosen.
    pub(crate) suite: SuiteUsed,
    /// Profile.
    pub(crate) profile: String,
    /// Backend.
    pub(crate) backend: String,
    /// Counts and aggregates.
    pub(crate) summary: Aggregates,
    /// Every target that did not succeed, with its status and why.
    pub(crate) failures: Vec<TargetFailed>,
    /// The anchor compared against.
    pub(crate) baseline_run_id: Option<String>,
    /// Confirmed regressions.
    pub(crate) regressions: usize,
    /// Improvements.
    pub(crate) improvements: usize,
    /// Anchor declines (hold advancement, do not block).
    pub(crate) anchor_declines: usize,
    /// Regressions cleared by recheck.
    pub(crate) suppressed_regressions: usize,
    /// Targets the measurement could not decide (verdict `unknown`).
    pub(crate) unknown: usize,
    /// Significant worsenings the absolute floor kept from being regressions.
    pub(crate) held_by_floor: usize,
    /// Targets missing against the anchor.
    pub(crate) missing_targets: usize,
    /// Recheck run ids executed.
    pub(crate) rechecks: Vec<String>,
    /// Gate result.
    pub(crate) run_accepted: bool,
    /// Why not accepted.
    pub(crate) run_accepted_reasons: Vec<String>,
    /// Anchor eligibility under normal publication.
    pub(crate) baseline_eligible: bool,
    /// Why not eligible.
    pub(crate) baseline_eligible_reasons: Vec<String>,
    /// The exit verdict.
    pub(crate) verdict: Verdict,
    /// History-relative path of the summary.
    pub(crate) summary_path: String,
    /// Evidence directories written (evidence-root relative).
    pub(crate) evidence_dirs: Vec<String>,
    /// Each compared target's verdict, with its figures and detectable change.
    pub(crate) targets: Vec<verdicts::TargetVerdict>,
    /// Each measured target's seconds by phase (measure, anchor passes, recheck, side by side).
    pub(crate) timings: Vec<super::timings::TargetTimings>,
    /// The table for people at the end of the run (not serialized).
    #[serde(skip)]
    pub(crate) ending: super::ending::Ending,
}

/// A target that did not succeed, as printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetFailed {
    /// Target key.
    pub(crate) key: String,
    /// Target string.
    pub(crate) target: String,
    /// Its status (`failed_error`, `failed_timeout`, ...).
    pub(crate) status: String,
    /// Why.
    pub(crate) message: String,
}

/// The suite a run used, as printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SuiteUsed {
    /// `suite_name`.
    pub(crate) name: String,
    /// `version`.
    pub(crate) version: u32,
    /// How it was chosen.
    pub(crate) source: SuiteSource,
}

impl RunOutcome {
    /// The exit code of the run.
    pub fn exit(&self) -> Exit {
        self.verdict.exit()
    }

    /// The ending for people: the table of the compared targets and what the exit code means
    /// (docs/tier1-run.md, "The ending").
    pub fn ending(&self) -> String {
        self.ending
            .text(self.exit(), self.gate_message().as_deref())
    }

    /// `gate failed: <every failing condition>` when the gate failed, else None.
    pub fn gate_message(&self) -> Option<String> {
        (!self.verdict.passed).then(|| {
            let mut why = self.verdict.failures.clone();
            why.extend(
                self.failures
                    .iter()
                    .map(|f| format!("{} {}: {}", f.key, f.status, f.message)),
            );
            format!("gate failed: {}", why.join("; "))
        })
    }
}

/// Everything a run decided: its JSON outcome, the summaries it compared and the comparison
/// (after rechecks), as written to the history.
#[derive(Debug, Clone)]
pub(crate) struct Ran {
    /// What is printed as JSON.
    pub(crate) outcome: RunOutcome,
    /// The run's summary.
    pub(crate) summary: Summary,
    /// The anchor's summary (None without an anchor).
    pub(crate) anchor: Option<Summary>,
    /// The final comparison.
    pub(crate) comparison: RegressionSummary,
}
