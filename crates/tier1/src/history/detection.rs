//! tier1's detection extension of `regression_summary.json`: which rule decided each target
//! (statistical or the reference rules alone), the test statistics, the changes that cleared the
//! thresholds but not the significance test (`within_noise`), and the targets whose measurement
//! was too imprecise for the test (`inconclusive`). Reference readers ignore these fields.

use crate::json::{ser_finite, ser_finite_opt};
use serde::{Deserialize, Serialize};

pub use crate::suite::DetectionMethod;

/// The significance test of one metric of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricTest {
    /// `speedup` or `optimized_latency`.
    pub metric: String,
    /// The anchor's value (speedup, or optimized time in ms).
    #[serde(serialize_with = "ser_finite")]
    pub reference_value: f64,
    /// The current run's value.
    #[serde(serialize_with = "ser_finite")]
    pub current_value: f64,
    /// `(current / anchor - 1) * 100`.
    #[serde(serialize_with = "ser_finite")]
    pub change_pct: f64,
    /// Estimated run-to-run standard deviation of the metric (percent, log scale).
    #[serde(serialize_with = "ser_finite")]
    pub noise_pct: f64,
    /// Student t statistic (positive: worse).
    #[serde(serialize_with = "ser_finite")]
    pub statistic: f64,
    /// Degrees of freedom.
    #[serde(serialize_with = "ser_finite")]
    pub df: f64,
    /// One-sided p-value in the direction of the change.
    #[serde(serialize_with = "ser_finite")]
    pub p_value: f64,
    /// `p_value < alpha`.
    pub significant: bool,
    /// The worsening (percent) this test detects with 95 % probability at this noise: what a
    /// reader can expect this target to catch in one night.
    #[serde(serialize_with = "ser_finite")]
    pub detectable_pct: f64,
}

/// Which rule decided one target, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDetection {
    /// Target string.
    pub target: String,
    /// `statistical` or `reference`.
    pub method: DetectionMethod,
    /// Why the reference rules alone decided (imprecise measurement, no measurement record,
    /// memory goal, suite setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Accepted runs the noise estimate used (all segments in the window).
    pub noise_runs: u32,
    /// The tests (statistical method only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<MetricTest>,
}

/// The detection record of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Detection {
    /// The suite's method.
    pub method: DetectionMethod,
    /// Per-test significance level (the suite's `alpha` divided by the tests: two per compared
    /// speed target).
    #[serde(serialize_with = "ser_finite")]
    pub alpha: f64,
    /// Prior run-to-run noise (percent) a young history is blended with.
    #[serde(serialize_with = "ser_finite")]
    pub prior_noise_pct: f64,
    /// Pseudo-runs the prior counts for.
    #[serde(serialize_with = "ser_finite")]
    pub prior_runs: f64,
    /// Run ids whose values formed the noise estimate, oldest first.
    #[serde(default)]
    pub history_run_ids: Vec<String>,
    /// One record per target compared.
    #[serde(default)]
    pub targets: Vec<TargetDetection>,
}

/// A target whose measurement was too imprecise (or throttled) for the significance test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inconclusive {
    /// Target string.
    pub target: String,
    /// What was imprecise, with the figures.
    pub reason: String,
    /// Relative half-width of the current speedup interval (percent), when known.
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub speedup_half_width_pct: Option<f64>,
}
