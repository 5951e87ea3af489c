//! tier1's detection extension of `regression_summary.json`: which rule decided each target
//! (statistical or the reference rules alone), the test statistics, each target's verdict
//! (regressed, improved, unchanged, unknown) with the smallest change it could detect, the
//! changes that cleared the thresholds but not the significance test (`within_noise`), the
//! targets the measurement could not decide (`inconclusive`), and the significant changes a
//! floor kept from the gate (`held_by_floor`). Reference readers ignore these fields.

use crate::json::Finite;
use serde::{Deserialize, Serialize};

pub(crate) use crate::suite::{DetectionMethod, UnknownRule};

/// What the comparison says of one target or metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Worse by at least the threshold, and significantly so.
    Regressed,
    /// Better by at least the threshold, and significantly so.
    Improved,
    /// A threshold-sized worsening is ruled out.
    Unchanged,
    /// The measurement cannot decide at this noise.
    Unknown,
}

impl Verdict {
    /// The stored name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unchanged => "unchanged",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The significance test of one metric of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MetricTest {
    /// `speedup` or `optimized_latency`.
    pub(crate) metric: String,
    /// The anchor's value (speedup, or optimized time in ms).
    pub(crate) reference_value: Finite,
    /// The current run's value.
    pub(crate) current_value: Finite,
    /// `(current / anchor - 1) * 100`.
    pub(crate) change_pct: Finite,
    /// Estimated run-to-run standard deviation of the metric (percent, log scale).
    pub(crate) noise_pct: Finite,
    /// Student t statistic (positive: worse).
    pub(crate) statistic: Finite,
    /// Degrees of freedom.
    pub(crate) df: Finite,
    /// One-sided p-value in the direction of the change.
    pub(crate) p_value: Finite,
    /// `p_value < alpha`.
    pub(crate) significant: bool,
    /// The worsening (percent slower) this test detects with 95 % probability at this noise:
    /// what a reader can expect this target to catch in one night.
    pub(crate) detectable_pct: Finite,
    /// The same figure from this night's and the anchor's measurements alone (their own interval
    /// variances, no run-to-run term, the normal quantile at the test's level): what one night
    /// of the target resolves. `detectable_pct` more than twice this means the run-to-run noise
    /// of the window (or the young history's prior), not the measurement, limits the test, and a
    /// command pair is then compared side by side (`suspected_as: imprecise_history`, issue 43).
    /// Absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measured_detectable_pct: Option<Finite>,
    /// The regression threshold applied (percent, as the suite states it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) threshold_pct: Option<Finite>,
    /// The absolute floor applied (ms, `min_optimized_time_delta_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) floor_ms: Option<Finite>,
    /// The metric's verdict (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<Verdict>,
    /// A significant worsening beyond the threshold that the absolute floor
    /// (`min_optimized_time_delta_ms`) kept from being a regression.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) held_by_floor: bool,
}

/// Which rule decided one target, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDetection {
    /// Target string.
    pub(crate) target: String,
    /// `statistical` or `reference`.
    pub(crate) method: DetectionMethod,
    /// Why the reference rules alone decided (imprecise measurement, no measurement record,
    /// memory goal, suite setting), or why the target could not be compared (its measurement
    /// settings changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// Accepted runs the noise estimate used (all segments in the window).
    pub(crate) noise_runs: u32,
    /// The tests (statistical method only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tests: Vec<MetricTest>,
    /// The target's verdict (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The smallest slowdown (percent) the target's tests catch with 95 % probability: the
    /// larger of its metrics' (a slowdown of both variants shows only in the time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_pct: Option<Finite>,
    /// The recheck whose measurement was pooled with the first to decide this record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pooled_with: Option<String>,
    /// The measurement settings that differ from the anchor's (the target is then not compared:
    /// unknown, with `reason` asking for a new anchor).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) settings_changed: Vec<super::settings::SettingChange>,
}

impl TargetDetection {
    /// A target the reference rules alone decide, and why.
    pub(crate) fn reference(target: &str, reason: String) -> TargetDetection {
        TargetDetection {
            target: target.into(),
            method: DetectionMethod::Reference,
            reason: Some(reason),
            noise_runs: 0,
            tests: Vec::new(),
            verdict: None,
            detectable_pct: None,
            pooled_with: None,
            settings_changed: Vec::new(),
        }
    }

    /// A target decided by the statistical tests (pushed by the caller).
    pub(crate) fn statistical(target: &str) -> TargetDetection {
        TargetDetection {
            method: DetectionMethod::Statistical,
            reason: None,
            ..TargetDetection::reference(target, String::new())
        }
    }

    /// The test of `metric` (`speedup`, `optimized_latency`).
    pub(crate) fn test(&self, metric: &str) -> Option<&MetricTest> {
        self.tests.iter().find(|t| t.metric == metric)
    }
}

/// The detection record of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Detection {
    /// The suite's method.
    pub(crate) method: DetectionMethod,
    /// Per-test significance level (the suite's `alpha` divided by the tests: two per compared
    /// speed target).
    pub(crate) alpha: Finite,
    /// Prior run-to-run noise (percent) a young history is blended with.
    pub(crate) prior_noise_pct: Finite,
    /// Pseudo-runs the prior counts for.
    pub(crate) prior_runs: Finite,
    /// Run ids whose values formed the noise estimate, oldest first.
    #[serde(default)]
    pub(crate) history_run_ids: Vec<String>,
    /// One record per target compared.
    #[serde(default)]
    pub(crate) targets: Vec<TargetDetection>,
    /// The gate's rule for a target still unknown after its extra measurement (absent in older
    /// records: `pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) on_unknown: Option<UnknownRule>,
}

impl Detection {
    /// The record of `target`.
    pub fn target(&self, target: &str) -> Option<&TargetDetection> {
        self.targets.iter().find(|t| t.target == target)
    }

    /// Targets whose verdict is unknown.
    pub(crate) fn unknown(&self) -> impl Iterator<Item = &TargetDetection> {
        self.targets
            .iter()
            .filter(|t| t.verdict == Some(Verdict::Unknown))
    }
}

/// A significant worsening beyond its threshold that the absolute floor kept from the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FloorHeld {
    /// The change row, as a regression would have listed it.
    pub(crate) row: crate::history::model::ChangeRow,
    /// The rule that decided, in words (`min_optimized_time_delta_ms: |Δ| 0.003 ms < 0.05 ms`).
    pub(crate) rule: String,
    /// The floor (ms).
    pub(crate) floor_ms: Finite,
    /// The optimized time's change (ms).
    pub(crate) delta_ms: Finite,
}

/// A target whose measurement was too imprecise (or throttled) for the significance test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Inconclusive {
    /// Target string.
    pub(crate) target: String,
    /// What was imprecise, with the figures.
    pub(crate) reason: String,
    /// Relative half-width of the current speedup interval (percent), when known.
    #[serde(default)]
    pub(crate) speedup_half_width_pct: Option<Finite>,
}
