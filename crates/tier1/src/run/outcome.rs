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
    pub run_id: String,
    /// The suite run: name, version and how it was chosen.
    pub suite: SuiteUsed,
    /// Profile.
    pub profile: String,
    /// Backend.
    pub backend: String,
    /// Counts and aggregates.
    pub summary: Aggregates,
    /// Every target that did not succeed, with its status and why.
    pub failures: Vec<TargetFailed>,
    /// The anchor compared against.
    pub baseline_run_id: Option<String>,
    /// Confirmed regressions.
    pub regressions: usize,
    /// Improvements.
    pub improvements: usize,
    /// Anchor declines (hold advancement, do not block).
    pub anchor_declines: usize,
    /// Regressions cleared by recheck.
    pub suppressed_regressions: usize,
    /// Targets the measurement could not decide (verdict `unknown`).
    pub unknown: usize,
    /// Significant worsenings the absolute floor kept from being regressions.
    pub held_by_floor: usize,
    /// Targets missing against the anchor.
    pub missing_targets: usize,
    /// Recheck run ids executed.
    pub rechecks: Vec<String>,
    /// Gate result.
    pub run_accepted: bool,
    /// Why not accepted.
    pub run_accepted_reasons: Vec<String>,
    /// Anchor eligibility under normal publication.
    pub baseline_eligible: bool,
    /// Why not eligible.
    pub baseline_eligible_reasons: Vec<String>,
    /// The exit verdict.
    pub verdict: Verdict,
    /// History-relative path of the summary.
    pub summary_path: String,
    /// Evidence directories written (evidence-root relative).
    pub evidence_dirs: Vec<String>,
    /// Each compared target's verdict, with its figures and detectable change.
    pub targets: Vec<verdicts::TargetVerdict>,
}

/// A target that did not succeed, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct TargetFailed {
    /// Target key.
    pub key: String,
    /// Target string.
    pub target: String,
    /// Its status (`failed_error`, `failed_timeout`, ...).
    pub status: String,
    /// Why.
    pub message: String,
}

/// The suite a run used, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteUsed {
    /// `suite_name`.
    pub name: String,
    /// `version`.
    pub version: u32,
    /// How it was chosen.
    pub source: SuiteSource,
}

impl RunOutcome {
    /// The exit code of the run.
    pub fn exit(&self) -> Exit {
        self.verdict.exit()
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
pub struct Ran {
    /// What is printed as JSON.
    pub outcome: RunOutcome,
    /// The run's summary.
    pub summary: Summary,
    /// The anchor's summary (None without an anchor).
    pub anchor: Option<Summary>,
    /// The final comparison.
    pub comparison: RegressionSummary,
}
