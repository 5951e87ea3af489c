//! What a side-by-side comparison can detect (issue 43): the smallest slowdown its own recorded
//! intervals catch in 95 % of nights, stated for a target that side by side decided, in place of
//! the history test's (which carries the run-to-run noise that side by side cancels).

use crate::history::SideBySideCheck;

/// The smallest slowdown (percent of the optimized code's time) the comparison `check` catches
/// with probability `POWER` (95 %), from the recorded intervals of the metrics it decided on;
/// `None` when one of them has no interval (a comparison that could not run).
///
/// A metric is `worse` when its worsening estimate reaches the threshold `t` and its interval
/// excludes no change (`SideBySideCheck::derived`), that is, with `h` the interval's half-width
/// on the log scale, when the estimate clears `max(t, h)`. The estimate's standard error is taken
/// as `h / 1.96`: the recorded interval has at least 95 % confidence (the comparison's looks
/// widen it, never narrow it), so this is the largest the standard error can be and the figure
/// errs toward a larger detectable change, never a smaller one. The change caught 95 % of the time
/// is then `max(t, h) + 1.645 · se`, as the history test states its own
/// (`crate::regress::significance::detectable`); a target deciding on both metrics states the
/// larger.
pub(crate) fn detectable_pct(check: &SideBySideCheck) -> Option<f64> {
    let t = check.threshold_log();
    // Worsening estimate and interval on the log scale, as `SideBySideCheck::derived` reads them.
    let deciding = check.deciding_worsenings();
    let z = crate::stats::normal_quantile(0.975);
    let mut worst: Option<f64> = None;
    for metric in deciding {
        let (est, lo, hi) = metric?;
        let half = (hi - est).max(est - lo);
        if !half.is_finite() || half < 0.0 {
            return None;
        }
        let d = crate::regress::significance::detectable(t, z, half / z);
        worst = Some(worst.map_or(d, |w| w.max(d)));
    }
    worst.filter(|d| d.is_finite())
}
