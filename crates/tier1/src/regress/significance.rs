//! Statistical change detection (`thresholds.detection: statistical`). Per target and metric
//! (ln speedup, ln optimized time), the worsening `w = ln anchor − ln current` (speedup) or
//! `ln current − ln anchor` (time) is tested against run-to-run noise:
//!
//! `se = √(2τ² + v_anchor + v_current)`, `t = w / se` on `df` degrees of freedom, where `v` are
//! the runs' own interval variances and τ² the between-run variance of the history ([`noise`]),
//! blended with a prior for a young history. Significant: one-sided `p < alpha / (2 ×
//! compared targets)`. Each metric then has a verdict ([`metric_verdict`]):
//!
//! - **regressed**: worse by at least the threshold and significant;
//! - **improved**: the mirror image;
//! - **unchanged**: a threshold-sized worsening is ruled out (`w + z₀.₉₅·se` below it);
//! - **unknown**: neither: the measurement cannot decide at this noise.
//!
//! The smallest worsening a metric catches with 95 % probability is stated with it
//! (`detectable_pct`, [`detectable`]). A target decides by the reference rules alone, recorded
//! with its reason, when the suite asks for it, for a memory goal (memory figures are exact),
//! for a status change, and when either run lacks a measurement record (older summaries). A
//! measurement taken while the device throttled makes every metric unknown.

use super::noise::{self, Metric, NoiseHistory, Prior};
use crate::aggregate::{SUCCEEDED, pair_goal};
use crate::history::model::TargetSummary;
use crate::history::{DetectionMethod, MetricTest, TargetDetection, Verdict};
use crate::suite::{Goal, ThresholdBook, Thresholds};

/// Probability with which the stated detectable change is caught, and the one-sided level of
/// the bound an `unchanged` verdict rules a threshold-sized change out with.
pub(crate) const POWER: f64 = 0.95;

/// The statistical side of one comparison.
#[derive(Debug, Clone)]
pub(crate) struct Detector<'a> {
    /// The suite's thresholds per target (detection settings from its base).
    pub(crate) thresholds: ThresholdBook,
    /// The accepted runs of the noise window.
    pub(crate) history: &'a NoiseHistory,
    /// Per-test significance level.
    pub(crate) alpha: f64,
}

/// How one target is decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TargetDecision {
    /// The detection record (its target verdict is set once the rows are known).
    pub(crate) record: TargetDetection,
    /// Why every metric is unknown whatever the figures (throttling), when it is.
    pub(crate) forced_unknown: Option<String>,
    /// The metrics whose improvement is not claimed (made unknown: read while the machine was
    /// overloaded, or on a measurement far noisier than the window's runs), each with why.
    pub(crate) unclaimed: Vec<(String, String)>,
}

impl TargetDecision {
    /// The verdict of `metric`: `Some(verdict)` under the statistical method, `None` when the
    /// reference rules alone decide.
    pub(crate) fn verdict(&self, metric: Metric) -> Option<Verdict> {
        if self.record.method != DetectionMethod::Statistical {
            return None;
        }
        self.record
            .tests
            .iter()
            .find(|t| t.metric == metric.as_str())
            .and_then(|t| t.verdict)
    }
}

impl<'a> Detector<'a> {
    /// A detector whose family-wise level `thresholds.alpha` is split (Bonferroni) over the two
    /// tests (speedup and optimized latency) of each of `compared` targets.
    pub(crate) fn new(
        thresholds: impl Into<ThresholdBook>,
        history: &'a NoiseHistory,
        compared: usize,
    ) -> Self {
        let thresholds = thresholds.into();
        let alpha = thresholds.base.alpha / (2 * compared.max(1)) as f64;
        Detector {
            thresholds,
            history,
            alpha,
        }
    }

    fn prior(&self) -> Prior {
        Prior {
            tau: self.thresholds.base.prior_noise_pct / 100.0,
            runs: self.thresholds.base.prior_runs,
        }
    }

