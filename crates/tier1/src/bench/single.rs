//! Single benchmarks (`optimization_goal: time`): a target with one variant, whose absolute time
//! is its metric (no speedup, no pair). Its time is estimated exactly as a pair's optimized time
//! is ([`estimate::pair`]): the median of its clean rounds (samples at or below the variant's
//! median) with the distribution-free 95 % interval, so the latency rule and the significance
//! test treat both alike. Its measurement record keeps that median and interval in the
//! `optimized_*` fields (the one measured variant) and has no speedup interval.

use crate::bench::estimate::{self, PairEstimate};
use crate::bench::result::{Metrics, TargetResult, VariantResult, bytes_to_mb, status};

/// The estimate of one variant's samples (in round order): the samples paired with themselves,
/// so `optimized_ms` and `optimized_ci` are its clean median and interval. `None` when no sample
/// is positive.
pub fn estimate(samples: &[f64]) -> Option<PairEstimate> {
    estimate::pair(samples, samples)
}

/// Whether one variant's samples are precise enough to stop: its time's interval lies within
/// `precision_pct` of the estimate.
pub fn precise_now(samples: &[f64], precision_pct: f64) -> bool {
    estimate(samples)
        .and_then(|e| e.optimized_half_width_pct())
        .is_some_and(|w| w <= precision_pct + 1e-9)
}

/// Status, message and metrics of a single benchmark from its raw facts: it succeeds when its
/// one variant ran and has a positive time; a second variant (the target reports a pair under a
/// `time` goal) or a failed reference check of its output fail it.
pub fn derive(t: &TargetResult) -> (String, Option<String>, Metrics) {
    let mut m = Metrics::default();
    let only = t.variants.first();
    if let Some(v) = only {
        m.baseline_time_ms = Some(v.stats.median_ms);
        m.baseline_p75_ms = Some(v.stats.p75_ms);
        m.baseline_memory_mb = v.memory_peak_bytes.map(bytes_to_mb);
        if t.sampling.is_some()
            && let Some(e) = estimate(&v.samples_ms)
        {
            m.baseline_time_ms = Some(e.optimized_ms);
            m.measurement = Some(measurement(t, v, &e));
        }
    }
    let fail = |st: &str, msg: String, m: Metrics| (st.to_string(), Some(msg), m);
    if let Some(f) = &t.failure {
        return fail(&f.status, f.message.clone(), m);
    }
    let Some(v) = only else {
        return fail(status::FAILED_ERROR, "no variant was measured".into(), m);
    };
    if t.variants.len() > 1 {
        let names: Vec<&str> = t.variants.iter().map(|v| v.name.as_str()).collect();
        return fail(
            status::FAILED_ERROR,
            format!(
                "optimization_goal time (a single benchmark) measures exactly one variant, found {}: {}; give the target optimization_goal speed to compare them",
                names.len(),
                names.join(", ")
            ),
            m,
        );
    }
    if let Some(ver) = &v.verification
        && !ver.passed
    {
        return fail(
            status::FAILED_VERIFICATION,
            format!(
                "{} output differs from its reference: {} of {} elements outside tolerance (max abs err {:.3e}){}",
                v.name,
                ver.mismatches,
                ver.elements,
                ver.max_abs_err,
                ver.message
                    .as_deref()
                    .map(|s| format!("; {s}"))
                    .unwrap_or_default()
            ),
            m,
        );
    }
    if !m.baseline_time_ms.is_some_and(|x| x > 0.0) {
        return fail(
            status::FAILED_ERROR,
            "no positive timing was measured".into(),
            m,
        );
    }
    (status::SUCCEEDED.into(), None, m)
}

