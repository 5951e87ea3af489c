//! Run-to-run noise from the history: each target's values in the accepted runs of a window (the
//! newest `history_window`), grouped by segment (an anchor and the runs compared with it). The
//! within-run intervals alone understate the noise (docs/regression-model.md §7: between-run
//! variance dominates), so the significance test takes its variance from here, as Conbench and
//! Bencher do, blended with a prior for a young history.

use crate::history::error::HistoryError;
use crate::history::model::{IndexRow, Summary, TargetSummary};
use crate::history::package::{IndexDoc, load_run};
use crate::stats;
use std::path::Path;

/// One accepted run of the window.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRun {
    /// Its run id.
    pub run_id: String,
    /// The anchor its values are measured against: its own id for an anchor, else the
    /// `baseline_run_id` it was compared with.
    pub segment: String,
    /// Its summary.
    pub summary: Summary,
}

/// The accepted runs the noise estimate uses, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoiseHistory {
    /// The runs.
    pub runs: Vec<HistoryRun>,
}

/// One metric of one target over the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// ln(best_speedup).
    Speedup,
    /// ln(best_optimized_time_ms).
    OptimizedLatency,
}

impl Metric {
    /// The metric's row reason name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Metric::Speedup => "speedup",
            Metric::OptimizedLatency => "optimized_latency",
        }
    }

    /// The log value and its within-run variance of a target row (`None` when the row did not
    /// succeed or the value is not positive). Without a measurement record the within-run
    /// variance is unknown and taken as 0 (which only makes the between-run estimate larger).
    pub(crate) fn point(self, t: &TargetSummary) -> Option<(f64, f64)> {
        if t.status != crate::aggregate::SUCCEEDED {
            return None;
        }
        let (value, se) = match self {
            Metric::Speedup => (
                crate::aggregate::positive(t.best_speedup)?,
                t.measurement.as_ref().and_then(|m| m.log_speedup_se()),
            ),
            Metric::OptimizedLatency => (
                crate::aggregate::optimized_time_ms(t)?,
                t.measurement.as_ref().and_then(|m| m.log_optimized_se()),
            ),
        };
        Some((value.ln(), se.map_or(0.0, |s| s * s)))
    }
}

/// A point of the window: segment, log value, within-run variance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    /// Run id.
    pub(crate) run_id: String,
    /// Segment (anchor run id).
    pub(crate) segment: String,
    /// ln value.
    pub(crate) y: f64,
    /// Within-run variance of `y`.
    pub(crate) v: f64,
    /// Measured while the machine was overloaded (its measurement records it).
    pub(crate) overloaded: bool,
}

impl NoiseHistory {
    /// The accepted runs of the history at `root`, newest `window` of them, that were measured in
    /// the environment `env_key` (when both sides record one) and belong to the suite
    /// `suite_name` v`suite_version`; `exclude` (the run being judged) is left out.
    pub fn load(
        root: &Path,
        suite: (&str, u32),
        env_key: Option<&str>,
        window: usize,
        exclude: Option<&str>,
    ) -> Result<NoiseHistory, HistoryError> {
        let Some(doc) = IndexDoc::load(root)? else {
            return Ok(NoiseHistory::default());
        };
        let mut runs = Vec::new();
        for row in doc.index.runs.iter().rev() {
            if runs.len() >= window {
                break;
            }
            if !row.is_accepted() || Some(row.run_id.as_str()) == exclude {
                continue;
            }
            if let Some(run) = history_run(root, row, suite, env_key)? {
                runs.push(run);
            }
        }
        runs.reverse();
        Ok(NoiseHistory { runs })
    }

    /// The accepted runs of `root` that the noise estimate of `summary`'s comparison uses (the
    /// suite's window, the same suite and environment, the run itself left out). `tier1-run`
    /// builds it from the restored history before appending the run; promotion rebuilds the same
    /// set from the candidate history to recompute the comparison.
    pub fn for_run(
        root: &Path,
        suite: &crate::suite::Suite,
        summary: &Summary,
    ) -> Result<NoiseHistory, HistoryError> {
        let env_key = summary.environment.as_ref().map(|e| e.key());
        NoiseHistory::load(
            root,
            (&suite.suite_name, suite.version),
            env_key.as_deref(),
            suite.thresholds.history_window as usize,
            Some(&summary.run_id),
        )
    }

