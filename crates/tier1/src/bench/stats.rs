//! Summary statistics of raw timing samples: median, mean, population standard deviation, min, max,
//! linearly interpolated percentiles (numpy's default) and the coefficient of variation.

use crate::json::Finite;
pub(crate) use crate::stats::order::percentile;
use serde::{Deserialize, Serialize};

/// Statistics of one variant's timed samples (milliseconds). A pure function of the samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    /// Number of samples.
    pub(crate) count: u32,
    /// Median (the reported time of a variant).
    pub median_ms: Finite,
    /// Arithmetic mean (the reference implementation reported this one).
    pub(crate) mean_ms: Finite,
    /// Population standard deviation (ddof 0).
    pub(crate) std_ms: Finite,
    /// Smallest sample.
    pub(crate) min_ms: Finite,
    /// Largest sample.
    pub(crate) max_ms: Finite,
    /// 25th percentile.
    pub(crate) p25_ms: Finite,
    /// 75th percentile.
    pub(crate) p75_ms: Finite,
    /// 90th percentile.
    pub(crate) p90_ms: Finite,
    /// 99th percentile.
    pub p99_ms: Finite,
    /// `std / mean` (0 when the mean is 0).
    pub(crate) cv: Finite,
}

impl Stats {
    /// Statistics of `samples`; `None` when empty or when any sample is negative or not finite.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mean = sorted.iter().sum::<f64>() / n;
        let var = sorted.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
        let std = var.sqrt();
        Some(Stats {
            count: u32::try_from(sorted.len()).unwrap_or(u32::MAX),
            median_ms: percentile(&sorted, 50.0).into(),
            mean_ms: mean.into(),
            std_ms: std.into(),
            min_ms: sorted[0].into(),
            max_ms: sorted[sorted.len() - 1].into(),
            p25_ms: percentile(&sorted, 25.0).into(),
            p75_ms: percentile(&sorted, 75.0).into(),
            p90_ms: percentile(&sorted, 90.0).into(),
            p99_ms: percentile(&sorted, 99.0).into(),
            cv: if mean > 0.0 { std / mean } else { 0.0 }.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_match_hand_computed_values() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.count, 4);
        assert_eq!(s.median_ms, 2.5);
        assert_eq!(s.mean_ms, 2.5);
        assert_eq!(s.min_ms, 1.0);
        assert_eq!(s.max_ms, 4.0);
        assert_eq!(s.p25_ms, 1.75);
        assert_eq!(s.p75_ms, 3.25);
        assert!((s.std_ms.get() - 1.25f64.sqrt()).abs() < 1e-12);
        assert!((s.cv.get() - 1.25f64.sqrt() / 2.5).abs() < 1e-12);
        let odd = Stats::of(&[5.0, 1.0, 9.0]).unwrap();
        assert_eq!(odd.median_ms, 5.0);
        assert!((odd.p90_ms.get() - 8.2).abs() < 1e-12);
    }

    #[test]
    fn empty_or_non_finite_samples_have_no_stats() {
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[1.0, f64::NAN]).is_none());
        assert!(Stats::of(&[1.0, f64::INFINITY]).is_none());
        assert!(Stats::of(&[-1.0]).is_none());
    }
}
