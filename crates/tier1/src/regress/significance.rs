//! Statistical change detection (`thresholds.detection: statistical`): a change counts only when
//! it clears the reference thresholds AND the current run differs significantly from the anchor
//! given run-to-run noise. Per target and metric (ln speedup, ln optimized time):
//!
//! `t = (ln anchor − ln current) / √(2τ² + v_anchor + v_current)` (sign: positive is worse),
//! compared with Student's t on `df` degrees of freedom, where `v` are the runs' own interval
//! variances and τ² the between-run variance of the history ([`noise`]), blended with
//! a prior for a young history. One-sided `p < alpha / (2 × compared targets)` is significant.
//!
//! A target decides by the reference rules alone, recorded with its reason, when the suite asks
//! for it, for a memory goal (memory figures are exact), when either run lacks a measurement
//! record (older summaries), and — listed as `inconclusive` — when either measurement is
//! imprecise or throttled: an imprecise measurement can never hide a regression.

use super::noise::{self, Metric, NoiseHistory, Prior};
use crate::aggregate::{SUCCEEDED, pair_goal};
use crate::history::model::TargetSummary;
use crate::history::{DetectionMethod, Inconclusive, MetricTest, TargetDetection};
use crate::suite::{Goal, Thresholds};

/// The statistical side of one comparison.
#[derive(Debug, Clone, Copy)]
pub struct Detector<'a> {
    /// The suite's thresholds and detection settings.
    pub thresholds: &'a Thresholds,
    /// The accepted runs of the noise window.
    pub history: &'a NoiseHistory,
    /// Per-test significance level.
    pub alpha: f64,
}

/// How one target is decided.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetDecision {
    /// The detection record.
    pub record: TargetDetection,
    /// Set when an imprecise measurement sent the target to the reference rules.
    pub inconclusive: Option<Inconclusive>,
}

impl TargetDecision {
    /// The significance of `metric`: `Some(significant)` under the statistical method, `None`
    /// when the reference rules alone decide.
    pub fn significant(&self, metric: Metric) -> Option<bool> {
        if self.record.method != DetectionMethod::Statistical {
            return None;
        }
        self.record
            .tests
            .iter()
            .find(|t| t.metric == metric.as_str())
            .map(|t| t.significant)
    }
}

impl<'a> Detector<'a> {
    /// A detector whose family-wise level `thresholds.alpha` is split (Bonferroni) over the two
    /// tests (speedup and optimized latency) of each of `compared` targets.
    pub fn new(thresholds: &'a Thresholds, history: &'a NoiseHistory, compared: usize) -> Self {
        Detector {
            thresholds,
            history,
            alpha: thresholds.alpha / (2 * compared.max(1)) as f64,
        }
    }

    fn prior(&self) -> Prior {
        Prior {
            tau: self.thresholds.prior_noise_pct / 100.0,
            runs: self.thresholds.prior_runs,
        }
    }

    /// Decide how `cur` is compared with the anchor's row `prev`.
    pub fn decide(&self, cur: &TargetSummary, prev: &TargetSummary) -> TargetDecision {
        let reference = |reason: String, inconclusive: Option<Inconclusive>| TargetDecision {
            record: TargetDetection {
                target: cur.target.clone(),
                method: DetectionMethod::Reference,
                reason: Some(reason),
                noise_runs: 0,
                tests: Vec::new(),
            },
            inconclusive,
        };
        if self.thresholds.detection == DetectionMethod::Reference {
            return reference("thresholds.detection is reference".into(), None);
        }
        if pair_goal(cur, prev) == Goal::Memory {
            return reference("memory goal: memory figures are exact".into(), None);
        }
        if cur.status != SUCCEEDED || prev.status != SUCCEEDED {
            return reference("a status change is decided by the status rule".into(), None);
        }
        let (Some(mc), Some(ma)) = (&cur.measurement, &prev.measurement) else {
            let who = if cur.measurement.is_none() {
                "the current run"
            } else {
                "the anchor"
            };
            return reference(
                format!("{who} has no measurement record (an older summary)"),
                None,
            );
        };
        for (who, m, row) in [("current run", mc, cur), ("anchor", ma, prev)] {
            if let Some(why) = m.imprecision(row.best_speedup) {
                let reason = format!("the {who}'s measurement {why}");
                return reference(
                    reason.clone(),
                    Some(Inconclusive {
                        target: cur.target.clone(),
                        reason,
                        speedup_half_width_pct: row
                            .best_speedup
                            .and_then(|s| m.speedup_half_width_pct(s)),
                    }),
                );
            }
        }
        let mut record = TargetDetection {
            target: cur.target.clone(),
            method: DetectionMethod::Statistical,
            reason: None,
            noise_runs: 0,
            tests: Vec::new(),
        };
        for metric in [Metric::Speedup, Metric::OptimizedLatency] {
            if let Some((test, runs)) = self.test(metric, cur, prev) {
                record.noise_runs = record.noise_runs.max(runs);
                record.tests.push(test);
            }
        }
        TargetDecision {
            record,
            inconclusive: None,
        }
    }

    /// The test of one metric; `None` when either run lacks a positive value.
    fn test(
        &self,
        metric: Metric,
        cur: &TargetSummary,
        prev: &TargetSummary,
    ) -> Option<(MetricTest, u32)> {
        let (y_new, v_new) = metric.point(cur)?;
        let (y_anchor, v_anchor) = metric.point(prev)?;
        let points = self.history.points(&cur.target, metric);
        let flags = noise::outliers(&points, self.thresholds);
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
        // The change this test calls significant with 95 % probability: critical value plus
        // the 95 % normal quantile, in standard errors.
        let reach = crate::stats::t_quantile(1.0 - self.alpha, est.df)
            + crate::stats::normal_quantile(0.95);
        let test = MetricTest {
            metric: metric.as_str().into(),
            reference_value: y_anchor.exp(),
            current_value: y_new.exp(),
            change_pct: ((y_new - y_anchor).exp() - 1.0) * 100.0,
            noise_pct: est.tau2.sqrt() * 100.0,
            statistic,
            df: est.df,
            p_value,
            significant: p_value < self.alpha,
            detectable_pct: ((reach * se).exp() - 1.0) * 100.0,
        };
        Some((test, u32::try_from(est.noise_runs).unwrap_or(u32::MAX)))
    }
}
