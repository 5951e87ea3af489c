//! A target's verdict and metrics derived from its raw facts ([`derive()`]), and the helpers the
//! harness shares with it (MB conversion, the speed-gate message).

use super::format::{
    DEFAULT_PRECISION_PCT, Metrics, RESULTS_SCHEMA_VERSION, Role, TargetResult, VariantResult,
    status,
};
use crate::bench::estimate::{self, Estimator};
use crate::json::Finite;
use crate::suite::Goal;

/// Bytes to MB (2^20).
pub(crate) fn bytes_to_mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The speed-gate message of the reference harness.
pub(crate) fn no_speedup_message(best: f64, min: f64) -> String {
    // The reference's two decimals, more where they would print the two values the same
    // (1.047 against 1.05 reads 1.047x below 1.050x, never 1.05x below 1.05x).
    let (best, min) = crate::text::fmt_apart(best, min, 2);
    format!("Best speedup {best}x below required {min}x threshold for speed-goal benchmark")
}

/// Status, message and metrics of a target, from its raw facts only. A variant counts as verified
/// when it has a passing verification record and the baseline's input signature; any optimized
/// variant that is unverified fails the whole target (fail closed).
/// A single benchmark (`optimization_goal: time`, one variant) succeeds when its variant ran with a
/// positive time; its time and interval come from [`crate::bench::single`].
pub(crate) fn derive(
    t: &TargetResult,
    min_speedup: f64,
    estimator: Estimator,
) -> (String, Option<String>, Metrics) {
    if t.optimization_goal == Goal::Time {
        return derive_single(t, estimator);
    }
    let min_speedup = t.min_speedup.map_or(min_speedup, f64::from);
    let mut m = Metrics::default();
    let base = t.variants.first().filter(|v| v.role == Role::Baseline);
    if let Some(b) = base {
        m.baseline_time_ms = Some(b.stats.median_ms);
        m.baseline_p75_ms = Some(b.stats.p75_ms);
        m.baseline_memory_mb = b.memory_peak_bytes.map(bytes_to_mb).map(Finite::from);
    }
    let mut problems: Vec<String> = base.and_then(baseline_problem).into_iter().collect();
    let optimized: Vec<&VariantResult> = t
        .variants
        .iter()
        .filter(|v| v.role == Role::Optimized)
        .collect();
    let mut best: Option<(&VariantResult, estimate::PairEstimate)> = None;
    if let Some(b) = base {
        for (k, v) in optimized.iter().enumerate() {
            if let Err(problem) = check_variant(b, v, &mut m) {
                problems.push(problem);
                continue;
            }
            // The variant's index in the file (the baseline is index 0).
            let index = t
                .variants
                .iter()
                .position(|x| std::ptr::eq(x, *v))
                .unwrap_or(k + 1);
            let pair = pair_estimate(t, b, v, index, estimator);
            if let Some(s) = speedup(t, b, v, pair.as_ref())
                && m.best_speedup.is_none_or(|best| s > best)
            {
                m.best_speedup = Some(s.into());
                m.best_optimization = Some(v.name.clone());
                best = t.sampling.as_ref().and(pair).map(|e| (*v, e));
            }
            record_memory_savings(b, v, &mut m);
        }
    }
    if let (Some(b), Some((v, e))) = (base, best) {
        // The baseline time of the clean rounds, so best_optimized_time_ms (baseline / speedup)
        // is the optimized time of the same rounds.
        m.baseline_time_ms = Some(e.baseline_ms.into());
        m.measurement = Some(measurement(t, b, v, &e, &m, estimator));
    }
    if let Some(f) = &t.failure {
        return (f.status.clone(), Some(f.message.clone()), m);
    }
    if base.is_none() {
        return (
            status::FAILED_ERROR.into(),
            Some("no baseline variant was measured".into()),
            m,
        );
    }
    if optimized.is_empty() {
        problems.push(
            "no optimized variant was measured (a benchmark without one is a single benchmark: optimization_goal time, docs/suite.md)"
                .into(),
        );
    }
    if !problems.is_empty() {
        return (
            status::FAILED_VERIFICATION.into(),
            Some(problems.join("; ")),
            m,
        );
    }
    let (status, message) = match t.optimization_goal {
        Goal::Speed => speed_verdict(&m, min_speedup),
        Goal::Memory => memory_verdict(&m),
        Goal::Time => return derive_single(t, estimator),
    };
    (status, message, m)
}

