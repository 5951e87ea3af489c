//! The regression thresholds and detection settings of a suite (`thresholds:`): [`Thresholds`],
//! [`UnknownRule`], [`DetectionMethod`].

use serde::{Deserialize, Serialize};

/// Regression thresholds of `compare` and the harness speed gate, and the statistical detection
/// settings (tier1 extension; see docs/regression-model.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    /// Relative speedup drop (percent) that is a regression.
    pub speedup_regression_pct: f64,
    /// Relative optimized-latency growth (percent) that is a regression.
    pub optimized_latency_regression_pct: f64,
    /// Absolute optimized-time change (ms) below which speed changes are noise.
    pub min_optimized_time_delta_ms: f64,
    /// Memory-savings drop in percentage points that is a regression.
    pub memory_savings_regression_points: f64,
    /// Relative optimized-memory growth (percent) that is a regression.
    pub optimized_memory_regression_pct: f64,
    /// Minimum best speedup for a speed-goal target to succeed (harness gate).
    pub min_speedup: f64,
    /// `statistical` (thresholds and significance) or `reference` (the reference rules alone).
    pub detection: DetectionMethod,
    /// Family-wise false-alarm level of one comparison; each of the two tests (speedup, optimized
    /// latency) of each compared target uses `alpha / (2 × compared targets)`.
    pub alpha: f64,
    /// Run-to-run noise (percent, one standard deviation) assumed before the history shows it.
    pub prior_noise_pct: f64,
    /// How many runs' worth of evidence the prior counts for.
    pub prior_runs: f64,
    /// Accepted runs (newest first) the noise estimate and the outlier check look at.
    pub history_window: u32,
    /// Promotion refuses a value more than this many robust standard deviations (1.4826 MAD)
    /// from the median of the accepted runs.
    pub anchor_outlier_mads: f64,
    /// Accepted runs needed before the outlier check applies.
    pub anchor_outlier_min_runs: u32,
    /// What the gate does with a target whose verdict is still `unknown` after its extra
    /// measurement: `pass` (the run passes, the target is listed as unknown with what it could
    /// not rule out, and the run is never an anchor) or `fail`.
    pub on_unknown: UnknownRule,
}

/// The gate's rule for a target the measurement cannot decide (`thresholds.on_unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnknownRule {
    /// Never fail a night on noise alone: the run passes, listing the unknown target.
    #[default]
    Pass,
    /// Fail the gate while any target is unknown (strict canonical runners).
    Fail,
}

impl Thresholds {
    /// The numeric settings by name, as a suite writes them (validation and limits read them
    /// from this one list).
    pub(crate) fn numbers(&self) -> [(&'static str, f64); 9] {
        let t = self;
        [
            ("speedup_regression_pct", t.speedup_regression_pct),
            (
                "optimized_latency_regression_pct",
                t.optimized_latency_regression_pct,
            ),
            ("min_optimized_time_delta_ms", t.min_optimized_time_delta_ms),
            (
                "memory_savings_regression_points",
                t.memory_savings_regression_points,
            ),
            (
                "optimized_memory_regression_pct",
                t.optimized_memory_regression_pct,
            ),
            ("min_speedup", t.min_speedup),
            ("prior_noise_pct", t.prior_noise_pct),
            ("prior_runs", t.prior_runs),
            ("anchor_outlier_mads", t.anchor_outlier_mads),
        ]
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            speedup_regression_pct: 5.0,
            optimized_latency_regression_pct: 5.0,
            min_optimized_time_delta_ms: 0.05,
            memory_savings_regression_points: 5.0,
            optimized_memory_regression_pct: 5.0,
            min_speedup: 1.05,
            detection: DetectionMethod::Statistical,
            alpha: 0.05,
            prior_noise_pct: 2.0,
            prior_runs: 8.0,
            history_window: 20,
            anchor_outlier_mads: 3.5,
            anchor_outlier_min_runs: 5,
            on_unknown: UnknownRule::Pass,
        }
    }
}

/// How changes are decided (`thresholds.detection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectionMethod {
    /// The reference thresholds AND a significance test that accounts for run-to-run noise.
    #[default]
    Statistical,
    /// Exactly the reference rules (parity).
    Reference,
}

impl DetectionMethod {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DetectionMethod::Statistical => "statistical",
            DetectionMethod::Reference => "reference",
        }
    }
}