    /// Run ids, oldest first.
    pub fn run_ids(&self) -> Vec<String> {
        self.runs.iter().map(|r| r.run_id.clone()).collect()
    }

    /// The points of `metric` of the target of row `of`, oldest first, from the runs measured
    /// with its settings, without those measured while the machine was overloaded when enough
    /// others remain ([`quiet_enough`]).
    pub(crate) fn points(
        &self,
        of: &TargetSummary,
        metric: Metric,
        th: &crate::suite::Thresholds,
    ) -> Vec<Point> {
        let all: Vec<Point> = self
            .runs
            .iter()
            .filter_map(|r| {
                let row = crate::regress::find_target(&r.summary, &of.target)?;
                // A run measured with other settings says nothing of this measurement's noise
                // or level (rows without a settings record are kept, as before).
                if let (Some(a), Some(b)) = (&row.measurement_settings, &of.measurement_settings)
                    && !b.changes_from(a).is_empty()
                {
                    return None;
                }
                let (y, v) = metric.point(row)?;
                Some(Point {
                    run_id: r.run_id.clone(),
                    segment: r.segment.clone(),
                    y,
                    v,
                    overloaded: row
                        .measurement
                        .as_ref()
                        .is_some_and(|m| m.overloaded.is_some()),
                })
            })
            .collect();
        quiet_enough(all, th)
    }
}

/// The window without its overloaded points (issue 37: a run measured while the machine was
/// overloaded says what the neighbours did, not how much the code's runs differ, and kept the
/// stated detectable change of later nights inflated), when at least `anchor_outlier_min_runs`
/// others remain; on a machine that is overloaded night after night the overloaded runs are its
/// run-to-run noise, and all of them stay.
pub(crate) fn quiet_enough(points: Vec<Point>, th: &crate::suite::Thresholds) -> Vec<Point> {
    let quiet = points.iter().filter(|p| !p.overloaded).count();
    if quiet >= th.anchor_outlier_min_runs as usize {
        points.into_iter().filter(|p| !p.overloaded).collect()
    } else {
        points
    }
}

/// The passes an anchor row was measured in, as points of their own segment: the spread of a
/// pooled anchor's passes is data about the run-to-run noise from the first night on (their
/// within-pass variance is not recorded and taken as 0, which only makes the estimate larger).
/// Outlier passes (left out of the anchor) are left out here too.
pub(crate) fn pass_points(anchor: &TargetSummary, metric: Metric) -> Vec<Point> {
    let Some(m) = &anchor.measurement else {
        return Vec::new();
    };
    m.passes
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.outlier)
        .filter_map(|(i, p)| {
            let value = f64::from(match metric {
                Metric::Speedup => p.speedup,
                Metric::OptimizedLatency => p.optimized_ms,
            }?);
            (value > 0.0 && value.is_finite()).then(|| Point {
                run_id: format!("anchor pass {}", i + 1),
                segment: format!("anchor passes of {}", anchor.target),
                y: value.ln(),
                v: 0.0,
                overloaded: false,
            })
        })
        .collect()
}

fn history_run(
    root: &Path,
    row: &IndexRow,
    suite: (&str, u32),
    env_key: Option<&str>,
) -> Result<Option<HistoryRun>, HistoryError> {
    let files = load_run(root, row)?;
    let s = files.summary;
    if (s.suite_name.as_str(), s.suite_version) != suite {
        return Ok(None);
    }
    if let (Some(want), Some(env)) = (env_key, s.environment.as_ref())
        && env.key() != want
    {
        return Ok(None);
    }
    let segment = if row.is_eligible() {
        Some(row.run_id.clone())
    } else {
        files.regression.baseline_run_id.clone()
    };
    Ok(segment.map(|segment| HistoryRun {
        run_id: row.run_id.clone(),
        segment,
        summary: s,
    }))
}

