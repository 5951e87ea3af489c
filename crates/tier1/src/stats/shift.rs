//! The one-sample Hodges-Lehmann estimate of a location shift (the median of the Walsh averages
//! `(x_i + x_j) / 2`, `i <= j`) and its distribution-free interval from the Wilcoxon signed-rank
//! distribution: exact up to [`EXACT_MAX_N`] values, the normal approximation above. Valid when
//! the values are symmetric about the shift, which paired differences of two interleaved,
//! exchangeable measurements are under "no difference".

use super::dist::normal_quantile;
use super::order::median_sorted;

/// Up to this many values the signed-rank distribution is computed exactly.
pub(crate) const EXACT_MAX_N: usize = 120;

/// A shift with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ShiftCi {
    /// The Hodges-Lehmann estimate.
    pub(crate) estimate: f64,
    /// Lower bound (a Walsh average).
    pub(crate) low: f64,
    /// Upper bound (a Walsh average).
    pub(crate) high: f64,
}

/// The 1-based rank `c` such that `[A_(c), A_(M+1-c)]` of the `M = n(n+1)/2` sorted Walsh averages
/// covers the shift with probability at least `level`: the largest `c` with
/// `P(W+ <= c - 1) <= (1 - level) / 2`. `None` when no rank qualifies (fewer than 6 values at 95 %).
pub(crate) fn signed_rank_ci_rank(n: usize, level: f64) -> Option<usize> {
    if n == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let tail = (1.0 - level) / 2.0;
    let m = n * (n + 1) / 2;
    if n > EXACT_MAX_N {
        // Normal approximation of W+: mean M/2, variance n(n+1)(2n+1)/24, continuity-corrected.
        let nf = n as f64;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let c = (m as f64 / 2.0 - normal_quantile(1.0 - tail) * sd - 0.5).floor() + 1.0;
        return (c >= 1.0).then_some(c as usize);
    }
    // P(W+ = w) by adding ranks 1..=n one at a time, each in or out with probability 1/2.
    let mut p = vec![0.0f64; m + 1];
    p[0] = 1.0;
    for k in 1..=n {
        let top = k * (k + 1) / 2;
        for w in (0..=top).rev() {
            let with = if w >= k { p[w - k] } else { 0.0 };
            p[w] = 0.5 * (p[w] + with);
        }
    }
    let mut cdf = 0.0;
    let mut c = None;
    for (w, pw) in p.iter().enumerate() {
        cdf += pw;
        // cdf = P(W+ <= w): rank w + 1 misses the shift below with this probability.
        if cdf <= tail + 1e-12 {
            c = Some(w + 1);
        } else {
            break;
        }
    }
    c
}

/// The Hodges-Lehmann shift of `xs` with its `level` interval (`None` when empty, when a value is
/// not finite, or with too few values for the level).
pub(crate) fn hodges_lehmann(xs: &[f64], level: f64) -> Option<ShiftCi> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let c = signed_rank_ci_rank(xs.len(), level)?;
    let mut walsh = Vec::with_capacity(xs.len() * (xs.len() + 1) / 2);
    for (i, a) in xs.iter().enumerate() {
        for b in &xs[i..] {
            walsh.push(0.5 * (a + b));
        }
    }
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    Some(ShiftCi {
        estimate: median_sorted(&walsh),
        low: walsh[c - 1],
        high: walsh[m - c],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_the_signed_rank_table() {
        // Two-sided 5 % critical values of the Wilcoxon signed-rank test (the largest T with
        // P(W+ <= T) <= 0.025): n 6 -> 0, 7 -> 2, 8 -> 3, 10 -> 8, 15 -> 25, 20 -> 52, 30 -> 137.
        for (n, t) in [
            (6, 0),
            (7, 2),
            (8, 3),
            (10, 8),
            (15, 25),
            (20, 52),
            (30, 137),
        ] {
            assert_eq!(signed_rank_ci_rank(n, 0.95), Some(t + 1), "n = {n}");
        }
        assert_eq!(signed_rank_ci_rank(5, 0.95), None);
        assert_eq!(signed_rank_ci_rank(0, 0.95), None);
        // The normal approximation continues the exact ranks without a jump.
        let exact = signed_rank_ci_rank(EXACT_MAX_N, 0.95).unwrap() as f64;
        let approx = signed_rank_ci_rank(EXACT_MAX_N + 1, 0.95).unwrap() as f64;
        let step = (EXACT_MAX_N + 1) as f64 / 2.0;
        assert!(
            (approx - exact - step).abs() < 0.02 * exact,
            "{exact} {approx}"
        );
    }

    #[test]
    fn the_estimate_is_the_median_of_walsh_averages() {
        let ci = hodges_lehmann(&[1.0, 2.0, 3.0, 4.0, 5.0, 100.0], 0.95).unwrap();
        // 21 Walsh averages; the 11th is 3.5; n = 6 at 95 %: the extremes.
        assert_eq!((ci.low, ci.estimate, ci.high), (1.0, 3.5, 100.0));
        assert!(hodges_lehmann(&[1.0; 5], 0.95).is_none());
        assert!(hodges_lehmann(&[1.0, f64::NAN, 1.0, 1.0, 1.0, 1.0], 0.95).is_none());
        let shifted: Vec<f64> = (0..20).map(|i| 0.05 + 0.001 * f64::from(i % 5)).collect();
        let ci = hodges_lehmann(&shifted, 0.95).unwrap();
        assert!(
            ci.low > 0.049 && ci.high < 0.055 && ci.low <= ci.estimate,
            "{ci:?}"
        );
    }

    #[test]
    fn coverage_under_symmetric_noise_is_at_least_the_level() {
        // Deterministic symmetric noise: every interval of 1000 draws of 12 values covers 0 at a
        // rate of at least 95 % (minus the binomial slack of 1000 draws).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut covered = 0;
        for _ in 0..1000 {
            let xs: Vec<f64> = (0..12).map(|_| next() + next()).collect();
            let ci = hodges_lehmann(&xs, 0.95).unwrap();
            if ci.low <= 0.0 && 0.0 <= ci.high {
                covered += 1;
            }
        }
        assert!(covered >= 935, "covered {covered} of 1000");
    }
}