    /// Decide how `cur` is compared with the anchor's row `prev`.
    pub(crate) fn decide(&self, cur: &TargetSummary, prev: &TargetSummary) -> TargetDecision {
        let reference = |reason: String| TargetDecision {
            record: TargetDetection::reference(&cur.target, reason),
            forced_unknown: None,
            unclaimed: Vec::new(),
        };
        let base = &self.thresholds.base;
        if base.detection == DetectionMethod::Reference {
            return reference("thresholds.detection is reference".into());
        }
        if pair_goal(cur, prev) == Goal::Memory {
            return reference("memory goal: memory figures are exact".into());
        }
        if cur.status != SUCCEEDED || prev.status != SUCCEEDED {
            return reference("a status change is decided by the status rule".into());
        }
        let (Some(mc), Some(ma)) = (&cur.measurement, &prev.measurement) else {
            let who = if cur.measurement.is_none() {
                "the current run"
            } else {
                "the anchor"
            };
            return reference(format!(
                "{who} has no measurement record (an older summary)"
            ));
        };
        let forced_unknown = [("current run", mc), ("anchor", ma)]
            .into_iter()
            .find(|(_, m)| m.throttled)
            .map(|(who, _)| {
                format!("the {who}'s measurement was taken while the device throttled")
            });
        let th = self.thresholds.get(&cur.target);
        let mut record = TargetDetection::statistical(&cur.target);
        let mut unclaimed = Vec::new();
        for metric in [Metric::Speedup, Metric::OptimizedLatency] {
            if let Some((mut test, runs, doubt)) = self.test(metric, cur, prev, th) {
                if forced_unknown.is_some() {
                    test.verdict = Some(Verdict::Unknown);
                } else if test.verdict == Some(Verdict::Improved)
                    && let Some(why) = doubt
                {
                    test.verdict = Some(Verdict::Unknown);
                    unclaimed.push((test.metric.clone(), why));
                }
                record.noise_runs = record.noise_runs.max(runs);
                record.tests.push(test);
            }
        }
        TargetDecision {
            record,
            forced_unknown,
            unclaimed,
        }
    }

    /// The test of one metric, the runs of its noise window, and why an improvement it reads
    /// would not be claimed ([`doubt`]); `None` when either run lacks a positive value.
    fn test(
        &self,
        metric: Metric,
        cur: &TargetSummary,
        prev: &TargetSummary,
        th: &Thresholds,
    ) -> Option<(MetricTest, u32, Option<String>)> {
        let (y_new, v_new) = metric.point(cur)?;
        let (y_anchor, v_anchor) = metric.point(prev)?;
        let mut points = self.history.points(cur, metric, &self.thresholds.base);
        points.extend(noise::pass_points(prev, metric));
        let flags = noise::outliers(&points, &self.thresholds.base);
        let kept: Vec<noise::Point> = points
            .into_iter()
            .zip(flags)
            .filter(|(_, out)| !out)
            .map(|(p, _)| p)
            .collect();
        let est = noise::estimate(&kept, self.prior());
        let se = (2.0 * est.tau2 + v_anchor + v_new).sqrt();
        let worse = match metric {
            Metric::Speedup => y_anchor - y_new,
            Metric::OptimizedLatency => y_new - y_anchor,
        };
        let statistic = if se > 0.0 { worse / se } else { 0.0 };
        let p_value = 1.0 - crate::stats::t_cdf(statistic.abs(), est.df);
        let critical = crate::stats::t_quantile(1.0 - self.alpha, est.df);
        let limits = Limits::of(metric, th);
        let significant = p_value < self.alpha;
        let test = MetricTest {
            metric: metric.as_str().into(),
            reference_value: y_anchor.exp().into(),
            current_value: y_new.exp().into(),
            change_pct: (((y_new - y_anchor).exp() - 1.0) * 100.0).into(),
            noise_pct: (est.tau2.sqrt() * 100.0).into(),
            statistic: statistic.into(),
            df: est.df.into(),
            p_value: p_value.into(),
            significant,
            detectable_pct: detectable(limits.worse, critical, se).into(),
            measured_detectable_pct: Some(
                measured_detectable(limits.worse, self.alpha, v_anchor + v_new).into(),
            ),
            threshold_pct: Some(limits.worse_pct.into()),
            floor_ms: Some(th.min_optimized_time_delta_ms.into()),
            verdict: Some(metric_verdict(worse, se, significant, limits)),
            held_by_floor: false,
        };
        let doubt = doubt(cur, &kept, v_new);
        Some((
            test,
            u32::try_from(est.noise_runs).unwrap_or(u32::MAX),
            doubt,
        ))
    }
}

