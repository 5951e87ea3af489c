//! tier1's measurement extension of a summary target row (`targets[].measurement`): how precisely
//! the run measured the target. It carries what statistical change detection needs, so a
//! comparison works after the anchor's evidence has expired. Summaries without it (older runs,
//! reference-written packages) still validate and are compared by the reference rules alone.

use crate::json::Finite;
use serde::{Deserialize, Serialize};

/// Confidence level of every interval the harness reports.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// How precisely one target was measured (derived from the raw samples of its results file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    /// Confidence level of the intervals ([`CONFIDENCE`]).
    pub(crate) confidence: Finite,
    /// Timed rounds: samples per variant, baseline and optimized paired round by round.
    pub rounds: u32,
    /// Clean rounds (both samples at or below their variant's median) the estimates use.
    pub clean_rounds: u32,
    /// Executions batched into one baseline sample.
    pub(crate) baseline_repetitions: u32,
    /// Executions batched into one sample of the best optimized variant.
    pub(crate) optimized_repetitions: u32,
    /// Lower bound of the interval of `best_speedup` (median of the clean rounds' ratios).
    #[serde(default)]
    pub(crate) speedup_ci_low: Option<Finite>,
    /// Upper bound of the interval of `best_speedup`.
    #[serde(default)]
    pub(crate) speedup_ci_high: Option<Finite>,
    /// Median time of the best optimized variant over the clean rounds (ms).
    pub(crate) optimized_median_ms: Finite,
    /// Lower bound of the interval of that median (ms).
    #[serde(default)]
    pub(crate) optimized_ci_low_ms: Option<Finite>,
    /// Upper bound of the interval of that median (ms).
    #[serde(default)]
    pub(crate) optimized_ci_high_ms: Option<Finite>,
    /// Coefficient of variation of the per-round speedups.
    pub(crate) speedup_cv: Finite,
    /// Coefficient of variation of the baseline samples.
    pub(crate) baseline_cv: Finite,
    /// Coefficient of variation of the optimized samples.
    pub(crate) optimized_cv: Finite,
    /// Samples beyond Tukey's fences (baseline and optimized; reported, never dropped).
    pub(crate) outliers: u32,
    /// The precision asked for: each interval within ± this percent of its estimate.
    pub(crate) precision_pct: Finite,
    /// The precision was reached (speed goal: both intervals; memory goal: memory measured) and
    /// the device was not throttled.
    pub(crate) precise: bool,
    /// The device reported thermal or power throttling during the measurement (after one
    /// re-measurement).
    #[serde(default)]
    pub(crate) throttled: bool,
    /// The rule that turned rounds into these estimates (`paired_median`, `clean_rounds`;
    /// absent in older records: `clean_rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) estimator: Option<String>,
    /// Whether an anchor must reach `precision_pct` (`anchor_precision: required`); absent in
    /// older records, which were always held to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) precision_required: Option<bool>,
    /// The passes an anchor was measured in (empty: one pass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) passes: Vec<PassValue>,
    /// The machine was overloaded during the kept measurement
    /// ([`Overload`](crate::history::overload::Overload)): load per core, CPU share, steal. Absent
    /// when it was not (or older records). Such a run says so in its verdict and stays out of the
    /// noise window of later nights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) overloaded: Option<crate::history::overload::Overload>,
}

/// One pass of an anchor's measurement, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PassValue {
    /// Rounds of the pass.
    pub(crate) rounds: u32,
    /// The pass's speedup (`None` when it had no usable round).
    #[serde(default)]
    pub(crate) speedup: Option<Finite>,
    /// The pass's optimized time (ms).
    #[serde(default)]
    pub(crate) optimized_ms: Option<Finite>,
    /// Left out of the pooled estimate: it disagreed with the other passes.
    pub(crate) outlier: bool,
}