/// The MAD rule of the history: a log value is an outlier when it lies more than
/// `anchor_outlier_mads` robust standard deviations from the median of the window's values, the
/// robust SD being 1.4826 MAD but at least the prior noise (`prior_noise_pct`), so a window of
/// near-identical values does not flag every small change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MadRule {
    /// Median of the values.
    pub(crate) median: f64,
    /// Robust standard deviation (with the floor).
    pub(crate) sd: f64,
    /// Allowed distance from the median.
    pub(crate) bound: f64,
    /// Values it was computed from.
    pub(crate) n: usize,
}

impl MadRule {
    /// The rule of `ys`; `None` with fewer than `anchor_outlier_min_runs` (at least 3) values.
    pub(crate) fn of(ys: &[f64], th: &crate::suite::Thresholds) -> Option<MadRule> {
        if ys.len() < (th.anchor_outlier_min_runs as usize).max(3) {
            return None;
        }
        let (median, mad) = stats::mad(ys)?;
        let sd = (stats::robust::MAD_SCALE * mad).max(th.prior_noise_pct / 100.0);
        Some(MadRule {
            median,
            sd,
            bound: th.anchor_outlier_mads * sd,
            n: ys.len(),
        })
    }

    /// Whether `y` lies beyond the bound.
    pub(crate) fn is_outlier(&self, y: f64) -> bool {
        (y - self.median).abs() > self.bound
    }
}

/// The points the MAD rule flags (none when there are too few for it).
pub(crate) fn outliers(points: &[Point], th: &crate::suite::Thresholds) -> Vec<bool> {
    let ys: Vec<f64> = points.iter().map(|p| p.y).collect();
    match MadRule::of(&ys, th) {
        Some(rule) => ys.iter().map(|y| rule.is_outlier(*y)).collect(),
        None => vec![false; ys.len()],
    }
}

/// The targets of `summary` whose speedup is an outlier against the accepted runs of `history`
/// (median ± `anchor_outlier_mads` robust standard deviations, 1.4826 MAD and at least the prior
/// noise), each as a message naming the target and the figures. Needs
/// `anchor_outlier_min_runs` values; targets in `exempt` (regressions a recheck confirmed) are
/// not judged.
pub(crate) fn anchor_outliers(
    summary: &Summary,
    history: &NoiseHistory,
    th: &crate::suite::Thresholds,
    exempt: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for t in &summary.targets {
        if exempt.contains(&t.target) || crate::aggregate::goal(t) != crate::suite::Goal::Speed {
            continue;
        }
        let Some((y, _)) = Metric::Speedup.point(t) else {
            continue;
        };
        let ys: Vec<f64> = history
            .points(t, Metric::Speedup, th)
            .iter()
            .map(|p| p.y)
            .collect();
        let Some(rule) = MadRule::of(&ys, th) else {
            continue;
        };
        if rule.is_outlier(y) {
            out.push(format!(
                "target {}: best_speedup {:.3}x is an outlier against the last {} accepted runs (median {:.3}x, robust SD {:.2} %, allowed {:.3}x to {:.3}x)",
                t.key,
                y.exp(),
                rule.n,
                rule.median.exp(),
                rule.sd * 100.0,
                (rule.median - rule.bound).exp(),
                (rule.median + rule.bound).exp(),
            ));
        }
    }
    out
}

/// What the window says about the run-to-run noise of one metric of one target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// Between-run variance (τ², log scale) after blending with the prior.
    pub(crate) tau2: f64,
    /// Degrees of freedom of `tau2` (data plus the prior's pseudo-runs).
    pub(crate) df: f64,
    /// Points the data part of the estimate used.
    pub(crate) noise_runs: usize,
}

/// The prior a young history is blended with: τ0 (log scale) and its weight in runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prior {
    /// Prior between-run standard deviation (log scale, ≈ relative).
    pub(crate) tau: f64,
    /// Pseudo-runs (degrees of freedom) it counts for.
    pub(crate) runs: f64,
}

/// How much noisier than the window's typical run a run may have been measured and still count
/// toward the between-run variance: a point whose within-run standard error is more than this
/// many times the median of the window's is left out of [`estimate`] (issue 37: a loaded night
/// measured with an interval several times as wide kept the stated detectable change of the
/// following nights inflated until it left the window).
pub(crate) const NOISIER: f64 = 3.0;