/// Why an improvement read on `cur`'s measurement (variance `v` of the metric) is not claimed
/// (issue 37: beside four CPU hogs a night read `improved +24.1 %` by history while the machine
/// was overloaded): the machine was overloaded while it was measured, or its interval was far
/// wider than the window's runs' ([`noise::far_noisier`]); `None` when neither.
fn doubt(cur: &TargetSummary, window: &[noise::Point], v: f64) -> Option<String> {
    let overloaded = cur
        .measurement
        .as_ref()
        .and_then(|m| m.overloaded.as_ref())
        .is_some_and(crate::history::overload::Overload::overloaded);
    if overloaded {
        return Some("an improvement read while the machine was overloaded is not claimed".into());
    }
    noise::far_noisier(window, v).map(|k| {
        format!(
            "an improvement read on a measurement {} times noisier than the window's runs is not claimed",
            crate::text::fmt_sig(k, 2)
        )
    })
}

/// A metric's thresholds on the log scale of its worsening.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    /// The worsening (log) that is a regression: a speedup drop of `s` % is `−ln(1 − s/100)`,
    /// a time growth of `l` % is `ln(1 + l/100)`.
    pub(crate) worse: f64,
    /// The improvement (log, positive) that is an improvement.
    pub(crate) better: f64,
    /// The regression threshold as the suite states it (percent).
    pub(crate) worse_pct: f64,
}

impl Limits {
    /// The limits of `metric` under `th`.
    pub(crate) fn of(metric: Metric, th: &Thresholds) -> Limits {
        let down = |pct: f64| -(1.0 - pct / 100.0).max(0.0).ln();
        let up = |pct: f64| (1.0 + pct / 100.0).ln();
        match metric {
            Metric::Speedup => Limits {
                worse: down(th.speedup_regression_pct),
                better: up(th.speedup_regression_pct),
                worse_pct: th.speedup_regression_pct,
            },
            Metric::OptimizedLatency => Limits {
                worse: up(th.optimized_latency_regression_pct),
                better: down(th.optimized_latency_regression_pct),
                worse_pct: th.optimized_latency_regression_pct,
            },
        }
    }
}

/// Slack so a change exactly at a threshold counts despite binary rounding.
const EPS: f64 = 1e-9;

/// The verdict of one metric from its worsening `worse` (log), standard error `se`, the test's
/// significance and the limits (see the module docs).
pub(crate) fn metric_verdict(worse: f64, se: f64, significant: bool, limits: Limits) -> Verdict {
    if significant && worse > 0.0 && worse >= limits.worse - EPS {
        return Verdict::Regressed;
    }
    if significant && worse < 0.0 && -worse >= limits.better - EPS {
        return Verdict::Improved;
    }
    let z = crate::stats::normal_quantile(POWER);
    if worse + z * se < limits.worse - EPS {
        Verdict::Unchanged
    } else {
        Verdict::Unknown
    }
}

/// The smallest worsening (percent slower) caught with probability [`POWER`]: the point estimate
/// must clear both the threshold (`limit`, log) and the test's critical value, so the change
/// must exceed the larger of the two by `z₀.₉₅` standard errors.
pub(crate) fn detectable(limit: f64, critical: f64, se: f64) -> f64 {
    let z = crate::stats::normal_quantile(POWER);
    (((limit.max(critical * se)) + z * se).exp() - 1.0) * 100.0
}

