//! Order statistics: quantiles (the median among them) and their distribution-free confidence
//! intervals (the interval between two order statistics whose coverage follows from the binomial
//! distribution; no assumption about the shape of the samples, as asv's `quantile_ci` does).

/// Median of unsorted values (`None` when empty or when any value is NaN).
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}

/// Median of ascending, non-empty values.
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// Percentile `p` (0..=100) of ascending `sorted` by linear interpolation between closest ranks
/// (numpy's default); NaN when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// A median with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MedianCi {
    /// The sample median.
    pub(crate) median: f64,
    /// Lower bound (an order statistic).
    pub(crate) low: f64,
    /// Upper bound (an order statistic).
    pub(crate) high: f64,
}

/// 1-based ranks `(l, u)` such that `[x_(l), x_(u)]` covers the `p`-quantile of the
/// population with probability at least `level`, each tail missing it with probability at most
/// `(1 - level) / 2`: `l` is the largest rank with `P(Bin(n, p) <= l - 1) <= (1 - level) / 2`,
/// `u` the smallest with `P(Bin(n, p) <= u - 1) >= (1 + level) / 2`. `None` when no such pair
/// of ranks exists (too few values for the level; fewer than 6 for a median at 95 %).
pub(crate) fn quantile_ci_ranks(n: usize, p: f64, level: f64) -> Option<(usize, usize)> {
    if n == 0 || !(p > 0.0 && p < 1.0) || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let tail = (1.0 - level) / 2.0;
    let nf = n as f64;
    // Binomial(n, p) pmf in log space: ln pmf(0) = n ln(1-p), pmf(k+1)/pmf(k) = (n-k)p/((k+1)(1-p)).
    let mut ln_pmf = nf * (1.0 - p).ln();
    let ratio = p / (1.0 - p);
    let mut cdf = 0.0;
    let (mut low, mut high) = (None, None);
    for k in 0..n {
        cdf += ln_pmf.exp();
        // cdf = P(B <= k): rank k + 1 as the lower bound misses with probability P(B <= k).
        if cdf <= tail {
            low = Some(k + 1);
        }
        if high.is_none() && cdf >= 1.0 - tail {
            high = Some(k + 1);
        }
        ln_pmf += ((nf - k as f64) * ratio / (k as f64 + 1.0)).ln();
    }
    match (low, high) {
        (Some(l), Some(u)) if l <= u => Some((l, u)),
        _ => None,
    }
}

/// A quantile with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileCi {
    /// The sample quantile (linear interpolation).
    pub(crate) value: f64,
    /// Lower bound (an order statistic).
    pub low: f64,
    /// Upper bound (an order statistic).
    pub high: f64,
}

/// The `p`-quantile of `xs` and its distribution-free `level` interval (`None` when empty, when
/// a value is NaN, or when there are too few values for the level).
pub fn quantile_ci(xs: &[f64], p: f64, level: f64) -> Option<QuantileCi> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let (l, u) = quantile_ci_ranks(v.len(), p, level)?;
    Some(QuantileCi {
        value: percentile(&v, p * 100.0),
        low: v[l - 1],
        high: v[u - 1],
    })
}

/// The median of `xs` and its distribution-free `level` confidence interval.
pub(crate) fn median_ci(xs: &[f64], level: f64) -> Option<MedianCi> {
    let q = quantile_ci(xs, 0.5, level)?;
    Some(MedianCi {
        median: q.value,
        low: q.low,
        high: q.high,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_the_binomial_table() {
        // Classic table of the 95 % distribution-free CI of the median (Conover): n -> j, n+1-j.
        for (n, j) in [
            (6, 1),
            (7, 1),
            (8, 1),
            (9, 2),
            (10, 2),
            (11, 2),
            (12, 3),
            (20, 6),
            (30, 10),
        ] {
            assert_eq!(
                quantile_ci_ranks(n, 0.5, 0.95),
                Some((j, n + 1 - j)),
                "n = {n}"
            );
        }
        assert_eq!(quantile_ci_ranks(5, 0.5, 0.95), None);
        assert_eq!(quantile_ci_ranks(0, 0.5, 0.95), None);
        // Large n stays finite and near the normal approximation (n - 1.96 √n) / 2.
        let (l, u) = quantile_ci_ranks(2000, 0.5, 0.95).unwrap();
        assert!((956..=958).contains(&l) && l + u == 2001, "{l} {u}");
    }

    #[test]
    fn lower_quantile_ranks_cover_at_the_level() {
        // The coverage P(l <= B < u) of the chosen ranks is at least the level, for every n.
        for n in 10..200 {
            for p in [0.1, 0.2, 0.3] {
                let Some((l, u)) = quantile_ci_ranks(n, p, 0.95) else {
                    continue;
                };
                let nf = n as f64;
                let mut pmf = (1.0 - p).powf(nf);
                let mut cover = 0.0;
                for k in 0..n {
                    if k + 1 > l && k < u {
                        cover += pmf;
                    }
                    pmf *= (nf - k as f64) / (k as f64 + 1.0) * p / (1.0 - p);
                }
                assert!(
                    cover >= 0.95 - 1e-9,
                    "n {n} p {p}: ranks {l}..{u} cover {cover}"
                );
            }
        }
        // n = 100, p = 0.2: P(B <= 11) = 0.0126, P(B <= 12) = 0.0253; P(B <= 28) = 0.980.
        assert_eq!(quantile_ci_ranks(100, 0.2, 0.95), Some((12, 29)));
        assert_eq!(quantile_ci_ranks(10, 0.2, 0.95), None);
    }

    #[test]
    fn median_and_interval() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = median_ci(&xs, 0.95).unwrap();
        assert_eq!((ci.low, ci.median, ci.high), (2.0, 5.5, 9.0));
        assert!(median_ci(&xs[..5], 0.95).is_none());
    }
}
