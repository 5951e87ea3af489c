//! Robust spread: the median absolute deviation and Tukey's fences (outliers are counted and
//! reported, never dropped).

use super::order::{median_sorted, percentile};

/// Scale that makes the MAD a consistent estimator of the standard deviation of normal data
/// (1 / Φ⁻¹(¾)).
pub(crate) const MAD_SCALE: f64 = 1.482_602_218_505_602;

/// Median and median absolute deviation (unscaled) of `xs`; `None` when empty or any is NaN.
pub(crate) fn mad(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = median_sorted(&v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    dev.sort_by(f64::total_cmp);
    Some((m, median_sorted(&dev)))
}

/// Number of values beyond Tukey's fences `Q1 - 1.5·IQR` and `Q3 + 1.5·IQR` (quartiles by linear
/// interpolation); 0 with fewer than four values.
pub(crate) fn tukey_outliers(xs: &[f64]) -> u32 {
    if xs.len() < 4 || xs.iter().any(|x| x.is_nan()) {
        return 0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| percentile(&v, p);
    let (q1, q3) = (q(25.0), q(75.0));
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    u32::try_from(v.iter().filter(|&&x| x < lo || x > hi).count()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mad_of_known_values() {
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some((3.0, 1.0)));
        assert_eq!(mad(&[]), None);
    }

    #[test]
    fn tukey_counts_both_tails() {
        let mut xs: Vec<f64> = (0..20).map(|i| 10.0 + f64::from(i % 5) * 0.1).collect();
        assert_eq!(tukey_outliers(&xs), 0);
        xs.push(30.0);
        xs.push(-5.0);
        assert_eq!(tukey_outliers(&xs), 2);
        assert_eq!(tukey_outliers(&[1.0, 100.0]), 0);
    }
}