impl Measurement {
    /// Its first number that cannot be recorded (not finite), as `(field, value)`.
    pub(crate) fn non_finite(&self) -> Option<(String, f64)> {
        let fields = [
            ("confidence", Some(self.confidence)),
            ("speedup_ci_low", self.speedup_ci_low),
            ("speedup_ci_high", self.speedup_ci_high),
            ("optimized_median_ms", Some(self.optimized_median_ms)),
            ("optimized_ci_low_ms", self.optimized_ci_low_ms),
            ("optimized_ci_high_ms", self.optimized_ci_high_ms),
            ("speedup_cv", Some(self.speedup_cv)),
            ("baseline_cv", Some(self.baseline_cv)),
            ("optimized_cv", Some(self.optimized_cv)),
            ("precision_pct", Some(self.precision_pct)),
        ];
        let passes = self.passes.iter().enumerate().flat_map(|(i, p)| {
            [
                (format!("passes[{i}].speedup"), p.speedup),
                (format!("passes[{i}].optimized_ms"), p.optimized_ms),
            ]
        });
        fields
            .into_iter()
            .map(|(f, v)| (f.to_string(), v))
            .chain(passes)
            .find_map(|(f, v)| v.map(f64::from).filter(|x| !x.is_finite()).map(|x| (f, x)))
    }

    /// Standard error of ln(best_speedup) from its interval (`None` without an interval).
    pub(crate) fn log_speedup_se(&self) -> Option<f64> {
        log_se(self.speedup_ci_low, self.speedup_ci_high, self.confidence)
    }

    /// Standard error of ln(optimized time) from its interval (`None` without an interval).
    pub(crate) fn log_optimized_se(&self) -> Option<f64> {
        log_se(
            self.optimized_ci_low_ms,
            self.optimized_ci_high_ms,
            self.confidence,
        )
    }

    /// Relative half-width (the larger side) of the speedup interval, in percent.
    pub(crate) fn speedup_half_width_pct(&self, speedup: impl Into<f64>) -> Option<f64> {
        half_width_pct(self.speedup_ci_low, self.speedup_ci_high, speedup)
    }

    /// Why this measurement is too imprecise for the significance test or an anchor (`None`
    /// when precise), with the figures; `speedup` is the row's `best_speedup`.
    pub(crate) fn imprecision(&self, speedup: Option<impl Into<f64>>) -> Option<String> {
        let speedup: Option<f64> = speedup.map(Into::into);
        if self.throttled {
            return Some("was taken while the device throttled".into());
        }
        if self.precise {
            return None;
        }
        let (sw, ow) = (
            speedup.and_then(|s| self.speedup_half_width_pct(s)),
            self.optimized_half_width_pct(),
        );
        // A single benchmark (no speedup) is judged on its time's interval alone.
        if ow.is_none() || (speedup.is_some() && sw.is_none()) {
            return Some(format!(
                "did not reach ±{:.2} %: {} clean of {} rounds are too few for a 95 % interval (6 needed)",
                self.precision_pct, self.clean_rounds, self.rounds
            ));
        }
        let show = |w: Option<f64>| w.map_or_else(String::new, |w| format!("±{w:.2} %"));
        let speedup_part = match speedup {
            Some(_) => format!("speedup interval {}, ", show(sw)),
            None => String::new(),
        };
        Some(format!(
            "did not reach ±{:.2} % ({} rounds, {} clean; {speedup_part}optimized time interval {})",
            self.precision_pct,
            self.rounds,
            self.clean_rounds,
            show(ow),
        ))
    }

    /// Whether an anchor must reach `precision_pct`: `anchor_precision: required`, and every
    /// record written before that setting existed.
    pub(crate) fn precision_is_required(&self) -> bool {
        self.precision_required.unwrap_or(true)
    }

    /// Why this measurement cannot be an anchor (`None` when it can): throttled, or imprecise
    /// where precision is required (with the figures and the remedies).
    pub(crate) fn anchor_refusal(&self, speedup: Option<impl Into<f64>>) -> Option<String> {
        let speedup: Option<f64> = speedup.map(Into::into);
        if self.throttled {
            return self.imprecision(speedup);
        }
        if !self.precision_is_required() {
            return None;
        }
        self.imprecision(speedup).map(|why| {
            format!(
                "{why}; anchor_precision is required: raise budget_s (profile or targets[].budget_s), lock the GPU clocks or pin the runner, loosen targets[].precision_pct, or use anchor_precision: measured"
            )
        })
    }

