//! How a side-by-side comparison decides. Per round `r` the current and the anchor build each
//! give an optimized time `o` and a speedup `s`; the worsening of round `r` is `ln(o_cur / o_anc)`
//! for the time and `ln(s_anc / s_cur)` for the speedup (positive: the current build is worse).
//! Each metric's shift is the Hodges-Lehmann estimate of its worsenings with the signed-rank
//! interval (distribution-free; valid because the order of the two builds is balanced and drawn
//! at random, so under "no difference" a worsening is as likely as its negative).
//!
//! The intervals are looked at only at the rounds of a fixed schedule ([`looks`]: the minimum,
//! then ×1.5 each, and the last round), and each is made at the level [`interval_level`]:
//! `1 − (1 − confidence) / (metrics × looks)` (Bonferroni over the deciding metrics and every
//! look), so stopping early does not raise the false-alarm rate above `1 − confidence`.
//!
//! With `t = ln(1 + threshold_pct / 100)`: a metric is settled `worse` once its interval lies
//! above `t`, `same` once it lies below `t`. Rounds stop when a metric is worse, when both are
//! same, when both intervals are narrower than the precision asked for, or when the budget is
//! spent; a metric still open then is `worse` when its **estimate is beyond `t` and its interval
//! excludes no change** (lies above 0: the history test's rule, a change beyond the threshold
//! that is significant), and undecided otherwise: never on a wide interval that merely excludes
//! 0 around a smaller estimate ([`crate::history::sidebyside::worsening_verdict`], the one rule
//! the stored records are checked with too). The target is `worse` when a deciding metric is
//! ([`crate::sidebyside::DecideOn`]: both by default), `same` when every one is, `unknown`
//! otherwise, or when a build or a run failed.

use crate::history::sidebyside::{SbsVerdict, worsening_verdict};
use crate::sidebyside::outcome::{RatioCi, Stop, Verdict};
use crate::stats::{ShiftCi, hodges_lehmann};

/// The state of one metric after some rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MetricState {
    /// Shift of the worsenings (log scale) with its interval.
    pub(crate) ci: ShiftCi,
    /// Settled already (`Some(Worse)` or `Some(Same)`) or still open.
    pub(crate) settled: Option<Verdict>,
    /// The log threshold `ln(1 + threshold_pct / 100)`.
    pub(crate) threshold: f64,
}

/// Growth of the interval between two looks.
const LOOK_GROWTH: f64 = 1.5;

/// The rounds at which the intervals are looked at: `min_rounds`, then ×1.5 (rounded up) while
/// below `max_rounds`, then `max_rounds`.
pub(crate) fn looks(min_rounds: u32, max_rounds: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut n = min_rounds.max(1);
    while n < max_rounds {
        out.push(n);
        n = ((f64::from(n) * LOOK_GROWTH).ceil() as u32).max(n + 1);
    }
    out.push(max_rounds.max(min_rounds.max(1)));
    out
}

/// The level of every interval: `1 − (1 − confidence) / (metrics × looks)`.
pub(crate) fn interval_level(confidence: f64, looks: usize, metrics: usize) -> f64 {
    1.0 - (1.0 - confidence) / (metrics.max(1) * looks.max(1)) as f64
}

/// The level of a comparison's intervals: the looks of the schedule of `budget`, one more when
/// more rounds may be granted (`extended`: the look that finds the comparison undecided when its
/// seconds run out is then not its last one), over the metrics `decide_on` decides on.
pub(crate) fn comparison_level(
    budget: &crate::sidebyside::Budget,
    decide_on: crate::sidebyside::DecideOn,
    extended: bool,
) -> f64 {
    let looks = looks(budget.min_rounds, budget.max_rounds).len() + usize::from(extended);
    interval_level(budget.confidence, looks, decide_on.select((), ()).len())
}

/// The log threshold `ln(1 + pct / 100)`.
pub(crate) fn log_threshold(threshold_pct: f64) -> f64 {
    (threshold_pct / 100.0).ln_1p()
}

/// A metric's state from its worsenings (`None` with too few rounds for an interval).
pub(crate) fn metric(worsenings: &[f64], threshold_pct: f64, level: f64) -> Option<MetricState> {
    let ci = hodges_lehmann(worsenings, level)?;
    let t = log_threshold(threshold_pct);
    Some(MetricState {
        ci,
        settled: settle(&ci, t),
        threshold: t,
    })
}