/// Why the baseline fails the target: its output differs from the f64 reference.
fn baseline_problem(b: &VariantResult) -> Option<String> {
    let ver = b.verification.as_ref().filter(|ver| !ver.passed)?;
    Some(format!(
        "baseline output differs from the f64 reference{}",
        ver.reference
            .as_ref()
            .map(|r| format!(" (max abs err {:.3e})", r.max_abs_err))
            .unwrap_or_default()
    ))
}

/// Whether optimized variant `v` counts (the baseline's input signature, a verification record
/// that passed), else why not. A verified record's errors raise the target's maxima, passed or not.
fn check_variant(b: &VariantResult, v: &VariantResult, m: &mut Metrics) -> Result<(), String> {
    if v.input_signature != b.input_signature {
        return Err(format!(
            "input signature of {} ({}) differs from baseline ({})",
            v.name,
            v.input_signature.describe(),
            b.input_signature.describe()
        ));
    }
    let Some(ver) = &v.verification else {
        return Err(format!("missing verification for {}", v.name));
    };
    m.max_abs_err = Some(m.max_abs_err.unwrap_or_default().max(ver.max_abs_err));
    m.max_rel_err = Some(m.max_rel_err.unwrap_or_default().max(ver.max_rel_err));
    if !ver.passed {
        return Err(format!(
            "{} output differs from baseline: {} of {} elements outside tolerance (max abs err {:.3e}, max rel err {:.3e}){}",
            v.name,
            ver.mismatches,
            ver.elements,
            ver.max_abs_err,
            ver.max_rel_err,
            ver.message
                .as_deref()
                .map(|s| format!("; {s}"))
                .unwrap_or_default()
        ));
    }
    Ok(())
}

/// The estimate of the pair baseline `b` / variant `v` (at `index` in the file): pooled over the
/// passes when there are several, else over the samples.
fn pair_estimate(
    t: &TargetResult,
    b: &VariantResult,
    v: &VariantResult,
    index: usize,
    estimator: Estimator,
) -> Option<estimate::PairEstimate> {
    match t.sampling.as_ref().filter(|s| s.passes.len() > 1) {
        Some(s) => {
            let counts: Vec<(u32, u32)> = s
                .passes
                .iter()
                .map(|p| (p.samples_of(0), p.samples_of(index)))
                .collect();
            estimate::pooled(estimator, &b.samples_ms, &v.samples_ms, &counts)
        }
        None => estimator.pair(&b.samples_ms, &v.samples_ms),
    }
}

/// The speedup of `v` over `b`: the pair's estimate, or for version 1 files (no rounds) the ratio
/// of medians they were written with.
fn speedup(
    t: &TargetResult,
    b: &VariantResult,
    v: &VariantResult,
    pair: Option<&estimate::PairEstimate>,
) -> Option<f64> {
    match (&t.sampling, pair) {
        (Some(_), Some(e)) => Some(e.speedup),
        (None, _) => (b.stats.median_ms > 0.0 && v.stats.median_ms > 0.0)
            .then(|| b.stats.median_ms.get() / v.stats.median_ms.get()),
        (Some(_), None) => None,
    }
}

/// Raises the best memory savings to `v`'s over `b` when both were counted.
fn record_memory_savings(b: &VariantResult, v: &VariantResult, m: &mut Metrics) {
    if let (Some(bb), Some(vb)) = (b.memory_peak_bytes, v.memory_peak_bytes)
        && bb > 0
    {
        let pct = (bb as f64 - vb as f64) / bb as f64 * 100.0;
        if m.best_memory_savings_pct.is_none_or(|best| pct > best) {
            m.best_memory_savings_pct = Some(pct.into());
        }
    }
}

/// Status and message of a verified speed pair: its best speedup against `min_speedup`.
fn speed_verdict(m: &Metrics, min_speedup: f64) -> (String, Option<String>) {
    match m.best_speedup.map(f64::from) {
        Some(s) if s >= min_speedup => (status::SUCCEEDED.into(), None),
        Some(s) => (
            status::FAILED_NO_SPEEDUP.into(),
            Some(no_speedup_message(s, min_speedup)),
        ),
        None => (
            status::FAILED_ERROR.into(),
            Some("no positive timing to compute a speedup from".into()),
        ),
    }
}

/// Status and message of a verified memory pair: a baseline memory and a saving were measured.
fn memory_verdict(m: &Metrics) -> (String, Option<String>) {
    if m.baseline_memory_mb.is_some_and(|b| b > 0.0) && m.best_memory_savings_pct.is_some() {
        (status::SUCCEEDED.into(), None)
    } else {
        (
            status::FAILED_ERROR.into(),
            Some("memory goal but no baseline memory was measured (is the counting allocator installed?)".into()),
        )
    }
}

