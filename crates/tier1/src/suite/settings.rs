//! What one target may set for itself (precision, budget, sample length, thresholds and floor),
//! how a profile measures an anchor (passes, precision measured or required), and the precision
//! the harness aims for when none is set: derived from the thresholds the gate must detect.

use super::{Profile, Suite, Target, Thresholds};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The share of the smaller speed threshold a measurement's 95 % interval aims for when no
/// `precision_pct` is set: at ±0.3 T the within-run part of a comparison's standard error is
/// under a fifth of a T-sized change, so the run-to-run noise, not the measurement, decides
/// what the gate can detect (docs/regression-model.md §7).
pub(crate) const PRECISION_PER_THRESHOLD: f64 = 0.3;
/// Bounds of a derived precision (percent).
pub(crate) const DERIVED_PRECISION_RANGE: (f64, f64) = (0.25, 10.0);
/// Passes an anchor is measured in when the profile does not say.
pub(crate) const DEFAULT_ANCHOR_PASSES: u32 = 3;
/// Most passes a profile may ask for.
pub(crate) const MAX_ANCHOR_PASSES: u32 = 9;

/// Threshold fields a target may override (`targets[].thresholds`); unset fields keep the
/// suite's value. The detection settings (alpha, prior, window) stay suite-wide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThresholdOverrides {
    /// See [`Thresholds::speedup_regression_pct`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speedup_regression_pct: Option<f64>,
    /// See [`Thresholds::optimized_latency_regression_pct`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimized_latency_regression_pct: Option<f64>,
    /// See [`Thresholds::min_optimized_time_delta_ms`] (the floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) min_optimized_time_delta_ms: Option<f64>,
    /// See [`Thresholds::memory_savings_regression_points`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_savings_regression_points: Option<f64>,
    /// See [`Thresholds::optimized_memory_regression_pct`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimized_memory_regression_pct: Option<f64>,
    /// See [`Thresholds::min_speedup`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) min_speedup: Option<f64>,
}

impl ThresholdOverrides {
    /// `base` with every set field replaced.
    pub(crate) fn apply(&self, base: Thresholds) -> Thresholds {
        Thresholds {
            speedup_regression_pct: self
                .speedup_regression_pct
                .unwrap_or(base.speedup_regression_pct),
            optimized_latency_regression_pct: self
                .optimized_latency_regression_pct
                .unwrap_or(base.optimized_latency_regression_pct),
            min_optimized_time_delta_ms: self
                .min_optimized_time_delta_ms
                .unwrap_or(base.min_optimized_time_delta_ms),
            memory_savings_regression_points: self
                .memory_savings_regression_points
                .unwrap_or(base.memory_savings_regression_points),
            optimized_memory_regression_pct: self
                .optimized_memory_regression_pct
                .unwrap_or(base.optimized_memory_regression_pct),
            min_speedup: self.min_speedup.unwrap_or(base.min_speedup),
            ..base
        }
    }

    /// The set fields, by name (for validation messages).
    pub(crate) fn fields(&self) -> Vec<(&'static str, f64)> {
        [
            ("speedup_regression_pct", self.speedup_regression_pct),
            (
                "optimized_latency_regression_pct",
                self.optimized_latency_regression_pct,
            ),
            (
                "min_optimized_time_delta_ms",
                self.min_optimized_time_delta_ms,
            ),
            (
                "memory_savings_regression_points",
                self.memory_savings_regression_points,
            ),
            (
                "optimized_memory_regression_pct",
                self.optimized_memory_regression_pct,
            ),
            ("min_speedup", self.min_speedup),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

/// Which clock CPU samples are read from (`profiles.<name>.clock`; docs/harness.md): wall time,
/// or the CPU time of the whole process, which preemption by other processes does not inflate.
/// Readings are taken by `bench::clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Elapsed real time.
    #[default]
    Wall,
    /// CPU time of the whole process (`CLOCK_PROCESS_CPUTIME_ID`), for pinned CPU profiles.
    Cpu,
}

impl Clock {
    /// The stored name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::Cpu => "cpu",
        }
    }
}

/// Whether an anchor must reach its precision (`profiles.<name>.anchor_precision`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AnchorPrecision {
    /// The anchor is made whatever precision the machine reached, and carries it; every later
    /// verdict states the smallest change it can detect (ordinary machines).
    #[default]
    Measured,
    /// An anchor that did not reach its precision is refused, naming the target, the figures
    /// and the remedies (canonical GPU runners: the `minimal` profile).
    Required,
}

/// The precision (± percent, 95 %) a measurement aims for when none is set: a share of the
/// smaller speed threshold ([`PRECISION_PER_THRESHOLD`]), within [`DERIVED_PRECISION_RANGE`].
pub(crate) fn derived_precision_pct(th: &Thresholds) -> f64 {
    let t = th
        .speedup_regression_pct
        .min(th.optimized_latency_regression_pct);
    let (lo, hi) = DERIVED_PRECISION_RANGE;
    (PRECISION_PER_THRESHOLD * t).clamp(lo, hi)
}