/// The measurement record of a single benchmark: its rounds, its clean median and interval (in
/// the `optimized_*` fields), precise when that interval is within the precision asked for and
/// the device did not throttle.
fn measurement(
    t: &TargetResult,
    v: &VariantResult,
    e: &PairEstimate,
) -> crate::history::Measurement {
    let sampling = t.sampling.as_ref();
    let precision_pct = sampling.map_or(crate::bench::result::DEFAULT_PRECISION_PCT, |s| {
        s.precision_pct
    });
    let throttled = sampling.is_some_and(|s| !s.throttled.is_empty());
    let reached = e
        .optimized_half_width_pct()
        .is_some_and(|w| w <= precision_pct + 1e-9);
    crate::history::Measurement {
        confidence: crate::history::measurement::CONFIDENCE,
        rounds: u32::try_from(e.pairs).unwrap_or(u32::MAX),
        clean_rounds: u32::try_from(e.clean).unwrap_or(u32::MAX),
        baseline_repetitions: v.repetitions,
        optimized_repetitions: v.repetitions,
        speedup_ci_low: None,
        speedup_ci_high: None,
        optimized_median_ms: e.optimized_ms,
        optimized_ci_low_ms: e.optimized_ci.map(|c| c.0),
        optimized_ci_high_ms: e.optimized_ci.map(|c| c.1),
        speedup_cv: 0.0,
        baseline_cv: v.stats.cv,
        optimized_cv: v.stats.cv,
        outliers: crate::stats::tukey_outliers(&v.samples_ms),
        precision_pct,
        precise: reached && !throttled,
        throttled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{
        InputSignature, Role, Sampling, TargetResult, VariantVerification, empty_result,
    };
    use crate::bench::stats::Stats;
    use crate::suite::{Goal, Suite, TargetKind};

    fn variant(name: &str, samples: &[f64]) -> VariantResult {
        VariantResult {
            name: name.into(),
            role: if name == "baseline" {
                Role::Baseline
            } else {
                Role::Optimized
            },
            input_signature: InputSignature {
                seed: 42,
                inputs: Vec::new(),
            },
            samples_ms: samples.to_vec(),
            repetitions: 3,
            stats: Stats::of(samples).unwrap(),
            memory_peak_bytes: None,
            verification: None,
        }
    }

    fn single(variants: Vec<VariantResult>) -> TargetResult {
        let suite = Suite::embedded();
        let mut t = empty_result(&suite.targets[0], &Default::default());
        t.kind = TargetKind::Command;
        t.optimization_goal = Goal::Time;
        t.variants = variants;
        t.sampling = Some(Sampling {
            rounds: 12,
            processes: 1,
            precision_pct: 1.0,
            order_seed: 42,
            budget_exhausted: false,
            remeasured: false,
            throttled: Vec::new(),
            machine: Vec::new(),
        });
        t
    }

    const STEADY: [f64; 12] = [
        10.0, 10.01, 10.02, 9.99, 10.0, 10.03, 10.01, 9.98, 10.0, 10.02, 10.01, 10.0,
    ];

    #[test]
    fn one_variant_succeeds_with_its_time_as_the_metric() {
        let (s, msg, m) = derive(&single(vec![variant("baseline", &STEADY)]));
        assert_eq!((s.as_str(), msg), (status::SUCCEEDED, None));
        let time = m.baseline_time_ms.unwrap();
        assert!((time - 10.0).abs() < 0.01, "{time}");
        assert_eq!((m.best_speedup, m.best_optimization.as_ref()), (None, None));
        let r = m.measurement.unwrap();
        assert_eq!(r.optimized_median_ms, time);
        assert_eq!((r.speedup_ci_low, r.speedup_ci_high), (None, None));
        let (lo, hi) = (
            r.optimized_ci_low_ms.unwrap(),
            r.optimized_ci_high_ms.unwrap(),
        );
        assert!(lo <= time && time <= hi && hi - lo < 0.1, "{lo} {hi}");
        assert!(r.precise && r.optimized_repetitions == 3);
    }

    #[test]
    fn a_second_variant_or_a_failed_reference_check_fails_it() {
        let (s, msg, _) = derive(&single(vec![
            variant("baseline", &STEADY),
            variant("optimized_x", &STEADY),
        ]));
        assert_eq!(s, status::FAILED_ERROR);
        let msg = msg.unwrap();
        assert!(
            msg.contains("exactly one variant, found 2: baseline, optimized_x"),
            "{msg}"
        );
        let mut v = variant("baseline", &STEADY);
        v.verification = Some(VariantVerification {
            passed: false,
            elements: 8,
            mismatches: 2,
            max_abs_err: 0.5,
            max_rel_err: 0.1,
            reference: None,
            message: None,
        });
        let (s, msg, _) = derive(&single(vec![v]));
        assert_eq!(s, status::FAILED_VERIFICATION);
        assert!(msg.unwrap().contains("2 of 8 elements"));
        let (s, msg, _) = derive(&single(vec![]));
        assert_eq!(
            (s.as_str(), msg.as_deref()),
            (status::FAILED_ERROR, Some("no variant was measured"))
        );
        let (s, _, _) = derive(&single(vec![variant("baseline", &[0.0, 0.0])]));
        assert_eq!(s, status::FAILED_ERROR);
    }

    #[test]
    fn precision_is_the_time_interval() {
        assert!(precise_now(&STEADY, 1.0));
        let noisy: Vec<f64> = (0..12).map(|i| 10.0 + f64::from(i % 4)).collect();
        assert!(!precise_now(&noisy, 1.0));
        assert!(
            !precise_now(&STEADY[..3], 1.0),
            "three samples give no interval"
        );
        let (_, _, m) = derive(&single(vec![variant("baseline", &noisy)]));
        assert!(!m.measurement.unwrap().precise);
    }
}
