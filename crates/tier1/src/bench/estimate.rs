//! The per-run estimates of a baseline/optimized pair, from rounds (sample `i` of both variants
//! was taken in round `i`, in a shuffled order).
//!
//! **Paired median** (results schema 3, [`pair`]): the speedup is the median of every round's
//! ratio `baseline / optimized` (a paired estimate: what moved both samples of a round cancels
//! in its ratio), the optimized time is the median of every optimized sample, and each comes
//! with its distribution-free 95 % interval. It keeps every round: on this project's VM it
//! halved the run-to-run spread of the older rule below (docs/harness.md has the figures).
//!
//! **Clean rounds** (results schema 2, [`pair_clean`], still used to validate those files): a
//! round counted only when both its samples were at or below their variant's median, which
//! keeps about a quarter of the rounds.
//!
//! An anchor is measured in several passes (`pooled`): a pass that disagrees with the others
//! beyond `PASS_OUTLIER_MADS` robust standard deviations is left out and the rest are pooled.

use crate::history::measurement::CONFIDENCE;
use crate::stats::{self, MedianCi};

/// A round is clean (schema 2) when both samples are at or below this quantile of their variant.
pub(crate) const CLEAN_QUANTILE: f64 = 0.5;
/// A pass further than this many robust standard deviations from the median of the passes is
/// left out of an anchor (the rule promotion applies across nights, `anchor_outlier_mads`).
pub(crate) const PASS_OUTLIER_MADS: f64 = 3.5;
/// Floor of the robust standard deviation of the passes (log scale): with three passes the MAD
/// is often near zero, and a pass is only called disturbed when it lies beyond
/// `PASS_OUTLIER_MADS × 1.5 %` ≈ 5 % (the default regression threshold) from the others.
pub(crate) const PASS_SD_FLOOR: f64 = 0.015;

/// Which rule turns rounds into estimates (by results schema version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Estimator {
    /// Schema 3: every round.
    PairedMedian,
    /// Schema 2: the clean rounds.
    CleanRounds,
}

impl Estimator {
    /// The estimator results files of `schema_version` were written with.
    pub(crate) fn for_schema(schema_version: u32) -> Estimator {
        if schema_version >= 3 {
            Estimator::PairedMedian
        } else {
            Estimator::CleanRounds
        }
    }

    /// The name a measurement record states, or `None` for the estimator of results of schema 2
    /// and older: their records did not state it (nor whether the profile required precision),
    /// and re-deriving them must give back exactly what they hold.
    pub(crate) fn stated(self) -> Option<&'static str> {
        (self != Estimator::CleanRounds).then(|| self.as_str())
    }

    /// The stored name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Estimator::PairedMedian => "paired_median",
            Estimator::CleanRounds => "clean_rounds",
        }
    }

    /// The estimate of one pass.
    pub(crate) fn pair(self, base: &[f64], opt: &[f64]) -> Option<PairEstimate> {
        match self {
            Estimator::PairedMedian => pair(base, opt),
            Estimator::CleanRounds => pair_clean(base, opt),
        }
    }
}

/// What one pair of sample vectors says.
#[derive(Debug, Clone, PartialEq)]
pub struct PairEstimate {
    /// Rounds with a positive time on both sides.
    pub(crate) pairs: usize,
    /// Rounds the estimates use (all of them, or the clean ones under schema 2).
    pub(crate) clean: usize,
    /// Median of the per-round ratios `baseline / optimized`.
    pub speedup: f64,
    /// Its interval (`None` with fewer than six rounds).
    pub speedup_ci: Option<(f64, f64)>,
    /// Baseline time consistent with the two estimates (`optimized_ms × speedup` under schema 3,
    /// so `baseline / speedup` is the optimized estimate; the clean baseline median under 2).
    pub(crate) baseline_ms: f64,
    /// Median optimized time.
    pub optimized_ms: f64,
    /// Its interval (`None` with fewer than six rounds).
    pub optimized_ci: Option<(f64, f64)>,
    /// Coefficient of variation of the per-round ratios over all rounds.
    pub(crate) ratio_cv: f64,
    /// The passes of a pooled estimate (empty for one pass).
    pub(crate) passes: Vec<PassEstimate>,
}

/// One pass of a pooled estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PassEstimate {
    /// Rounds of the pass.
    pub(crate) rounds: usize,
    /// The pass's speedup.
    pub(crate) speedup: f64,
    /// The pass's optimized time (ms).
    pub(crate) optimized_ms: f64,
    /// Left out of the pooled estimate: it disagreed with the other passes.
    pub(crate) outlier: bool,
}

impl PairEstimate {
    /// Larger relative distance (percent) from the speedup to a bound of its interval.
    pub(crate) fn speedup_half_width_pct(&self) -> Option<f64> {
        let (lo, hi) = self.speedup_ci?;
        Some(rel_half_width(lo, self.speedup, hi))
    }

