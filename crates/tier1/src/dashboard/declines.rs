//! The latest run's anchor declines sorted by what they are, so that no section calls a large
//! change small: a worsening of a metric whose target is already listed as a regression (counted
//! once, by its first metric), a worsening beyond its threshold that the absolute floor
//! (`min_optimized_time_delta_ms`) kept from the gate, and the declines that really are below the
//! thresholds. Declines already filed elsewhere (regressions, suppressed regressions, within
//! noise, held by the floor) are not repeated.

use super::model::RunView;
use crate::history::model::ChangeRow;
use crate::suite::Suite;
use std::collections::BTreeSet;

/// Slack of the threshold comparisons (the comparison's own).
const EPS: f64 = 1e-9;

/// The latest run's declines not filed elsewhere, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Declines<'a> {
    /// Beyond their threshold on a target that already has a regression (or a suppressed one).
    pub(crate) on_regressed_target: Vec<&'a ChangeRow>,
    /// Beyond their threshold, kept from the gate by the floor; each with the rule.
    pub(crate) under_floor: Vec<(&'a ChangeRow, String)>,
    /// Beyond the thresholds the comparison recorded or the suite states now, yet not filed (a
    /// record decided under other thresholds).
    pub(crate) beyond_unfiled: Vec<&'a ChangeRow>,
    /// Below the thresholds: they hold anchor advancement only.
    pub(crate) below_thresholds: Vec<&'a ChangeRow>,
}

/// The threshold and floor that judged `row` of `run`: the comparison's recorded test where there
/// is one, else the suite's thresholds for the target.
fn limits(run: &RunView, suite: &Suite, row: &ChangeRow) -> (f64, f64) {
    let th = suite.thresholds_for(row.target());
    let reference = match row {
        ChangeRow::Speedup { .. } => th.speedup_regression_pct,
        ChangeRow::OptimizedLatency { .. } => th.optimized_latency_regression_pct,
        ChangeRow::MemorySavings { .. } => th.memory_savings_regression_points,
        ChangeRow::OptimizedMemory { .. } => th.optimized_memory_regression_pct,
        ChangeRow::Status { .. } => 0.0,
    };
    let test = run
        .regression
        .detection
        .as_ref()
        .and_then(|d| d.target(row.target()))
        .and_then(|t| t.tests.iter().find(|m| m.metric == row.reason()));
    (
        test.and_then(|m| m.threshold_pct)
            .map_or(reference, f64::from),
        test.and_then(|m| m.floor_ms)
            .map_or(th.min_optimized_time_delta_ms, f64::from),
    )
}

/// How much worse `row` is, in its threshold's unit (positive: worse).
fn worse_by(row: &ChangeRow) -> f64 {
    match row {
        ChangeRow::Speedup { delta_pct, .. } => -delta_pct.get(),
        ChangeRow::OptimizedLatency { delta_pct, .. } => delta_pct.get(),
        ChangeRow::MemorySavings { delta_points, .. } => -delta_points.get(),
        ChangeRow::OptimizedMemory { delta_pct, .. } => delta_pct.get(),
        ChangeRow::Status { .. } => f64::INFINITY,
    }
}

/// The optimized time's change (ms) of a row the floor applies to.
fn time_delta_ms(row: &ChangeRow) -> Option<f64> {
    match row {
        ChangeRow::Speedup {
            optimized_time_delta_ms,
            ..
        } => *optimized_time_delta_ms,
        ChangeRow::OptimizedLatency {
            optimized_time_delta_ms,
            ..
        } => Some(*optimized_time_delta_ms),
        _ => None,
    }
    .map(f64::from)
    .filter(|d| d.is_finite())
}

/// The floor rule, worded as the comparison words it.
pub(crate) fn floor_rule(delta_ms: f64, floor_ms: f64) -> String {
    format!(
        "min_optimized_time_delta_ms: the optimized time moved {} ms, under the {} ms floor",
        crate::text::fmt_sig(delta_ms.abs(), 3),
        crate::text::fmt_sig(floor_ms, 3)
    )
}