/// The sampling settings of one target in one profile, after its own overrides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetSettings {
    /// Precision aimed for (± percent, 95 %).
    pub(crate) precision_pct: f64,
    /// Whether the precision was set (suite or target) rather than derived.
    pub(crate) precision_set: bool,
    /// Timing budget (seconds) of one pass.
    pub(crate) budget_s: f64,
    /// Shortest sample (ms).
    pub(crate) min_sample_ms: f64,
}

/// Per target string, the thresholds that judge it (the suite's, with its own overrides).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThresholdBook {
    /// The suite's thresholds (and the detection settings every target shares).
    pub(crate) base: Thresholds,
    /// Targets whose thresholds differ from the suite's, by `target` string.
    pub(crate) targets: BTreeMap<String, Thresholds>,
}

impl ThresholdBook {
    /// The thresholds of `target` (a `target` string).
    pub(crate) fn get(&self, target: &str) -> &Thresholds {
        self.targets.get(target).unwrap_or(&self.base)
    }
}

impl From<&Thresholds> for ThresholdBook {
    fn from(base: &Thresholds) -> Self {
        ThresholdBook::from(*base)
    }
}

impl From<&ThresholdBook> for ThresholdBook {
    fn from(book: &ThresholdBook) -> Self {
        book.clone()
    }
}

impl From<Thresholds> for ThresholdBook {
    fn from(base: Thresholds) -> Self {
        ThresholdBook {
            base,
            targets: BTreeMap::new(),
        }
    }
}

/// The first per-target setting of `t` that is out of range: (field path under the target,
/// message with the expected and found values).
pub(crate) fn target_setting_problem(t: &Target) -> Option<(String, String)> {
    let positive = [
        ("precision_pct", t.precision_pct),
        ("budget_s", t.budget_s),
        ("min_sample_ms", t.min_sample_ms),
    ];
    for (field, v) in positive {
        if let Some(v) = v
            && !(v.is_finite() && v > 0.0)
        {
            return Some((
                field.into(),
                format!(
                    "target {:?}: {field} must be a finite number > 0, found {v}",
                    t.key
                ),
            ));
        }
    }
    for (field, v) in t.thresholds.unwrap_or_default().fields() {
        if !(v.is_finite() && v >= 0.0) {
            return Some((
                format!("thresholds.{field}"),
                format!(
                    "target {:?}: thresholds.{field} must be a finite number >= 0, found {v}",
                    t.key
                ),
            ));
        }
    }
    None
}

/// `side_by_side` of a suite or a profile: whether a night compares its suspected targets side by
/// side with the anchor's own code (docs/suite.md, docs/regression-model.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SideBySideSetting {
    /// On where the anchor's commit is reachable in the checkout's repository (the default).
    #[default]
    Auto,
    /// Never: the history test's verdicts stand (recorded with this reason).
    Off,
}

impl Suite {
    /// The thresholds that judge `target` (a `target` string): the suite's, with the target's
    /// own overrides. A target that imports a CPU tool's timings has no floor unless it sets one
    /// (`OutputFormat::own_floor_ms`).
    pub fn thresholds_for(&self, target: &str) -> Thresholds {
        match self.targets.iter().find(|t| t.target == target) {
            Some(t) => {
                let own = t.thresholds.unwrap_or_default();
                ThresholdOverrides {
                    min_optimized_time_delta_ms: own
                        .min_optimized_time_delta_ms
                        .or(t.format.own_floor_ms()),
                    ..own
                }
                .apply(self.thresholds)
            }
            None => self.thresholds,
        }
    }

    /// Every target's thresholds.
    pub(crate) fn threshold_book(&self) -> ThresholdBook {
        ThresholdBook {
            base: self.thresholds,
            targets: self
                .targets
                .iter()
                .map(|t| (t.target.clone(), self.thresholds_for(&t.target)))
                .filter(|(_, th)| *th != self.thresholds)
                .collect(),
        }
    }

    /// The precision (± percent, 95 %) asked for under `profile`, of target `t` when given, and
    /// whether it was set: the target's own, else the profile's, else the one derived from the
    /// thresholds (the target's, else the suite's). The one place the default is derived.
    pub(crate) fn precision_for(&self, profile: &Profile, t: Option<&Target>) -> (f64, bool) {
        let set = t.and_then(|t| t.precision_pct).or(profile.precision_pct);
        let pct = set.unwrap_or_else(|| {
            derived_precision_pct(&t.map_or(self.thresholds, |t| self.thresholds_for(&t.target)))
        });
        (pct, set.is_some())
    }

    /// The sampling settings of `t` under `profile`: the target's own values, else the
    /// profile's, else (precision) the value derived from the target's thresholds
    /// (`Suite::precision_for`).
    pub fn settings_for(&self, profile: &Profile, t: &Target) -> TargetSettings {
        let (precision_pct, precision_set) = self.precision_for(profile, Some(t));
        TargetSettings {
            precision_pct,
            precision_set,
            budget_s: t.budget_s.unwrap_or(profile.budget_s),
            min_sample_ms: t.min_sample_ms.unwrap_or(profile.min_sample_ms),
        }
    }