    /// Larger relative distance (percent) from the optimized time to a bound.
    pub(crate) fn optimized_half_width_pct(&self) -> Option<f64> {
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

/// Rounds with positive, finite times on both sides.
fn rounds(base: &[f64], opt: &[f64]) -> Vec<(f64, f64)> {
    base.iter()
        .zip(opt)
        .map(|(b, o)| (*b, *o))
        .filter(|(b, o)| *b > 0.0 && *o > 0.0 && b.is_finite() && o.is_finite())
        .collect()
}

fn ratio_cv(rounds: &[(f64, f64)]) -> f64 {
    let ratios: Vec<f64> = rounds.iter().map(|(b, o)| b / o).collect();
    let mean = stats::mean(&ratios).unwrap_or(0.0);
    let var = stats::sample_variance(&ratios).unwrap_or(0.0);
    if mean > 0.0 { var.sqrt() / mean } else { 0.0 }
}

/// The schema-3 estimate over every round. `None` when no round has positive times on both
/// sides.
pub fn pair(base: &[f64], opt: &[f64]) -> Option<PairEstimate> {
    let rounds = rounds(base, opt);
    if rounds.is_empty() {
        return None;
    }
    let d = centre(&rounds.iter().map(|(b, o)| b / o).collect::<Vec<_>>())?;
    let o = centre(&rounds.iter().map(|r| r.1).collect::<Vec<_>>())?;
    Some(PairEstimate {
        pairs: rounds.len(),
        clean: rounds.len(),
        speedup: d.median,
        speedup_ci: d.ci,
        baseline_ms: o.median * d.median,
        optimized_ms: o.median,
        optimized_ci: o.ci,
        ratio_cv: ratio_cv(&rounds),
        passes: Vec::new(),
    })
}

/// The schema-2 estimate over the clean rounds (every round when fewer than two are clean).
pub fn pair_clean(base: &[f64], opt: &[f64]) -> Option<PairEstimate> {
    let rounds = rounds(base, opt);
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
    let used = if clean.len() >= 2 { &clean } else { &rounds };
    let d = centre(&used.iter().map(|(b, o)| b / o).collect::<Vec<_>>())?;
    let o = centre(&used.iter().map(|r| r.1).collect::<Vec<_>>())?;
    let b = stats::median(&used.iter().map(|r| r.0).collect::<Vec<_>>())?;
    Some(PairEstimate {
        pairs: rounds.len(),
        clean: used.len(),
        speedup: d.median,
        speedup_ci: d.ci,
        baseline_ms: b,
        optimized_ms: o.median,
        optimized_ci: o.ci,
        ratio_cv: ratio_cv(&rounds),
        passes: Vec::new(),
    })
}

/// The anchor's estimate from several passes (`per_pass`: the baseline's and the optimized
/// variant's samples in each pass, in order; equal for rounds, not for an imported tool's counts):
/// each pass estimated alone, the passes that disagree with the others left out (at least three
/// passes, never more than a minority), and the kept rounds estimated together. The intervals
/// are those of the pooled rounds (the within-run precision, as for any run); the spread of the
/// kept passes is run-to-run evidence, which the comparison's noise estimate takes from the
/// recorded pass values (`regress::noise::pass_points`). `None` when the splits do not add up
/// or no pass has a usable round.
pub(crate) fn pooled(
    estimator: Estimator,
    base: &[f64],
    opt: &[f64],
    per_pass: &[(u32, u32)],
) -> Option<PairEstimate> {
    let sum = |f: fn(&(u32, u32)) -> u32| per_pass.iter().map(|p| f(p) as usize).sum::<usize>();
    if sum(|p| p.0) != base.len() || sum(|p| p.1) != opt.len() {
        return None;
    }
    let (mut sb, mut so) = (0, 0);
    let mut parts = Vec::with_capacity(per_pass.len());
    for &(nb, no) in per_pass {
        let (b, o) = (sb..sb + nb as usize, so..so + no as usize);
        let e = estimator.pair(&base[b.clone()], &opt[o.clone()]);
        parts.push((b, o, e));
        (sb, so) = (sb + nb as usize, so + no as usize);
    }
    let mut passes: Vec<PassEstimate> = parts
        .iter()
        .map(|(b, o, p)| PassEstimate {
            rounds: b.len().min(o.len()),
            speedup: p.as_ref().map_or(f64::NAN, |p| p.speedup),
            optimized_ms: p.as_ref().map_or(f64::NAN, |p| p.optimized_ms),
            outlier: p.is_none(),
        })
        .collect();
    mark_outlier_passes(&mut passes);
    let (mut kb, mut ko) = (Vec::new(), Vec::new());
    for ((b, o, _), p) in parts.iter().zip(&passes) {
        if !p.outlier {
            kb.extend_from_slice(&base[b.clone()]);
            ko.extend_from_slice(&opt[o.clone()]);
        }
    }
    let mut est = estimator.pair(&kb, &ko)?;
    est.pairs = base.len().min(opt.len());
    est.passes = passes;
    Some(est)
}

/// Flag the passes whose speedup or optimized time lies more than [`PASS_OUTLIER_MADS`] robust
/// standard deviations (1.4826 MAD, at least [`PASS_SD_FLOOR`]) from the median of the passes,
/// on the log scale: only with three usable passes or more, and at most a minority of them
/// (the furthest first).
pub(crate) fn mark_outlier_passes(passes: &mut [PassEstimate]) {
    let usable: Vec<usize> = (0..passes.len()).filter(|&i| !passes[i].outlier).collect();
    if usable.len() < 3 {
        return;
    }
    let score = |f: fn(&PassEstimate) -> f64| -> Vec<f64> {
        let ys: Vec<f64> = usable.iter().map(|&i| f(&passes[i]).ln()).collect();
        let Some((median, mad)) = stats::mad(&ys) else {
            return vec![0.0; ys.len()];
        };
        let sd = (1.4826 * mad).max(PASS_SD_FLOOR);
        ys.iter().map(|y| (y - median).abs() / sd).collect()
    };
    let (s, o) = (score(|p| p.speedup), score(|p| p.optimized_ms));
    let mut worst: Vec<(f64, usize)> = usable
        .iter()
        .enumerate()
        .map(|(j, &i)| (s[j].max(o[j]), i))
        .filter(|(z, _)| *z > PASS_OUTLIER_MADS)
        .collect();
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    let most = (usable.len() - 1) / 2;
    for (_, i) in worst.into_iter().take(most) {
        passes[i].outlier = true;
    }
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
pub(crate) fn precise_now(samples: &[Vec<f64>], verified: &[bool], precision_pct: f64) -> bool {
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
mod tests;