/// The points [`estimate`] uses: all of them, except those whose within-run variance is more
/// than [`NOISIER`]² times the median of the window's positive ones (needs 3 of those).
pub(crate) fn of_quality(points: &[Point]) -> Vec<&Point> {
    let limit = typical_v(points).map(|m| m * NOISIER * NOISIER);
    points
        .iter()
        .filter(|p| limit.is_none_or(|l| p.v <= l))
        .collect()
}

/// The median of the positive within-run variances of `points` (`None` with fewer than 3).
fn typical_v(points: &[Point]) -> Option<f64> {
    let mut vs: Vec<f64> = points.iter().map(|p| p.v).filter(|v| *v > 0.0).collect();
    vs.sort_by(f64::total_cmp);
    (vs.len() >= 3).then(|| stats::median(&vs)).flatten()
}

/// How many times noisier (within-run standard error) a measurement of variance `v` was than
/// the typical run of `window`, when that is more than [`NOISIER`] (the rule of
/// [`of_quality`]); `None` otherwise or when the window cannot tell (fewer than 3 runs with a
/// variance).
pub(crate) fn far_noisier(window: &[Point], v: f64) -> Option<f64> {
    let typical = typical_v(window).filter(|m| *m > 0.0)?;
    (v > typical * NOISIER * NOISIER).then(|| (v / typical).sqrt())
}

