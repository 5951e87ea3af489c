//! The per-run estimates of a baseline/optimized pair, from rounds (sample `i` of both variants
//! was taken in round `i`, in a shuffled order). On a shared machine interference only ever adds
//! time, and it comes and goes: a round is *clean* when both of its samples are at or below
//! their own variant's [`CLEAN_QUANTILE`]. The speedup is the median of the per-round ratios
//! `baseline / optimized` over the clean rounds (a paired estimate: drift that moves both cancels
//! in the ratio), the variant times are the medians of their clean samples, and each comes with
//! its distribution-free 95 % interval. docs/harness.md gives the measurements behind the choice.

use crate::history::measurement::CONFIDENCE;
use crate::stats::{self, MedianCi};

/// A round is clean when both samples are at or below this quantile of their own variant.
pub const CLEAN_QUANTILE: f64 = 0.5;

/// What one pair of sample vectors says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEstimate {
    /// Rounds with a positive time on both sides.
    pub pairs: usize,
    /// Clean rounds the estimates use.
    pub clean: usize,
    /// Median of the per-round ratios `baseline / optimized` over the clean rounds.
    pub speedup: f64,
    /// Its interval (`None` with fewer than six clean rounds).
    pub speedup_ci: Option<(f64, f64)>,
    /// Median baseline time over the clean rounds.
    pub baseline_ms: f64,
    /// Median optimized time over the clean rounds.
    pub optimized_ms: f64,
    /// Its interval (`None` with fewer than six clean rounds).
    pub optimized_ci: Option<(f64, f64)>,
    /// Coefficient of variation of the per-round ratios over all rounds.
    pub ratio_cv: f64,
}

impl PairEstimate {
    /// Larger relative distance (percent) from the speedup to a bound of its interval.
    pub fn speedup_half_width_pct(&self) -> Option<f64> {
        let (lo, hi) = self.speedup_ci?;
        Some(rel_half_width(lo, self.speedup, hi))
    }

    /// Larger relative distance (percent) from the optimized time to a bound.
    pub fn optimized_half_width_pct(&self) -> Option<f64> {
        let (lo, hi) = self.optimized_ci?;
        Some(rel_half_width(lo, self.optimized_ms, hi))
    }

    /// Both intervals exist and lie within `precision_pct` of their estimates.
    pub fn within(&self, precision_pct: f64) -> bool {
        // A hair of slack so an interval exactly at the precision counts despite rounding.
        let ok = |w: Option<f64>| w.is_some_and(|w| w <= precision_pct + 1e-9);
        ok(self.speedup_half_width_pct()) && ok(self.optimized_half_width_pct())
    }
}

fn rel_half_width(lo: f64, mid: f64, hi: f64) -> f64 {
    (hi - mid).max(mid - lo) / mid * 100.0
}

/// Estimate a pair from per-execution samples in round order. `None` when no round has positive
/// times on both sides.
pub fn pair(base: &[f64], opt: &[f64]) -> Option<PairEstimate> {
    let rounds: Vec<(f64, f64)> = base
        .iter()
        .zip(opt)
        .map(|(b, o)| (*b, *o))
        .filter(|(b, o)| *b > 0.0 && *o > 0.0 && b.is_finite() && o.is_finite())
        .collect();
    if rounds.is_empty() {
        return None;
    }
    let quantile = |xs: Vec<f64>| {
        let mut v = xs;
        v.sort_by(f64::total_cmp);
        stats::percentile(&v, CLEAN_QUANTILE * 100.0)
    };
    let qb = quantile(rounds.iter().map(|r| r.0).collect());
    let qo = quantile(rounds.iter().map(|r| r.1).collect());
    let clean: Vec<(f64, f64)> = rounds
        .iter()
        .copied()
        .filter(|(b, o)| *b <= qb && *o <= qo)
        .collect();
    // Too few rounds for a selection (or none clean): every round counts.
    let used = if clean.len() >= 2 { &clean } else { &rounds };
    let clean_ratios: Vec<f64> = used.iter().map(|(b, o)| b / o).collect();
    let d = centre(&clean_ratios)?;
    let o = centre(&used.iter().map(|r| r.1).collect::<Vec<_>>())?;
    let b = stats::median(&used.iter().map(|r| r.0).collect::<Vec<_>>())?;
    let ratios: Vec<f64> = rounds.iter().map(|(b, o)| b / o).collect();
    let mean = stats::mean(&ratios).unwrap_or(0.0);
    let var = stats::sample_variance(&ratios).unwrap_or(0.0);
    Some(PairEstimate {
        pairs: rounds.len(),
        clean: used.len(),
        speedup: d.median,
        speedup_ci: d.ci,
        baseline_ms: b,
        optimized_ms: o.median,
        optimized_ci: o.ci,
        ratio_cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
    })
}