/// Settled by the interval alone: `worse` when it lies above `t`, `same` when below, else open.
pub(crate) fn settle(ci: &ShiftCi, t: f64) -> Option<Verdict> {
    if ci.low > t {
        Some(Verdict::Worse)
    } else if ci.high < t {
        Some(Verdict::Same)
    } else {
        None
    }
}

/// Whether the rounds may stop now, and why: a metric settled worse, both settled same, or both
/// intervals within `precision_pct` (half the interval's width, in percent of the ratio).
pub(crate) fn early_stop(metrics: &[MetricState], precision_pct: f64) -> Option<Stop> {
    if metrics.iter().any(|m| m.settled == Some(Verdict::Worse))
        || metrics.iter().all(|m| m.settled == Some(Verdict::Same))
    {
        return Some(Stop::Decided);
    }
    let p = log_threshold(precision_pct);
    metrics
        .iter()
        .all(|m| (m.ci.high - m.ci.low) / 2.0 <= p)
        .then_some(Stop::Precise)
}

/// What one metric says when the rounds stop: settled, else `worse` when its estimate is beyond
/// the threshold and its interval lies above 0, else `unknown` (see the module docs).
pub(crate) fn metric_verdict(m: &MetricState) -> Verdict {
    match worsening_verdict(m.ci.estimate, m.ci.low, m.ci.high, m.threshold) {
        SbsVerdict::Worse => Verdict::Worse,
        SbsVerdict::Same => Verdict::Same,
        SbsVerdict::Unknown => Verdict::Unknown,
    }
}

/// The verdict when the rounds stop (see the module docs).
pub(crate) fn final_verdict(metrics: &[MetricState]) -> Verdict {
    let each: Vec<Verdict> = metrics.iter().map(metric_verdict).collect();
    if each.contains(&Verdict::Worse) {
        Verdict::Worse
    } else if !each.is_empty() && each.iter().all(|v| *v == Verdict::Same) {
        Verdict::Same
    } else {
        Verdict::Unknown
    }
}