    /// Relative half-width (the larger side) of the optimized-time interval, in percent.
    pub(crate) fn optimized_half_width_pct(&self) -> Option<f64> {
        half_width_pct(
            self.optimized_ci_low_ms,
            self.optimized_ci_high_ms,
            self.optimized_median_ms,
        )
    }
}

/// `(ln hi - ln lo) / (2 z)`: the standard error a symmetric normal interval of that width on
/// the log scale would have.
fn log_se(lo: Option<Finite>, hi: Option<Finite>, confidence: Finite) -> Option<f64> {
    let (lo, hi, confidence) = (lo?.get(), hi?.get(), confidence.get());
    if !(lo > 0.0 && hi >= lo && confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let z = crate::stats::normal_quantile(0.5 + confidence / 2.0);
    Some((hi.ln() - lo.ln()) / (2.0 * z))
}

fn half_width_pct(lo: Option<Finite>, hi: Option<Finite>, estimate: impl Into<f64>) -> Option<f64> {
    let (lo, hi, estimate) = (lo?.get(), hi?.get(), estimate.into());
    (estimate > 0.0).then(|| (hi - estimate).max(estimate - lo) / estimate * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_errors_come_from_the_intervals() {
        let m = Measurement {
            confidence: 0.95.into(),
            rounds: 30,
            clean_rounds: 15,
            baseline_repetitions: 1,
            optimized_repetitions: 4,
            speedup_ci_low: Some((1.96f64.exp().recip() * 2.0).into()),
            speedup_ci_high: Some((1.96f64.exp() * 2.0).into()),
            optimized_median_ms: 10.0.into(),
            optimized_ci_low_ms: Some(9.9.into()),
            optimized_ci_high_ms: Some(10.2.into()),
            speedup_cv: 0.01.into(),
            baseline_cv: 0.01.into(),
            optimized_cv: 0.01.into(),
            outliers: 0,
            precision_pct: 1.0.into(),
            precise: false,
            throttled: false,
            estimator: None,
            precision_required: None,
            passes: Vec::new(),
            overloaded: None,
        };
        assert!((m.log_speedup_se().unwrap() - 1.0).abs() < 1e-3);
        assert!((m.optimized_half_width_pct().unwrap() - 2.0).abs() < 1e-9);
        let none = Measurement {
            speedup_ci_low: None,
            ..m
        };
        assert_eq!(none.log_speedup_se(), None);
    }

    /// A stored measurement record, as JSON text.
    fn record(speedup_cv: &str) -> String {
        format!(
            r#"{{"confidence": 0.95, "rounds": 30, "clean_rounds": 15, "baseline_repetitions": 1,
                "optimized_repetitions": 4, "speedup_ci_low": 1.9, "speedup_ci_high": 2.1,
                "optimized_median_ms": 10.0, "optimized_ci_low_ms": 9.9, "optimized_ci_high_ms": 10.2,
                "speedup_cv": {speedup_cv}, "baseline_cv": 0.01, "optimized_cv": 0.01,
                "outliers": 0, "precision_pct": 1.0, "precise": true}}"#
        )
    }

    #[test]
    fn a_non_finite_metric_is_refused_when_read_and_when_written() {
        let ok: Measurement = serde_json::from_str(&record("0.01")).unwrap();
        let e = serde_json::from_str::<Measurement>(&record("1e400")).unwrap_err();
        assert!(e.to_string().contains("number out of range"), "{e}");
        // JSON has no NaN; YAML does, and the record refuses it all the same.
        for bad in [".nan", ".inf", "-.inf"] {
            let e = serde_saphyr::from_str::<Measurement>(&record(bad)).unwrap_err();
            assert!(
                e.to_string().contains("expected a finite number"),
                "{bad}: {e}"
            );
        }
        let mut nan = ok.clone();
        nan.speedup_cv = f64::NAN.into();
        let e = crate::json::to_pretty(&nan, "summary.json").unwrap_err();
        assert!(
            e.to_string()
                .contains("summary.json: invalid JSON: refusing to write non-finite number NaN"),
            "{e}"
        );
        nan.speedup_cv = ok.speedup_cv;
        nan.speedup_ci_high = Some(f64::INFINITY.into());
        assert!(crate::json::to_pretty(&nan, "summary.json").is_err());
        assert!(crate::json::to_pretty(&ok, "summary.json").is_ok());
    }
}