    /// The side-by-side setting under `profile`: the profile's, else the suite's, else `auto`.
    pub(crate) fn side_by_side_for(&self, profile: &str) -> SideBySideSetting {
        self.profile(profile)
            .and_then(|p| p.side_by_side)
            .or(self.side_by_side)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_follows_the_smaller_speed_threshold() {
        let th = Thresholds::default();
        assert!((derived_precision_pct(&th) - 1.5).abs() < 1e-12);
        let loose = Thresholds {
            speedup_regression_pct: 20.0,
            optimized_latency_regression_pct: 10.0,
            ..th
        };
        assert!((derived_precision_pct(&loose) - 3.0).abs() < 1e-12);
        let tiny = Thresholds {
            speedup_regression_pct: 0.1,
            ..th
        };
        assert_eq!(derived_precision_pct(&tiny), DERIVED_PRECISION_RANGE.0);
    }

    #[test]
    fn the_precision_is_the_target_s_else_the_profile_s_else_derived_from_the_thresholds() {
        let mut suite = Suite::embedded();
        let mut profile = suite.profiles["cpu"].clone();
        profile.precision_pct = None;
        let derived = derived_precision_pct(&suite.thresholds);
        assert_eq!(suite.precision_for(&profile, None), (derived, false));
        let mut t = suite.targets[0].clone();
        t.precision_pct = None;
        t.thresholds = Some(ThresholdOverrides {
            speedup_regression_pct: Some(2.0),
            optimized_latency_regression_pct: Some(2.0),
            ..Default::default()
        });
        suite.targets[0] = t.clone();
        let own = derived_precision_pct(&suite.thresholds_for(&t.target));
        assert_ne!(own, derived);
        assert_eq!(suite.precision_for(&profile, Some(&t)), (own, false));
        assert_eq!(suite.settings_for(&profile, &t).precision_pct, own);
        profile.precision_pct = Some(4.0);
        assert_eq!(suite.precision_for(&profile, None), (4.0, true));
        assert_eq!(suite.precision_for(&profile, Some(&t)), (4.0, true));
        t.precision_pct = Some(0.7);
        assert_eq!(suite.precision_for(&profile, Some(&t)), (0.7, true));
        assert!(suite.settings_for(&profile, &t).precision_set);
    }

    /// Issue 43: a +29 % slowdown of a 33 µs Google Benchmark pair was held by the 0.05 ms floor
    /// the contract sets for GPU kernel timings. A target that imports a CPU tool's timings
    /// (nanosecond timers) has no floor unless it sets one; tier1's own documents and nvbench's
    /// GPU timings keep the suite's.
    #[test]
    fn a_target_importing_a_cpu_tool_s_timings_has_no_floor_unless_it_sets_one() {
        use crate::suite::OutputFormat;
        let mut suite = Suite::embedded();
        let base = suite.thresholds.min_optimized_time_delta_ms;
        assert_eq!(base, 0.05);
        let floor_of = |suite: &Suite, format: OutputFormat, own: Option<f64>| {
            let mut s = suite.clone();
            s.targets[0].format = format;
            s.targets[0].thresholds = own.map(|f| ThresholdOverrides {
                min_optimized_time_delta_ms: Some(f),
                ..Default::default()
            });
            let target = s.targets[0].target.clone();
            let book = s.threshold_book();
            let floor = s.thresholds_for(&target).min_optimized_time_delta_ms;
            assert_eq!(book.get(&target).min_optimized_time_delta_ms, floor);
            floor
        };
        for tool in [
            OutputFormat::PytestBenchmark,
            OutputFormat::GoogleBenchmark,
            OutputFormat::Criterion,
            OutputFormat::Hyperfine,
        ] {
            assert_eq!(floor_of(&suite, tool, None), 0.0, "{tool:?}");
            assert_eq!(floor_of(&suite, tool, Some(0.01)), 0.01, "{tool:?}");
        }
        for own in [OutputFormat::Tier1, OutputFormat::Nvbench] {
            assert_eq!(floor_of(&suite, own, None), base, "{own:?}");
            assert_eq!(floor_of(&suite, own, Some(0.2)), 0.2, "{own:?}");
        }
        suite.thresholds.min_optimized_time_delta_ms = 0.3;
        assert_eq!(floor_of(&suite, OutputFormat::Tier1, None), 0.3);
        assert_eq!(floor_of(&suite, OutputFormat::GoogleBenchmark, None), 0.0);
    }

    #[test]
    fn overrides_replace_only_the_fields_they_set() {
        let o = ThresholdOverrides {
            min_optimized_time_delta_ms: Some(0.0),
            speedup_regression_pct: Some(10.0),
            ..Default::default()
        };
        let t = o.apply(Thresholds::default());
        assert_eq!(t.min_optimized_time_delta_ms, 0.0);
        assert_eq!(t.speedup_regression_pct, 10.0);
        assert_eq!(t.optimized_latency_regression_pct, 5.0);
        assert_eq!(t.alpha, Thresholds::default().alpha);
        assert_eq!(
            o.fields(),
            [
                ("speedup_regression_pct", 10.0),
                ("min_optimized_time_delta_ms", 0.0)
            ]
        );
    }
}
