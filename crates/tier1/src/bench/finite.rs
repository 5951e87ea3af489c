//! One target's numbers checked before they are recorded: every sample, statistic, verification
//! error, work count and derived metric must be finite and of a magnitude the summaries can add up
//! and average without overflowing. A target whose numbers are not is failed with the field named
//! (and its unusable numbers dropped); the other targets and the run go on.

use crate::bench::result::{TargetFailure, TargetResult, status};

/// Largest magnitude a recorded number may have (sums and means over every target stay finite).
pub(crate) const MAX_MAGNITUDE: f64 = 1e100;

fn bad(x: f64) -> bool {
    !x.is_finite() || x.abs() > MAX_MAGNITUDE
}

fn first<'a, T: Into<f64>>(
    fields: impl IntoIterator<Item = (String, Option<T>)> + 'a,
) -> Option<(String, f64)> {
    fields
        .into_iter()
        .find_map(|(name, v)| v.map(Into::into).filter(|x| bad(*x)).map(|x| (name, x)))
}

/// The first number of `t` that is not finite or too large, as `(field, value)`.
pub(crate) fn offending(t: &TargetResult) -> Option<(String, f64)> {
    let work = [
        ("work.flops".to_string(), t.work.flops),
        ("work.bytes".to_string(), t.work.bytes),
    ];
    if let Some(x) = first(work) {
        return Some(x);
    }
    for (i, v) in t.variants.iter().enumerate() {
        let at = |f: &str| format!("variants[{i}] ({}).{f}", v.name);
        if let Some((j, x)) = v.samples_ms.iter().enumerate().find(|(_, x)| bad(**x)) {
            return Some((at(&format!("samples_ms[{j}]")), *x));
        }
        let s = &v.stats;
        let stats = [
            ("median_ms", s.median_ms),
            ("mean_ms", s.mean_ms),
            ("std_ms", s.std_ms),
            ("min_ms", s.min_ms),
            ("max_ms", s.max_ms),
            ("p25_ms", s.p25_ms),
            ("p75_ms", s.p75_ms),
            ("p90_ms", s.p90_ms),
            ("p99_ms", s.p99_ms),
            ("cv", s.cv),
        ];
        if let Some(x) = first(stats.map(|(f, x)| (at(&format!("stats.{f}")), Some(x)))) {
            return Some(x);
        }
        if let Some(ver) = &v.verification {
            let errs = [
                (at("verification.max_abs_err"), Some(ver.max_abs_err)),
                (at("verification.max_rel_err"), Some(ver.max_rel_err)),
            ];
            if let Some(x) = first(errs) {
                return Some(x);
            }
        }
    }
    let m = &t.metrics;
    let metrics = [
        ("baseline_time_ms", m.baseline_time_ms),
        ("baseline_p75_ms", m.baseline_p75_ms),
        ("best_speedup", m.best_speedup),
        ("baseline_memory_mb", m.baseline_memory_mb),
        ("best_memory_savings_pct", m.best_memory_savings_pct),
        ("max_abs_err", m.max_abs_err),
        ("max_rel_err", m.max_rel_err),
    ];
    if let Some(x) = first(metrics.map(|(f, x)| (format!("metrics.{f}"), x))) {
        return Some(x);
    }
    if let Some((field, x)) = m.measurement.as_ref().and_then(|meas| meas.non_finite()) {
        return Some((format!("metrics.measurement.{field}"), x));
    }
    None
}

/// The smallest positive sample of `t` (ms), which a number that overflows or is undefined
/// comes from.
fn smallest_sample(t: &TargetResult) -> Option<f64> {
    t.variants
        .iter()
        .flat_map(|v| v.samples_ms.iter().copied())
        .filter(|x| *x > 0.0)
        .min_by(f64::total_cmp)
}

/// Fail `t` when one of its numbers is not recordable ([`offending`]): the failure names the field
/// and the value, and the target's measured numbers are dropped (they cannot be written). Returns
/// whether it failed the target.
pub(crate) fn fail_unrecordable(t: &mut TargetResult) -> bool {
    let Some((field, value)) = offending(t) else {
        return false;
    };
    // An undefined number (NaN) is named as such, with the sample it was derived from: the
    // samples themselves are all finite by now.
    let found = match (value.is_nan(), smallest_sample(t)) {
        (true, Some(s)) => format!(
            "an undefined result (derived from samples as small as {s:e} ms, too small to divide by)"
        ),
        (true, None) => "an undefined result".to_string(),
        (false, _) => format!("{value:?}"),
    };
    t.failure = Some(TargetFailure {
        status: status::FAILED_ERROR.into(),
        message: format!(
            "target {}: {field}: expected a finite number of magnitude at most {MAX_MAGNITUDE:e}, found {found}: the target's numbers cannot be recorded",
            t.key
        ),
    });
    t.variants.clear();
    t.metrics = Default::default();
    if let Some(s) = t.sampling.as_mut()
        && !s.precision_pct.is_finite()
    {
        s.precision_pct = 0.0.into();
    }
    true
}