/// Estimate the between-run variance from `points` (outliers already removed).
///
/// Points measured far noisier than the window's are left out first ([`of_quality`]). Residuals
/// are taken from each segment's own mean (a promotion may move the level), so the pooled
/// variance s² = Σ (y − ȳ_segment)² / (N − S) estimates τ² + mean v; the moment estimate
/// τ̂² = max(0, s² − mean v) (DerSimonian-Laird style) is blended with the prior:
/// τ² = (ν0·τ0² + df·τ̂²) / (ν0 + df), df = N − S. With no history it is the prior alone.
pub(crate) fn estimate(points: &[Point], prior: Prior) -> Estimate {
    let points = of_quality(points);
    let mut segments: Vec<(&str, Vec<f64>)> = Vec::new();
    for p in &points {
        match segments.iter_mut().find(|(s, _)| *s == p.segment) {
            Some((_, v)) => v.push(p.y),
            None => segments.push((p.segment.as_str(), vec![p.y])),
        }
    }
    let mut ss = 0.0;
    for (_, ys) in &segments {
        let m = stats::mean(ys).unwrap_or(0.0);
        ss += ys.iter().map(|y| (y - m) * (y - m)).sum::<f64>();
    }
    let df = points.len().saturating_sub(segments.len()) as f64;
    let mean_v = stats::mean(&points.iter().map(|p| p.v).collect::<Vec<_>>()).unwrap_or(0.0);
    let tau2_hat = if df > 0.0 {
        (ss / df - mean_v).max(0.0)
    } else {
        0.0
    };
    let weight = prior.runs + df;
    let tau2 = if weight > 0.0 {
        (prior.runs * prior.tau * prior.tau + df * tau2_hat) / weight
    } else {
        prior.tau * prior.tau
    };
    Estimate {
        tau2,
        df: weight,
        noise_runs: points.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(seg: &str, ys: &[f64]) -> Vec<Point> {
        ys.iter()
            .enumerate()
            .map(|(i, y)| Point {
                run_id: format!("{seg}{i}"),
                segment: seg.into(),
                y: *y,
                v: 0.0,
                overloaded: false,
            })
            .collect()
    }

    const PRIOR: Prior = Prior {
        tau: 0.02,
        runs: 4.0,
    };

    #[test]
    fn a_young_history_is_the_prior() {
        let e = estimate(&[], PRIOR);
        assert_eq!((e.df, e.noise_runs), (4.0, 0));
        assert!((e.tau2 - 4e-4).abs() < 1e-15);
        // One point per segment carries no spread: still the prior.
        let e = estimate(&pts("a", &[0.7]), PRIOR);
        assert_eq!((e.df, e.noise_runs), (4.0, 1));
    }

    #[test]
    fn segments_pool_their_residuals() {
        // Two segments with different means, each spread ±0.01: pooled variance 8·1e-4 / 6.
        let mut p = pts("old", &[1.0, 1.02, 1.0, 1.02]);
        p.extend(pts("a", &[2.0, 2.02, 2.0, 2.02]));
        let none = Prior {
            tau: 0.0,
            runs: 0.0,
        };
        let e = estimate(&p, none);
        assert_eq!((e.df, e.noise_runs), (6.0, 8));
        assert!((e.tau2 - 8.0 * 1e-4 / 6.0).abs() < 1e-12, "{}", e.tau2);
        // The prior pulls a small data estimate toward itself.
        let e = estimate(&p, PRIOR);
        let want = (4.0 * 4e-4 + 6.0 * (8.0 * 1e-4 / 6.0)) / 10.0;
        assert!((e.tau2 - want).abs() < 1e-12);
        assert_eq!(e.df, 10.0);
    }

    #[test]
    fn within_run_variance_is_subtracted_from_the_spread() {
        let mut p = pts("a", &[1.0, 1.02]);
        for x in &mut p {
            x.v = 1e-4;
        }
        let e = estimate(
            &p,
            Prior {
                tau: 0.0,
                runs: 0.0,
            },
        );
        assert!((e.tau2 - (2e-4 - 1e-4)).abs() < 1e-12);
    }

    /// Issue 37: a run whose measurement was far noisier than the window's (a loaded night: its
    /// within-run interval 4 times as wide and its value scattered by it) inflated the
    /// between-run variance of every later night until it left the window. A point whose
    /// within-run variance is more than [`NOISIER`]² times the window's median is left out of
    /// the estimate: the quiet estimate stands.
    #[test]
    fn a_far_noisier_run_does_not_inflate_the_between_run_variance() {
        let none = Prior {
            tau: 0.0,
            runs: 0.0,
        };
        let mut p = pts("a", &[0.0, 0.01, -0.01, 0.005, -0.005, 0.008]);
        for x in &mut p {
            x.v = 0.005f64.powi(2);
        }
        let quiet = estimate(&p, none);
        let mut burst = pts("a", &[0.06, -0.06, 0.05]);
        for x in &mut burst {
            x.v = 0.02f64.powi(2);
        }
        p.extend(burst);
        let after = estimate(&p, none);
        assert!(
            after.tau2 <= 1.5 * quiet.tau2 + 1e-12,
            "quiet tau {:.4}, after the burst {:.4}",
            quiet.tau2.sqrt(),
            after.tau2.sqrt()
        );
    }

    /// Overloaded runs leave the window only when enough others remain: on a machine that is
    /// overloaded night after night they are its run-to-run noise.
    #[test]
    fn overloaded_points_leave_the_window_only_when_enough_others_remain() {
        let th = crate::suite::Thresholds::default();
        let window = |quiet: usize, overloaded: usize| {
            let mut p = pts("a", &vec![0.0; quiet + overloaded]);
            for x in p.iter_mut().skip(quiet) {
                x.overloaded = true;
            }
            quiet_enough(p, &th)
        };
        assert_eq!(window(5, 3).len(), 5);
        assert!(window(5, 3).iter().all(|p| !p.overloaded));
        assert_eq!(window(4, 3).len(), 7);
        assert_eq!(window(0, 6).len(), 6);
    }

    #[test]
    fn outliers_need_enough_points_and_respect_the_floor() {
        let th = crate::suite::Thresholds::default();
        let mut p = pts("a", &[1.0, 1.001, 0.999, 1.0, 1.002]);
        p.extend(pts("b", &[1.5]));
        assert_eq!(outliers(&p, &th), [false, false, false, false, false, true]);
        assert!(outliers(&p[..4], &th).iter().all(|f| !f));
        // Identical values: the prior-noise floor (2 % × 3.5) keeps a 5 % change unflagged.
        let same = pts("a", &[1.0, 1.0, 1.0, 1.0, 1.0, 1.05]);
        assert!(outliers(&same, &th).iter().all(|f| !f));
        let far = pts("a", &[1.0, 1.0, 1.0, 1.0, 1.0, 1.08]);
        assert_eq!(outliers(&far, &th).last(), Some(&true));
    }
}