struct Centre {
    median: f64,
    ci: Option<(f64, f64)>,
}

fn centre(xs: &[f64]) -> Option<Centre> {
    if let Some(MedianCi { median, low, high }) = stats::median_ci(xs, CONFIDENCE) {
        return Some(Centre {
            median,
            ci: Some((low, high)),
        });
    }
    stats::median(xs).map(|median| Centre { median, ci: None })
}

/// Whether the samples so far are precise enough to stop: the best verified optimized variant's
/// speedup and optimized time are within `precision_pct` (for every goal: a memory target's
/// speedup is reported and tracked too, though only its memory is judged). A target with no
/// verified variant (it fails anyway) needs no more rounds.
pub fn precise_now(samples: &[Vec<f64>], verified: &[bool], precision_pct: f64) -> bool {
    let best = samples
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(i, _)| verified.get(*i).copied().unwrap_or(false))
        .filter_map(|(_, o)| pair(&samples[0], o))
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
    best.is_none_or(|e| e.within(precision_pct))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratios_cancel_common_drift() {
        // Both sides drift upward by 50 % over the run; the per-round ratio stays exactly 2.
        let base: Vec<f64> = (0..40)
            .map(|i| 10.0 * (1.0 + 0.0125 * f64::from(i)))
            .collect();
        let opt: Vec<f64> = base.iter().map(|b| b / 2.0).collect();
        let e = pair(&base, &opt).unwrap();
        assert_eq!((e.pairs, e.clean), (40, 20));
        assert!((e.speedup - 2.0).abs() < 1e-12);
        assert!(e.speedup_half_width_pct().unwrap() < 1e-9);
        assert!(e.ratio_cv < 1e-12);
        // The optimized time itself moved with the drift: its interval is wide.
        assert!(e.optimized_half_width_pct().unwrap() > 2.0);
        assert!(!e.within(1.0));
    }

    #[test]
    fn interfered_rounds_do_not_move_the_estimates() {
        // 2:1 pair; every third round one side is stalled by 60 % (interference only adds time).
        let (mut base, mut opt) = (Vec::new(), Vec::new());
        for i in 0..60 {
            let jitter = 1.0 + 0.001 * f64::from(i % 7);
            let (mut b, mut o) = (10.0 * jitter, 5.0 * jitter);
            match i % 6 {
                0 => b *= 1.6,
                3 => o *= 1.6,
                _ => {}
            }
            base.push(b);
            opt.push(o);
        }
        let e = pair(&base, &opt).unwrap();
        assert!((e.speedup - 2.0).abs() < 1e-9, "{e:?}");
        assert!(e.within(1.0), "{e:?}");
        assert!((e.optimized_ms / 5.0 - 1.0).abs() < 0.01, "{e:?}");
        assert!(e.ratio_cv > 0.1, "all rounds: {}", e.ratio_cv);
    }

    #[test]
    fn few_or_bad_samples() {
        let e = pair(&[2.0, 2.0], &[1.0, 1.0]).unwrap();
        assert_eq!((e.pairs, e.speedup, e.speedup_ci), (2, 2.0, None));
        assert!(!e.within(50.0));
        let e = pair(&[2.0], &[1.0]).unwrap();
        assert_eq!((e.pairs, e.clean, e.speedup), (1, 1, 2.0));
        assert!(pair(&[0.0, 1.0], &[1.0, 0.0]).is_none());
        assert!(pair(&[], &[]).is_none());
    }

    #[test]
    fn precision_is_judged_on_the_best_verified_variant() {
        let base = vec![10.0; 8];
        let tight = vec![5.0; 8];
        let loose: Vec<f64> = (0..8).map(|i| 1.0 + f64::from(i)).collect();
        let samples = vec![base.clone(), tight.clone(), loose.clone()];
        // The loose variant is faster (1-8 ms against 5 ms) but unverified: only the tight counts.
        assert!(precise_now(&samples, &[false, true, false], 1.0));
        assert!(!precise_now(&samples, &[false, true, true], 1.0));
        assert!(precise_now(&[base], &[false], 1.0));
    }
}
