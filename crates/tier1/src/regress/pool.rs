//! Two measurements of one target in one night, pooled into one: the first run's row and its
//! recheck's. Each metric (ln speedup, ln optimized time) is the inverse-variance weighted mean
//! of the two, with the variance of that mean (`1 / Σ 1/vᵢ`), so an extra measurement narrows
//! the interval instead of being a second coin toss; the pooled row carries the matching 95 %
//! intervals. Two measurements that disagree beyond their own intervals (more than
//! [`CONSISTENT_Z`] standard errors apart on a metric: a transient disturbed one of them) are not
//! pooled, nor are rows without a measurement record or whose intervals are unknown: the
//! recheck's own row then decides, as in the reference.

use super::noise::Metric;
use crate::history::Measurement;
use crate::history::model::TargetSummary;

/// Estimator name recorded on a pooled row's measurement.
pub(crate) const POOLED: &str = "pooled_first_and_recheck";
/// Two measurements of one night further apart than this many standard errors of their
/// difference (`|y₁ − y₂| / √(v₁ + v₂)`) on a metric are not the same quantity: not pooled.
pub(crate) const CONSISTENT_Z: f64 = 3.0;

/// The first row and its recheck's, pooled; `None` when they cannot be (a row without a
/// measurement record or a usable interval).
pub(crate) fn pool(first: &TargetSummary, recheck: &TargetSummary) -> Option<TargetSummary> {
    let (m1, m2) = (first.measurement.as_ref()?, recheck.measurement.as_ref()?);
    let speed = combine(
        Metric::Speedup.point(first)?,
        Metric::Speedup.point(recheck)?,
    )?;
    let time = combine(
        Metric::OptimizedLatency.point(first)?,
        Metric::OptimizedLatency.point(recheck)?,
    )?;
    let z = crate::stats::normal_quantile(0.5 + m1.confidence.get() / 2.0);
    let interval = |(y, v): (f64, f64)| ((y - z * v.sqrt()).exp(), (y + z * v.sqrt()).exp());
    let (s_lo, s_hi) = interval(speed);
    let (o_lo, o_hi) = interval(time);
    let (speedup, optimized) = (speed.0.exp(), time.0.exp());
    let mut row = first.clone();
    row.best_speedup = Some(speedup.into());
    row.best_optimized_time_ms = Some(optimized.into());
    row.baseline_time_ms = Some((optimized * speedup).into());
    let half = |lo: f64, mid: f64, hi: f64| (hi - mid).max(mid - lo) / mid * 100.0;
    let precision = m1.precision_pct.get() + 1e-9;
    let reached =
        half(s_lo, speedup, s_hi) <= precision && half(o_lo, optimized, o_hi) <= precision;
    row.measurement = Some(Measurement {
        rounds: m1.rounds.saturating_add(m2.rounds),
        clean_rounds: m1.clean_rounds.saturating_add(m2.clean_rounds),
        speedup_ci_low: Some(s_lo.into()),
        speedup_ci_high: Some(s_hi.into()),
        optimized_median_ms: optimized.into(),
        optimized_ci_low_ms: Some(o_lo.into()),
        optimized_ci_high_ms: Some(o_hi.into()),
        precise: reached && !(m1.throttled || m2.throttled),
        throttled: m1.throttled || m2.throttled,
        estimator: Some(POOLED.into()),
        passes: Vec::new(),
        overloaded: m1.overloaded.or(m2.overloaded),
        ..m1.clone()
    });
    Some(row)
}

/// Inverse-variance mean of two (log value, variance) points; `None` when a variance is not
/// positive (an interval the row did not record) or the two disagree beyond [`CONSISTENT_Z`].
fn combine(a: (f64, f64), b: (f64, f64)) -> Option<(f64, f64)> {
    if !(a.1 > 0.0 && b.1 > 0.0) {
        return None;
    }
    if (a.0 - b.0).abs() > CONSISTENT_Z * (a.1 + b.1).sqrt() {
        return None;
    }
    let (wa, wb) = (1.0 / a.1, 1.0 / b.1);
    Some(((wa * a.0 + wb * b.0) / (wa + wb), 1.0 / (wa + wb)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::speed_opt;

    fn measured(speedup: f64, opt_ms: f64, half_pct: f64) -> TargetSummary {
        crate::aggregate::fixtures::measured(speed_opt("a", speedup, opt_ms), half_pct)
    }

    #[test]
    fn pooling_weights_by_precision_and_narrows_the_interval() {
        let a = measured(2.0, 50.0, 4.0);
        let b = measured(2.1, 48.0, 4.0);
        let p = pool(&a, &b).expect("both measured, consistent");
        let s = p.best_speedup.unwrap().get();
        assert!(
            (s - (2.0f64 * 2.1).sqrt()).abs() < 1e-9,
            "equal weights: geometric mean, {s}"
        );
        let m = p.measurement.as_ref().unwrap();
        let w = m.speedup_half_width_pct(s).unwrap();
        assert!(w < 3.0, "two ±4 % measurements pool to about ±2.8 %: {w}");
        assert_eq!(m.estimator.as_deref(), Some(POOLED));
        let opt = p.best_optimized_time_ms.unwrap().get();
        assert!((p.baseline_time_ms.unwrap().get() / s - opt).abs() < 1e-9);
        // A tighter recheck dominates.
        let tight = measured(2.1, 48.0, 0.5);
        let p = pool(&a, &tight).unwrap();
        assert!((p.best_speedup.unwrap().get() - 2.1).abs() < 0.01);
    }

    #[test]
    fn measurements_that_disagree_beyond_their_intervals_are_not_pooled() {
        // A first measurement disturbed by a transient (1.33x at ±1 %) and a clean recheck (2x at
        // ±1 %) are not one quantity: the recheck alone decides, as in the reference.
        assert!(pool(&measured(1.333, 50.0, 1.0), &measured(2.0, 50.0, 1.0)).is_none());
        // Within their intervals they pool.
        assert!(pool(&measured(1.98, 50.0, 1.0), &measured(2.0, 50.2, 1.0)).is_some());
    }

    #[test]
    fn rows_without_intervals_are_not_pooled() {
        let a = speed_opt("a", 2.0, 50.0);
        assert!(pool(&a, &measured(2.0, 50.0, 1.0)).is_none());
        assert!(pool(&measured(2.0, 50.0, 1.0), &a).is_none());
    }
}