/// What the two measurements alone resolve (their summed interval variances `v`, no run-to-run
/// term): [`detectable`] at the normal quantile of the per-test level `alpha`.
pub(crate) fn measured_detectable(limit: f64, alpha: f64, v: f64) -> f64 {
    let z = crate::stats::normal_quantile(1.0 - alpha);
    detectable(limit, z, v.max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::of(Metric::OptimizedLatency, &Thresholds::default())
    }

    #[test]
    fn verdicts_follow_the_threshold_and_the_noise() {
        let l = limits();
        // 10 % slower, se 1 %: significant and beyond 5 %.
        assert_eq!(metric_verdict(0.0953, 0.01, true, l), Verdict::Regressed);
        // 10 % slower but not significant (se 6 %): cannot be ruled in or out.
        assert_eq!(metric_verdict(0.0953, 0.06, false, l), Verdict::Unknown);
        // 1 % slower with se 1 %: a 5 % worsening is ruled out.
        assert_eq!(metric_verdict(0.01, 0.01, false, l), Verdict::Unchanged);
        // 1 % slower with se 4 %: a 5 % worsening is not ruled out.
        assert_eq!(metric_verdict(0.01, 0.04, false, l), Verdict::Unknown);
        // 3 % slower, significant, under the threshold: unchanged (a decline below it).
        assert_eq!(metric_verdict(0.03, 0.005, true, l), Verdict::Unchanged);
        // 10 % faster, significant: improved; not significant: unchanged (no worsening).
        assert_eq!(metric_verdict(-0.1, 0.01, true, l), Verdict::Improved);
        assert_eq!(metric_verdict(-0.1, 0.03, false, l), Verdict::Unchanged);
    }

    /// The stated detectable change of a quiet night after the nights of `history` (offsets of
    /// ln speedup from the anchor's 4x, each with its interval's half width in percent and
    /// whether the machine was overloaded).
    fn detectable_after(history: &[(f64, f64, bool)]) -> f64 {
        use crate::aggregate::fixtures::{measured, speed_opt, summary};
        use crate::regress::noise::{HistoryRun, NoiseHistory};
        let anchor = measured(speed_opt("a", 4.0, 5.0), 0.5);
        let mut runs = vec![HistoryRun {
            run_id: "anchor".into(),
            segment: "anchor".into(),
            summary: summary("anchor", vec![anchor.clone()]),
        }];
        for (i, (off, half, overloaded)) in history.iter().enumerate() {
            let mut t = measured(speed_opt("a", 4.0 * off.exp(), 5.0 * (-off).exp()), *half);
            if *overloaded && let Some(m) = t.measurement.as_mut() {
                m.overloaded = Some(crate::history::overload::Overload {
                    cores: 2,
                    load_avg_1m: 8.9,
                    runnable: None,
                    cpu_share: Some(0.4),
                    steal_pct: None,
                });
            }
            let id = format!("night{i}");
            runs.push(HistoryRun {
                run_id: id.clone(),
                segment: "anchor".into(),
                summary: summary(&id, vec![t]),
            });
        }
        let h = NoiseHistory { runs };
        let cur = measured(speed_opt("a", 4.0, 5.0), 0.5);
        Detector::new(Thresholds::default(), &h, 1)
            .decide(&cur, &anchor)
            .record
            .tests
            .iter()
            .map(|t| t.detectable_pct.get())
            .fold(0.0, f64::max)
    }

    /// Issue 37: loaded nights accepted into the window kept the stated detectable change of the
    /// following nights inflated until they left it. After a burst of three loaded nights the
    /// next quiet night states what it stated before the burst (within 10 %): a night measured
    /// while the machine was overloaded stays out of the window, and so does one measured far
    /// noisier than the window's runs (its interval 8 times as wide), flagged or not.
    #[test]
    fn the_stated_detectable_change_heals_after_a_burst_of_loaded_nights() {
        let quiet: Vec<(f64, f64, bool)> = [0.01, -0.012, 0.006, -0.004, 0.009, -0.008]
            .iter()
            .map(|o| (*o, 0.5, false))
            .collect();
        let before = detectable_after(&quiet);
        for (name, burst) in [
            ("overloaded, tight intervals", (0.06, 0.5, true)),
            ("far noisier, not flagged", (0.06, 4.0, false)),
        ] {
            let mut h = quiet.clone();
            for sign in [1.0, -1.0, 1.0] {
                h.push((sign * burst.0, burst.1, burst.2));
            }
            h.push((0.002, 0.5, false));
            let after = detectable_after(&h);
            assert!(
                after <= 1.1 * before,
                "{name}: detectable {before:.1} % before the burst, {after:.1} % the night after"
            );
        }
    }

    #[test]
    fn the_detectable_change_is_the_larger_hurdle_plus_the_power_margin() {
        let l = limits();
        // Tiny noise: the threshold is the hurdle: 5 % plus 1.645 × 0.1 %.
        let d = detectable(l.worse, 3.0, 0.001);
        assert!(
            (d - ((l.worse + 0.001645).exp() - 1.0) * 100.0).abs() < 1e-3,
            "{d}"
        );
        // Large noise: the critical value is: (3 + 1.645) × 4 % on the log scale.
        let d = detectable(l.worse, 3.0, 0.04);
        assert!(
            (d - ((4.645_f64 * 0.04).exp() - 1.0) * 100.0).abs() < 1e-2,
            "{d}"
        );
    }

    #[test]
    fn limits_match_the_reference_percentages() {
        let th = Thresholds::default();
        let s = Limits::of(Metric::Speedup, &th);
        // A speedup of 4.0 -> 3.8 (-5 %) is a worsening of ln(4/3.8).
        assert!(((4.0f64 / 3.8).ln() - s.worse).abs() < 1e-12);
        assert!(((4.2f64 / 4.0).ln() - s.better).abs() < 1e-12);
        let l = Limits::of(Metric::OptimizedLatency, &th);
        assert!(((105.0f64 / 100.0).ln() - l.worse).abs() < 1e-12);
        assert!(((100.0f64 / 95.0).ln() - l.better).abs() < 1e-12);
    }
}
