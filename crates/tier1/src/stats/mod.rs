//! Pure statistics used by the harness and the regression engine: distribution functions
//! (normal, Student t), order statistics (medians and their distribution-free confidence
//! intervals), robust spread (MAD, Tukey fences) and the Hodges-Lehmann shift of paired
//! differences with its signed-rank interval. No I/O, no randomness, no dependencies.

pub mod dist;
pub mod order;
pub mod robust;
pub mod shift;

pub use dist::{normal_cdf, normal_quantile, t_cdf, t_quantile};
pub use order::{MedianCi, median, median_ci, percentile};
pub use robust::{mad, tukey_outliers};
pub use shift::{ShiftCi, hodges_lehmann};

/// Arithmetic mean (`None` when empty).
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample variance with `n - 1` in the denominator (`None` with fewer than two values).
pub fn sample_variance(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    Some(xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_variance() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 3.0]), Some(2.0));
        assert_eq!(sample_variance(&[1.0]), None);
        assert_eq!(sample_variance(&[1.0, 2.0, 3.0]), Some(1.0));
    }
}
