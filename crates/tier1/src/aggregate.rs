//! Per-target derived metrics and the `summary` aggregate block of a run summary (contract §2.1):
//! optimized time and memory backfills, status counts, mean / median / geomean / max speedups.

use crate::history::model::{Aggregates, TargetSummary};
use crate::json::Finite;
use crate::suite::Goal;

/// The status string of a target that produced valid results.
pub(crate) const SUCCEEDED: &str = "succeeded";
/// The status string of a target that produced no result row.
pub(crate) const MISSING: &str = "missing";

/// `x` when it is finite and greater than zero.
pub(crate) fn positive(x: Option<impl Into<f64>>) -> Option<f64> {
    finite(x).filter(|v| *v > 0.0)
}

/// `x` when it is finite.
pub(crate) fn finite(x: Option<impl Into<f64>>) -> Option<f64> {
    x.map(Into::into).filter(|v: &f64| v.is_finite())
}

/// `baseline_ms / speedup` when both are finite and greater than 0, else `None`.
pub(crate) fn best_optimized_time(
    baseline_ms: Option<impl Into<f64>>,
    speedup: Option<impl Into<f64>>,
) -> Option<f64> {
    let (b, s) = (positive(baseline_ms)?, positive(speedup)?);
    positive(Some(b / s))
}

/// `baseline_mb * (1 - savings_pct / 100)` when the baseline is finite and greater than 0 and the
/// savings are finite (they may be negative), else `None`.
pub(crate) fn best_optimized_memory(
    baseline_mb: Option<impl Into<f64>>,
    savings_pct: Option<impl Into<f64>>,
) -> Option<f64> {
    let (b, p) = (positive(baseline_mb)?, finite(savings_pct)?);
    finite(Some(b * (1.0 - p / 100.0)))
}

/// The target's optimized time: the stored value when it is finite and positive, else the backfill
/// from baseline time and speedup. A single benchmark (goal `time`) has one variant: its time,
/// `baseline_time_ms`, is the time the latency rule and its significance test compare.
pub(crate) fn optimized_time_ms(t: &TargetSummary) -> Option<f64> {
    if goal(t) == Goal::Time {
        return positive(t.baseline_time_ms);
    }
    positive(t.best_optimized_time_ms)
        .or_else(|| best_optimized_time(t.baseline_time_ms, t.best_speedup))
}

/// The target's optimized memory: the stored value when it is finite, else the backfill from
/// baseline memory and savings.
pub(crate) fn optimized_memory_mb(t: &TargetSummary) -> Option<f64> {
    finite(t.best_optimized_memory_mb)
        .or_else(|| best_optimized_memory(t.baseline_memory_mb, t.best_memory_savings_pct))
}

/// The target's goal (`performance`, empty or absent mean speed).
pub(crate) fn goal(t: &TargetSummary) -> Goal {
    Goal::from_stored(non_empty(t.optimization_goal.as_deref()))
}

/// The goal of a compared pair: the first non-empty goal of `current`, else of `previous`.
pub(crate) fn pair_goal(current: &TargetSummary, previous: &TargetSummary) -> Goal {
    Goal::from_stored(
        non_empty(current.optimization_goal.as_deref())
            .or_else(|| non_empty(previous.optimization_goal.as_deref())),
    )
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.filter(|v| !v.trim().is_empty())
}

/// Whether a target's status is `succeeded`.
pub(crate) fn is_succeeded(t: &TargetSummary) -> bool {
    t.status == SUCCEEDED
}

/// The aggregate block: counts by status (`failed*`, `skipped*`, `missing`) and speedup statistics
/// over succeeded targets with a finite speedup (memory-goal targets included). The geometric mean
/// ignores non-positive speedups; `representative_speedup` equals it. Empty inputs give `None`.
pub fn compute(targets: &[TargetSummary]) -> Aggregates {
    let count = |pred: &dyn Fn(&str) -> bool| {
        u32::try_from(targets.iter().filter(|t| pred(&t.status)).count()).unwrap_or(u32::MAX)
    };
    let speedups: Vec<f64> = targets
        .iter()
        .filter(|t| is_succeeded(t))
        .filter_map(|t| finite(t.best_speedup))
        .collect();
    let geomean = geomean(&speedups).map(Finite::from);
    Aggregates {
        target_count: u32::try_from(targets.len()).unwrap_or(u32::MAX),
        succeeded: count(&|s| s == SUCCEEDED),
        failed: count(&|s| s.starts_with("failed")),
        skipped: count(&|s| s.starts_with("skipped")),
        missing: count(&|s| s == MISSING),
        avg_speedup: mean(&speedups).map(Finite::from),
        median_speedup: median(&speedups).map(Finite::from),
        geomean_speedup: geomean,
        representative_speedup: geomean,
        max_speedup: speedups.iter().copied().reduce(f64::max).map(Finite::from),
    }
}

