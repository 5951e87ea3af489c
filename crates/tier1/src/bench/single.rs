//! Single benchmarks (`optimization_goal: time`): a target with one variant, whose absolute time
//! is its metric (no speedup, no pair). Its time is estimated exactly as a pair's optimized time
//! is ([`estimate::pair`]): the median of its samples with the distribution-free 95 % interval
//! (an anchor's passes pooled as a pair's are), so the latency rule and the significance test
//! treat both alike. Its measurement record keeps that median and interval in the
//! `optimized_*` fields (the one measured variant) and has no speedup interval. Its verdict is
//! derived with every other target's, in `crate::bench::result::derive`.

use crate::bench::estimate::{self, Estimator, PairEstimate};
use crate::history::Measurement;
use crate::json::Finite;

/// The estimate of one variant's samples (in round order): the samples paired with themselves,
/// so `optimized_ms` and `optimized_ci` are its median and interval; an anchor's passes
/// (`rounds_per_pass`) are pooled with the disagreeing ones left out. `None` when no sample is
/// positive.
pub(crate) fn estimate(
    samples: &[f64],
    estimator: Estimator,
    rounds_per_pass: Option<&[u32]>,
) -> Option<PairEstimate> {
    match rounds_per_pass {
        Some(rounds) => {
            let counts: Vec<(u32, u32)> = rounds.iter().map(|&r| (r, r)).collect();
            estimate::pooled(estimator, samples, samples, &counts)
        }
        None => estimator.pair(samples, samples),
    }
}

/// Whether one variant's samples are precise enough to stop: its time's interval lies within
/// `precision_pct` of the estimate.
pub(crate) fn precise_now(samples: &[f64], precision_pct: f64) -> bool {
    estimate(samples, Estimator::PairedMedian, None)
        .and_then(|e| e.optimized_half_width_pct())
        .is_some_and(|w| w <= precision_pct + 1e-9)
}

/// The measurement record of a single benchmark's one variant (`samples`, batched `repetitions`
/// executions per sample, coefficient of variation `cv`) from its estimate `e`: its rounds, its
/// median and interval (in the `optimized_*` fields), precise when that interval is within the
/// sampling's `precision_pct` and the device did not throttle, with the anchor's passes.
pub(crate) fn measurement(
    samples: &[f64],
    repetitions: u32,
    cv: Finite,
    e: &PairEstimate,
    sampling: Conditions,
    estimator: Estimator,
) -> Measurement {
    let Conditions {
        precision_pct,
        throttled,
        precision_required,
        overloaded,
    } = sampling;
    let reached = e
        .optimized_half_width_pct()
        .is_some_and(|w| w <= precision_pct + 1e-9);
    Measurement {
        confidence: crate::history::measurement::CONFIDENCE.into(),
        rounds: u32::try_from(e.pairs).unwrap_or(u32::MAX),
        clean_rounds: u32::try_from(e.clean).unwrap_or(u32::MAX),
        baseline_repetitions: repetitions,
        optimized_repetitions: repetitions,
        speedup_ci_low: None,
        speedup_ci_high: None,
        optimized_median_ms: e.optimized_ms.into(),
        optimized_ci_low_ms: e.optimized_ci.map(|c| c.0.into()),
        optimized_ci_high_ms: e.optimized_ci.map(|c| c.1.into()),
        speedup_cv: 0.0.into(),
        baseline_cv: cv,
        optimized_cv: cv,
        outliers: crate::stats::tukey_outliers(samples),
        precision_pct: precision_pct.into(),
        precise: reached && !throttled,
        throttled,
        estimator: estimator.stated().map(Into::into),
        precision_required: estimator.stated().map(|_| precision_required),
        passes: pass_values(e),
        overloaded,
    }
}

/// What the sampling of a measurement asked for and saw (from the results file's `sampling`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conditions {
    /// The precision asked for (percent).
    pub(crate) precision_pct: f64,
    /// The device throttled during the kept measurement.
    pub(crate) throttled: bool,
    /// The profile requires an anchor to reach the precision.
    pub(crate) precision_required: bool,
    /// The machine was overloaded during the kept measurement.
    pub(crate) overloaded: Option<crate::history::overload::Overload>,
}

/// The passes of an estimate as the measurement record keeps them.
pub(crate) fn pass_values(e: &PairEstimate) -> Vec<crate::history::measurement::PassValue> {
    e.passes
        .iter()
        .map(|p| crate::history::measurement::PassValue {
            rounds: u32::try_from(p.rounds).unwrap_or(u32::MAX),
            speedup: Finite::checked(p.speedup),
            optimized_ms: Finite::checked(p.optimized_ms),
            outlier: p.outlier,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{
        InputSignature, Metrics, Role, Sampling, TargetResult, VariantResult, VariantVerification,
        empty_result, status,
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
            precision_pct: 1.0.into(),
            order_seed: 42,
            budget_exhausted: false,
            remeasured: false,
            throttled: Vec::new(),
            machine: Vec::new(),
            clock: None,
            precision_required: false,
            passes: Vec::new(),
        });
        t
    }

    const STEADY: [f64; 12] = [
        10.0, 10.01, 10.02, 9.99, 10.0, 10.03, 10.01, 9.98, 10.0, 10.02, 10.01, 10.0,
    ];

    fn derive(t: &TargetResult) -> (String, Option<String>, Metrics) {
        crate::bench::result::derive(t, 1.05, Estimator::PairedMedian)
    }

    #[test]
    fn one_variant_succeeds_with_its_time_as_the_metric() {
        let (s, msg, m) = derive(&single(vec![variant("baseline", &STEADY)]));
        assert_eq!((s.as_str(), msg), (status::SUCCEEDED, None));
        let time = m.baseline_time_ms.unwrap().get();
        assert!((time - 10.0).abs() < 0.01, "{time}");
        assert_eq!((m.best_speedup, m.best_optimization.as_ref()), (None, None));
        let r = m.measurement.unwrap();
        assert_eq!(r.optimized_median_ms, time);
        assert_eq!((r.speedup_ci_low, r.speedup_ci_high), (None, None));
        let (lo, hi) = (
            r.optimized_ci_low_ms.unwrap().get(),
            r.optimized_ci_high_ms.unwrap().get(),
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
            max_abs_err: 0.5.into(),
            max_rel_err: 0.1.into(),
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