/// Sort the declines of `run` (judged by `suite` where the record does not say).
pub(crate) fn split<'a>(run: &'a RunView, suite: &Suite) -> Declines<'a> {
    let r = &run.regression;
    let key = |c: &ChangeRow| (c.target().to_string(), c.reason());
    let elsewhere: BTreeSet<_> = r
        .regressions
        .iter()
        .chain(r.within_noise.iter())
        .chain(r.held_by_floor.iter().map(|h| &h.row))
        .chain(r.suppressed_regressions.iter().map(|s| &s.row))
        .map(key)
        .collect();
    let regressed: BTreeSet<&str> = r
        .regressions
        .iter()
        .chain(r.suppressed_regressions.iter().map(|s| &s.row))
        .map(ChangeRow::target)
        .collect();
    let mut out = Declines::default();
    for row in r
        .anchor_declines
        .iter()
        .filter(|c| !elsewhere.contains(&key(c)))
    {
        let (threshold, floor) = limits(run, suite, row);
        if worse_by(row) < threshold - EPS {
            out.below_thresholds.push(row);
        } else if regressed.contains(row.target()) {
            out.on_regressed_target.push(row);
        } else if let Some(d) = time_delta_ms(row).filter(|d| d.abs() < floor - EPS) {
            out.under_floor.push((row, floor_rule(d, floor)));
        } else {
            out.beyond_unfiled.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::testkit::*;

    fn latency(ms_before: f64, ms_after: f64) -> ChangeRow {
        change(
            serde_json::json!({"target": "labs/gemm:gemm", "reason": "optimized_latency",
            "before": ms_before, "after": ms_after,
            "delta_pct": (ms_after - ms_before) / ms_before * 100.0,
            "optimized_time_delta_ms": ms_after - ms_before}),
        )
    }

    #[test]
    fn a_large_worsening_is_never_below_the_thresholds() {
        let mut run = compared(run("r2", 2, "accepted", 1.5), "r1");
        let suite = Suite::embedded();
        // Speedup −25 % is the regression; the same target's latency +33 % is counted with it.
        run.regression
            .regressions
            .push(gemm_speedup_change(2.0, 1.5));
        run.regression
            .anchor_declines
            .push(gemm_speedup_change(2.0, 1.5));
        run.regression.anchor_declines.push(latency(5.0, 6.667));
        // kv: +28 % latency of a microsecond kernel, under the 0.05 ms floor.
        let kv = change(
            serde_json::json!({"target": "labs/kv:kv", "reason": "optimized_latency",
            "before": 0.01, "after": 0.0128, "delta_pct": 28.0, "optimized_time_delta_ms": 0.0028}),
        );
        run.regression.anchor_declines.push(kv);
        // A 0.5 % decline: below the thresholds.
        let small = change(
            serde_json::json!({"target": "labs/x:x", "reason": "speedup",
            "before": 2.0, "after": 1.99, "delta_pct": -0.5, "optimized_time_delta_ms": 0.01}),
        );
        run.regression.anchor_declines.push(small);
        let d = split(&run, &suite);
        let reasons = |v: &[&ChangeRow]| -> Vec<String> {
            v.iter()
                .map(|c| format!("{} {}", c.target(), c.reason()))
                .collect()
        };
        assert_eq!(
            reasons(&d.on_regressed_target),
            ["labs/gemm:gemm optimized_latency"]
        );
        assert_eq!(d.under_floor.len(), 1, "{d:?}");
        assert_eq!(d.under_floor[0].0.target(), "labs/kv:kv");
        assert!(
            d.under_floor[0].1.contains("under the 0.0500 ms floor"),
            "{}",
            d.under_floor[0].1
        );
        assert_eq!(reasons(&d.below_thresholds), ["labs/x:x speedup"]);
        assert!(d.beyond_unfiled.is_empty());
    }
}