/// Arithmetic mean; `None` for an empty slice.
pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    finite(crate::stats::mean(xs))
}

/// Median (mean of the two middle values for an even count); `None` for an empty slice.
pub(crate) fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// Geometric mean of the positive values; `None` when there are none.
pub(crate) fn geomean(xs: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = xs
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect();
    if logs.is_empty() {
        return None;
    }
    finite(Some((logs.iter().sum::<f64>() / logs.len() as f64).exp()))
}

/// Target and summary rows for unit tests of the comparison and gate modules.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::history::model::Summary;

    /// A 40-hex commit used by test summaries.
    pub(crate) const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    /// A succeeded speed-goal target row.
    pub(crate) fn speed_target(key: &str, baseline_ms: f64, speedup: f64) -> TargetSummary {
        TargetSummary {
            key: key.into(),
            target: format!("labs/{key}:{key}"),
            category: "gemm".into(),
            rationale: String::new(),
            status: SUCCEEDED.into(),
            baseline_time_ms: Some(baseline_ms.into()),
            best_speedup: Some(speedup.into()),
            best_optimized_time_ms: best_optimized_time(Some(baseline_ms), Some(speedup))
                .map(Into::into),
            best_optimization: Some("optimized".into()),
            optimization_goal: Some("performance".into()),
            baseline_memory_mb: Some(512.0.into()),
            best_memory_savings_pct: Some(0.0.into()),
            best_optimized_memory_mb: Some(512.0.into()),
            baseline_p75_ms: None,
            baseline_file: None,
            artifacts: Default::default(),
            verification_tolerance: None,
            measurement: None,
            measurement_settings: None,
            extra: Default::default(),
        }
    }

    /// A speed-goal row given by speedup and optimized time (baseline = speedup * optimized).
    pub(crate) fn speed_opt(key: &str, speedup: f64, optimized_ms: f64) -> TargetSummary {
        TargetSummary {
            best_optimized_time_ms: Some(optimized_ms.into()),
            ..speed_target(key, speedup * optimized_ms, speedup)
        }
    }

    /// A succeeded memory-goal target row.
    pub(crate) fn memory_target(key: &str, baseline_mb: f64, savings_pct: f64) -> TargetSummary {
        TargetSummary {
            optimization_goal: Some("memory".into()),
            baseline_memory_mb: Some(baseline_mb.into()),
            best_memory_savings_pct: Some(savings_pct.into()),
            best_optimized_memory_mb: best_optimized_memory(Some(baseline_mb), Some(savings_pct))
                .map(Into::into),
            ..speed_target(key, 1585.6, 1.58)
        }
    }

    /// `t` with a measurement record: intervals of ±`half_width_pct` around its speedup and
    /// optimized time, `precise` when that is within 1 %.
    pub(crate) fn measured(mut t: TargetSummary, half_width_pct: f64) -> TargetSummary {
        let f = half_width_pct / 100.0;
        let speedup = t.best_speedup.map_or(1.0, f64::from);
        let opt = optimized_time_ms(&t).unwrap_or(1.0);
        t.measurement = Some(crate::history::Measurement {
            confidence: 0.95.into(),
            rounds: 30,
            clean_rounds: 15,
            baseline_repetitions: 1,
            optimized_repetitions: 1,
            speedup_ci_low: Some((speedup * (1.0 - f)).into()),
            speedup_ci_high: Some((speedup * (1.0 + f)).into()),
            optimized_median_ms: opt.into(),
            optimized_ci_low_ms: Some((opt * (1.0 - f)).into()),
            optimized_ci_high_ms: Some((opt * (1.0 + f)).into()),
            speedup_cv: 0.01.into(),
            baseline_cv: 0.01.into(),
            optimized_cv: 0.01.into(),
            outliers: 0,
            precision_pct: 1.0.into(),
            precise: half_width_pct <= 1.0,
            throttled: false,
            estimator: Some("paired_median".into()),
            precision_required: Some(false),
            passes: Vec::new(),
            overloaded: None,
        });
        t
    }

    /// Every target of `s` [`measured`] at ±0.5 % (precise).
    pub(crate) fn precise(mut s: Summary) -> Summary {
        s.targets = s.targets.into_iter().map(|t| measured(t, 0.5)).collect();
        s
    }

    /// `t` with another status.
    pub(crate) fn with_status(mut t: TargetSummary, status: &str) -> TargetSummary {
        t.status = status.into();
        t
    }

    /// A clean summary (accepted provenance, aggregates computed) of `targets`.
    pub(crate) fn summary(run_id: &str, targets: Vec<TargetSummary>) -> Summary {
        Summary {
            suite_name: "tier1".into(),
            suite_version: 1,
            description: String::new(),
            run_id: run_id.into(),
            generated_at: "2026-08-16T00:00:00Z".into(),
            source_result_json: Some(format!("{run_id}/results/benchmark_test_results.json")),
            source_manifest_json: Some(format!("{run_id}/manifest.json")),
            source_markdown_report: Some(format!("{run_id}/report.md")),
            source_git_commit: Some(COMMIT.into()),
            source_git_dirty: Some(false),
            source_manifest_git_commit: Some(COMMIT.into()),
            evidence_artifact_name: Some(format!("tier1-evidence-{run_id}")),
            environment: None,
            profile: None,
            summary: compute(&targets),
            targets,
            shards: None,
            extra: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn optimized_time_is_baseline_over_speedup_only_when_both_positive() {
        assert_eq!(best_optimized_time(Some(10.0), Some(2.0)), Some(5.0));
        assert_eq!(best_optimized_time(Some(0.0), Some(2.0)), None);
        assert_eq!(best_optimized_time(Some(10.0), Some(0.0)), None);
        assert_eq!(best_optimized_time(Some(10.0), Some(-1.0)), None);
        assert_eq!(best_optimized_time(None::<f64>, Some(2.0)), None);
        assert_eq!(best_optimized_time(Some(f64::NAN), Some(2.0)), None);
        assert_eq!(best_optimized_time(Some(10.0), Some(f64::INFINITY)), None);
    }

    #[test]
    fn optimized_memory_backfill_allows_negative_savings() {
        assert_eq!(best_optimized_memory(Some(1024.0), Some(50.0)), Some(512.0));
        assert_eq!(best_optimized_memory(Some(200.0), Some(-25.0)), Some(250.0));
        assert_eq!(best_optimized_memory(Some(0.0), Some(50.0)), None);
        assert_eq!(best_optimized_memory(Some(100.0), None::<f64>), None);
        let mut t = memory_target("kv_standard", 2048.0, 50.0);
        t.best_optimized_memory_mb = None;
        assert_eq!(optimized_memory_mb(&t), Some(1024.0));
    }

    #[test]
    fn goal_defaults_to_speed_and_falls_back_to_previous() {
        let mut cur = speed_target("a", 1.0, 2.0);
        let prev = memory_target("a", 10.0, 5.0);
        assert_eq!(goal(&cur), Goal::Speed);
        cur.optimization_goal = Some(String::new());
        assert_eq!(goal(&cur), Goal::Speed);
        assert_eq!(pair_goal(&cur, &prev), Goal::Memory);
        cur.optimization_goal = None;
        assert_eq!(pair_goal(&cur, &prev), Goal::Memory);
        cur.optimization_goal = Some("performance".into());
        assert_eq!(pair_goal(&cur, &prev), Goal::Speed);
    }

    #[test]
    fn aggregates_count_by_prefix_and_use_only_succeeded_speedups() {
        let targets = vec![
            speed_target("a", 1.0, 1.0),
            speed_target("b", 1.0, 4.0),
            memory_target("kv", 100.0, 50.0), // speedup 1.58 counts
            with_status(speed_target("c", 1.0, 100.0), "failed_no_speedup"),
            with_status(speed_target("d", 1.0, 100.0), "failed_verification"),
            with_status(speed_target("e", 1.0, 100.0), "skipped_no_gpu"),
            with_status(speed_target("f", 1.0, 100.0), MISSING),
        ];
        let a = compute(&targets);
        assert_eq!(
            (a.target_count, a.succeeded, a.failed, a.skipped, a.missing),
            (7, 3, 2, 1, 1)
        );
        let avg = (1.0 + 4.0 + 1.58) / 3.0;
        assert!((a.avg_speedup.unwrap().get() - avg).abs() < 1e-12);
        assert_eq!(a.median_speedup, Some(1.58.into()));
        let g = (1.0f64 * 4.0 * 1.58).powf(1.0 / 3.0);
        assert!((a.geomean_speedup.unwrap().get() - g).abs() < 1e-12);
        assert_eq!(a.representative_speedup, a.geomean_speedup);
        assert_eq!(a.max_speedup, Some(4.0.into()));
    }

    #[test]
    fn geomean_ignores_non_positive_and_empty_is_none() {
        assert_eq!(geomean(&[2.0, 8.0, 0.0, -3.0]), Some(4.0));
        assert_eq!(geomean(&[0.0, -1.0]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        let a = compute(&[]);
        assert_eq!(a.target_count, 0);
        assert_eq!(
            (
                a.avg_speedup,
                a.median_speedup,
                a.geomean_speedup,
                a.max_speedup
            ),
            (None, None, None, None)
        );
    }

    #[test]
    fn non_finite_speedups_never_reach_aggregates() {
        let mut t = speed_target("a", 1.0, 2.0);
        t.best_speedup = Some(f64::NAN.into());
        let a = compute(&[t, speed_target("b", 1.0, 3.0)]);
        assert_eq!(a.avg_speedup, Some(3.0.into()));
        assert_eq!(a.max_speedup, Some(3.0.into()));
    }
}