/// The ratio current/anchor of a metric: `exp(shift)` for the time, `exp(-shift)` for the speedup.
pub(crate) fn ratio(ci: &ShiftCi, inverted: bool) -> RatioCi {
    if inverted {
        RatioCi {
            ratio: ((-ci.estimate).exp()).into(),
            low: ((-ci.high).exp()).into(),
            high: ((-ci.low).exp()).into(),
        }
    } else {
        RatioCi {
            ratio: ci.estimate.exp().into(),
            low: ci.low.exp().into(),
            high: ci.high.exp().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around(centre: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| centre + spread * ((i % 5) as f64 - 2.0) / 2.0)
            .collect()
    }

    #[test]
    fn a_metric_settles_only_when_its_interval_clears_the_threshold() {
        // 10 % worse, tight: settled worse. 0 %, tight: settled same. 5 % at a 5 % threshold: open.
        let worse = metric(&around(0.10f64.ln_1p(), 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(worse.settled, Some(Verdict::Worse));
        let same = metric(&around(0.0, 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(same.settled, Some(Verdict::Same));
        let edge = metric(&around(0.05f64.ln_1p(), 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(edge.settled, None);
        assert!(metric(&around(0.0, 0.01, 5), 5.0, 0.95).is_none());
        // Open at the end: significant (interval above 0) is worse, else unknown.
        assert_eq!(final_verdict(&[edge, same]), Verdict::Worse);
        let noisy = metric(&around(0.02, 0.2, 20), 5.0, 0.95).unwrap();
        assert_eq!(noisy.settled, None);
        assert_eq!(final_verdict(&[noisy, same]), Verdict::Unknown);
        assert_eq!(final_verdict(&[same, same]), Verdict::Same);
        assert_eq!(final_verdict(&[]), Verdict::Unknown);
    }

    /// The worsening interval `(estimate, low, high)` of a ratio current/anchor with its interval:
    /// `ln` of an optimized-time ratio, `−ln` of a speedup ratio (bounds swapped).
    fn worsening(ratio: (f64, f64, f64), speedup: bool) -> ShiftCi {
        let (r, lo, hi) = ratio;
        if speedup {
            ShiftCi {
                estimate: -r.ln(),
                low: -hi.ln(),
                high: -lo.ln(),
            }
        } else {
            ShiftCi {
                estimate: r.ln(),
                low: lo.ln(),
                high: hi.ln(),
            }
        }
    }

    /// Issue 37: a metric is `worse` only when its estimate is beyond the threshold and its
    /// interval excludes no change (the history test's rule: a regression is a change beyond the
    /// threshold that is significant), or when its whole interval lies beyond the threshold;
    /// never on a wide interval that merely excludes 0. Ratios current/anchor at a 5 % threshold.
    #[test]
    fn worse_needs_the_estimate_beyond_the_threshold_and_an_interval_above_no_change() {
        let t = log_threshold(5.0);
        // (case, (ratio, low, high), a speedup (higher is better) rather than a time, verdict)
        type Case = (&'static str, (f64, f64, f64), bool, Verdict);
        let cases: [Case; 8] = [
            // The A/A night: the time's interval includes no change.
            (
                "issue, optimized time",
                (1.4904, 0.4485, 3.9121),
                false,
                Verdict::Unknown,
            ),
            // The same night's speedup: its whole interval lies beyond the threshold.
            (
                "issue, speedup",
                (0.6308, 0.3526, 0.8839),
                true,
                Verdict::Worse,
            ),
            // Wide, excludes no change, estimate under the threshold: not a worsening of 5 %.
            (
                "wide, estimate 3 %",
                (1.03, 1.002, 1.30),
                false,
                Verdict::Unknown,
            ),
            (
                "wide speedup, estimate -2 %",
                (0.98, 0.70, 0.999),
                true,
                Verdict::Unknown,
            ),
            // Estimate beyond the threshold, interval above no change: worse.
            (
                "estimate 8 %, interval above 1",
                (1.08, 1.01, 1.20),
                false,
                Verdict::Worse,
            ),
            (
                "speedup -9 %, interval below 1",
                (0.91, 0.80, 0.995),
                true,
                Verdict::Worse,
            ),
            // Estimate beyond the threshold, interval includes no change: unknown.
            (
                "estimate 6 %, includes 1",
                (1.06, 0.99, 1.15),
                false,
                Verdict::Unknown,
            ),
            // The whole interval under the threshold: same.
            ("tight, 2 %", (1.02, 1.01, 1.03), false, Verdict::Same),
        ];
        for (name, ratio, speedup, want) in cases {
            let ci = worsening(ratio, speedup);
            let m = MetricState {
                ci,
                settled: settle(&ci, t),
                threshold: t,
            };
            assert_eq!(metric_verdict(&m), want, "{name}: {ratio:?}");
        }
    }

    #[test]
    fn rounds_stop_when_settled_or_precise() {
        let worse = metric(&around(0.2, 0.01, 20), 5.0, 0.95).unwrap();
        let same = metric(&around(0.0, 0.01, 20), 5.0, 0.95).unwrap();
        let edge = metric(&around(0.05f64.ln_1p(), 0.004, 20), 5.0, 0.95).unwrap();
        assert_eq!(early_stop(&[worse, edge], 0.1), Some(Stop::Decided));
        assert_eq!(early_stop(&[same, same], 0.1), Some(Stop::Decided));
        assert_eq!(early_stop(&[same, edge], 0.1), None);
        assert_eq!(early_stop(&[same, edge], 1.0), Some(Stop::Precise));
    }

    #[test]
    fn looks_grow_geometrically_and_share_the_false_alarm_rate() {
        assert_eq!(looks(10, 200), [10, 15, 23, 35, 53, 80, 120, 180, 200]);
        assert_eq!(looks(10, 10), [10]);
        assert_eq!(looks(10, 12), [10, 12]);
        let level = interval_level(0.95, looks(10, 200).len(), 2);
        assert!((level - (1.0 - 0.05 / 18.0)).abs() < 1e-12);
        assert!((interval_level(0.95, 9, 1) - (1.0 - 0.05 / 9.0)).abs() < 1e-12);
        // Ten rounds are enough for an interval at that level (2 / 2^10 < 0.05 / 18).
        assert!(crate::stats::shift::signed_rank_ci_rank(10, level).is_some());
        assert!(crate::stats::shift::signed_rank_ci_rank(9, level).is_none());
    }

    #[test]
    fn ratios_read_current_over_anchor() {
        let ci = ShiftCi {
            estimate: 0.1,
            low: 0.05,
            high: 0.2,
        };
        let t = ratio(&ci, false);
        assert!(
            (t.ratio.get() - 0.1f64.exp()).abs() < 1e-12 && t.low < t.ratio && t.ratio < t.high
        );
        let s = ratio(&ci, true);
        assert!(
            (s.ratio.get() - (-0.1f64).exp()).abs() < 1e-12 && s.low < s.ratio && s.ratio < s.high
        );
        assert!((s.high.get() - (-0.05f64).exp()).abs() < 1e-12);
    }
}
