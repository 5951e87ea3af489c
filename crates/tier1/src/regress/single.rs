//! The comparison of a single benchmark (`optimization_goal: time`) with its anchor: one variant,
//! judged on its absolute time alone (no speedup, no pair). Its time is the row's
//! `baseline_time_ms` ([`crate::aggregate::optimized_time_ms`] returns it for this goal, so the
//! significance test of [`super::significance`] tests ln(time) with the runs' within-run
//! intervals and the history's run-to-run noise, exactly as it tests a pair's optimized time).

use super::changes::{Counted, TargetChanges};
use super::noise::Metric;
use super::significance::TargetDecision;
use crate::aggregate::optimized_time_ms;
use crate::history::model::TargetSummary;
use crate::suite::Thresholds;

/// File the time change of a single benchmark: a regression when the time grew by at least
/// `optimized_latency_regression_pct`, by at least `min_optimized_time_delta_ms` in absolute
/// terms and (under `detection: statistical`) significantly; the mirror image is an
/// improvement; any growth is an anchor decline. The row is an `optimized_latency` row (the
/// single variant's time before and after).
pub(super) fn time_checks(
    cur: &TargetSummary,
    prev: &TargetSummary,
    th: &Thresholds,
    decision: &TargetDecision,
    ch: &mut TargetChanges,
) {
    if let Some(times) = optimized_time_ms(prev).zip(optimized_time_ms(cur)) {
        let test = decision.verdict(Metric::OptimizedLatency);
        ch.record_latency(&cur.target, times, th, test, Counted::default());
    }
}

#[cfg(test)]
mod tests {
    use crate::aggregate::fixtures::{measured, speed_target};
    use crate::history::model::{ChangeRow, Summary, TargetSummary};
    use crate::regress::compare;
    use crate::suite::Thresholds;

    /// A succeeded single benchmark row: `ms` is its time, measured to ±`half_width_pct`.
    fn single(ms: f64, half_width_pct: f64) -> TargetSummary {
        let mut t = speed_target("decode", ms, 1.0);
        t.optimization_goal = Some("time".into());
        t.best_speedup = None;
        t.best_optimized_time_ms = None;
        t.best_optimization = None;
        let mut t = measured(t, half_width_pct);
        if let Some(m) = t.measurement.as_mut() {
            (m.speedup_ci_low, m.speedup_ci_high) = (None, None);
        }
        t
    }

    fn summary(run_id: &str, t: TargetSummary) -> Summary {
        crate::aggregate::fixtures::summary(run_id, vec![t])
    }

    fn judge(
        before: TargetSummary,
        after: TargetSummary,
    ) -> crate::history::model::RegressionSummary {
        compare(
            &summary("cur", after),
            Some(&summary("anchor", before)),
            Thresholds::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_twenty_percent_slowdown_is_a_regression_row() {
        let r = judge(single(10.0, 0.5), single(12.0, 0.5));
        assert_eq!(r.regressions.len(), 1, "{r:?}");
        match &r.regressions[0] {
            ChangeRow::OptimizedLatency {
                before,
                after,
                delta_pct,
                ..
            } => {
                assert_eq!((before.get(), after.get()), (10.0, 12.0));
                assert!((delta_pct.get() - 20.0).abs() < 1e-9);
            }
            other => panic!("expected an optimized_latency row, found {other:?}"),
        }
        let d = &r.detection.as_ref().unwrap().targets[0];
        assert_eq!(d.method, crate::suite::DetectionMethod::Statistical);
        assert_eq!(d.tests.len(), 1, "one test, ln(time): {d:?}");
        assert!(d.tests[0].significant && d.tests[0].metric == "optimized_latency");
    }

    #[test]
    fn an_unchanged_time_passes() {
        let r = judge(single(10.0, 0.5), single(10.02, 0.5));
        assert!(
            r.regressions.is_empty() && r.improvements.is_empty(),
            "{r:?}"
        );
        assert!(r.within_noise.is_empty());
    }

    #[test]
    fn a_speedup_is_an_improvement_and_noise_is_not_a_regression() {
        let r = judge(single(10.0, 0.5), single(8.0, 0.5));
        assert_eq!(r.improvements.len(), 1, "{r:?}");
        // Over the threshold but measured to ±40 %: neither a regression nor a pass. The verdict
        // is unknown, and its reason speaks of the time alone (no speedup to speak of).
        let r = judge(single(10.0, 0.5), single(10.6, 40.0));
        assert!(r.regressions.is_empty(), "{r:?}");
        assert_eq!(r.inconclusive.len(), 1, "{r:?}");
        let why = &r.inconclusive[0].reason;
        assert!(
            why.contains("optimized_latency 10.00 ms -> 10.60 ms")
                && why.contains("not ruled out")
                && !why.contains("speedup"),
            "{why}"
        );
        let d = &r.detection.as_ref().unwrap().targets[0];
        assert_eq!(
            d.verdict,
            Some(crate::history::detection::Verdict::Unknown),
            "{d:?}"
        );
    }

    #[test]
    fn the_floor_holds_back_tiny_absolute_changes() {
        let r = judge(single(0.1, 0.5), single(0.13, 0.5));
        assert!(
            r.regressions.is_empty(),
            "+30 % of 0.1 ms is under the 0.05 ms floor: {r:?}"
        );
        assert_eq!(r.anchor_declines.len(), 1);
    }
}