/// Status, message and metrics of a single benchmark from its raw facts: it succeeds when its
/// one variant ran and has a positive time; a second variant (the target reports a pair under a
/// `time` goal) or a failed reference check of its output fail it.
fn derive_single(t: &TargetResult, estimator: Estimator) -> (String, Option<String>, Metrics) {
    let mut m = Metrics::default();
    let only = t.variants.first();
    if let Some(v) = only {
        m.baseline_time_ms = Some(v.stats.median_ms);
        m.baseline_p75_ms = Some(v.stats.p75_ms);
        m.baseline_memory_mb = v.memory_peak_bytes.map(bytes_to_mb).map(Finite::from);
        let passes: Option<Vec<u32>> = t
            .sampling
            .as_ref()
            .filter(|s| s.passes.len() > 1)
            .map(|s| s.passes.iter().map(|p| p.samples_of(0)).collect());
        if let Some(sampling) = t.sampling.as_ref()
            && let Some(e) =
                crate::bench::single::estimate(&v.samples_ms, estimator, passes.as_deref())
        {
            m.baseline_time_ms = Some(e.optimized_ms.into());
            m.measurement = Some(crate::bench::single::measurement(
                &v.samples_ms,
                v.repetitions,
                v.stats.cv,
                &e,
                crate::bench::single::Conditions {
                    precision_pct: sampling.precision_pct.get(),
                    throttled: !sampling.throttled.is_empty(),
                    precision_required: sampling.precision_required,
                    overloaded: sampling.overloaded(),
                },
                estimator,
            ));
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

/// The measurement record of the best pair: intervals, spread, outliers and whether the
/// precision was reached (speed goal: both intervals within `precision_pct`; memory goal: the
/// memory was measured) without throttling.
fn measurement(
    t: &TargetResult,
    b: &VariantResult,
    v: &VariantResult,
    e: &estimate::PairEstimate,
    m: &Metrics,
    estimator: Estimator,
) -> crate::history::Measurement {
    let sampling = t.sampling.as_ref();
    let precision_pct = sampling.map_or(DEFAULT_PRECISION_PCT, |s| s.precision_pct.get());
    let throttled = sampling.is_some_and(|s| !s.throttled.is_empty());
    let reached = match t.optimization_goal {
        Goal::Speed | Goal::Time => e.within(precision_pct),
        Goal::Memory => {
            m.baseline_memory_mb.is_some_and(|x| x > 0.0) && m.best_memory_savings_pct.is_some()
        }
    };
    crate::history::Measurement {
        confidence: crate::history::measurement::CONFIDENCE.into(),
        rounds: u32::try_from(e.pairs).unwrap_or(u32::MAX),
        clean_rounds: u32::try_from(e.clean).unwrap_or(u32::MAX),
        baseline_repetitions: b.repetitions,
        optimized_repetitions: v.repetitions,
        speedup_ci_low: e.speedup_ci.map(|c| c.0.into()),
        speedup_ci_high: e.speedup_ci.map(|c| c.1.into()),
        optimized_median_ms: e.optimized_ms.into(),
        optimized_ci_low_ms: e.optimized_ci.map(|c| c.0.into()),
        optimized_ci_high_ms: e.optimized_ci.map(|c| c.1.into()),
        speedup_cv: e.ratio_cv.into(),
        baseline_cv: b.stats.cv,
        optimized_cv: v.stats.cv,
        outliers: crate::stats::tukey_outliers(&b.samples_ms)
            + crate::stats::tukey_outliers(&v.samples_ms),
        precision_pct: precision_pct.into(),
        precise: reached && !throttled,
        throttled,
        estimator: estimator.stated().map(Into::into),
        precision_required: estimator
            .stated()
            .map(|_| sampling.is_some_and(|s| s.precision_required)),
        passes: crate::bench::single::pass_values(e),
        overloaded: sampling.and_then(super::format::Sampling::overloaded),
    }
}

impl TargetResult {
    /// Fill `status`, `message` and `metrics` from the raw facts (`derive()`).
    pub fn finalize(&mut self, min_speedup: f64) {
        let (s, msg, m) = derive(
            self,
            min_speedup,
            Estimator::for_schema(RESULTS_SCHEMA_VERSION),
        );
        self.status = s;
        self.message = msg;
        self.metrics = m;
    }
}
