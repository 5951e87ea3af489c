//! What `tier1-run` prints of each compared target (the stdout JSON's `targets`) and says on
//! stderr: the verdict, each metric's anchor and current value, change, threshold and
//! detectable change, and why a target is unknown or held by the floor.

use crate::history::model::{RegressionSummary, Summary};
use crate::history::sidebyside::SbsVerdict;
use crate::history::{DetectionMethod, MetricTest, TargetDetection, Verdict};
use crate::text::fmt_sig;
use serde::Serialize;

/// One target's verdict, as printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetVerdict {
    /// Target key.
    pub(crate) key: String,
    /// Target string.
    pub(crate) target: String,
    /// `regressed`, `improved`, `unchanged` or `unknown`.
    pub(crate) verdict: String,
    /// The smallest slowdown (percent) this comparison catches in 95 % of nights.
    pub(crate) detectable_pct: Option<f64>,
    /// `statistical` or `reference`.
    pub(crate) decided_by: String,
    /// Why the reference rules decided, or what an unknown target could not rule out.
    pub(crate) note: Option<String>,
    /// The tested metrics.
    pub(crate) metrics: Vec<MetricVerdict>,
    /// The side-by-side comparison with the anchor's own code, when the target was suspected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) side_by_side: Option<SideBySideShown>,
    /// `the machine was overloaded: load 8.9 on 2 cores ...; rerun on a quieter machine`, when
    /// it was while the target was measured (or compared side by side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) overloaded: Option<String>,
    /// `time +29.3 % (0.0331 -> 0.0428 ms) is significant but under the 0.05 ms floor ...`, when
    /// the floor (`min_optimized_time_delta_ms`) kept a significant worsening from the gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) held_by_floor: Option<String>,
}

/// A suspected target's side-by-side comparison, as printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SideBySideShown {
    /// `worse`, `same` or `unknown`.
    pub(crate) verdict: String,
    /// What it measured or why it could not decide.
    pub(crate) reason: String,
    /// The smallest slowdown (percent) its own intervals catch in 95 % of nights
    /// ([`crate::confirmation::detectable_pct`]; issue 43), when it recorded them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detectable_pct: Option<f64>,
}

/// One metric of a target, as printed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MetricVerdict {
    /// `speedup` or `optimized_latency`.
    pub(crate) metric: String,
    /// The anchor's value.
    pub(crate) anchor: f64,
    /// This run's value.
    pub(crate) current: f64,
    /// `(current / anchor - 1) * 100`.
    pub(crate) change_pct: f64,
    /// The regression threshold (percent).
    pub(crate) threshold_pct: Option<f64>,
    /// The smallest slowdown (percent) this test catches in 95 % of nights.
    pub(crate) detectable_pct: f64,
    /// One-sided p-value.
    pub(crate) p_value: f64,
    /// The metric's verdict.
    pub(crate) verdict: Option<String>,
    /// A significant worsening the floor kept from being a regression.
    pub(crate) held_by_floor: bool,
}

/// Every compared target of `comparison`, in suite order.
pub(crate) fn targets(summary: &Summary, comparison: &RegressionSummary) -> Vec<TargetVerdict> {
    let Some(d) = &comparison.detection else {
        return Vec::new();
    };
    d.targets
        .iter()
        .map(|t| one(summary, comparison, t))
        .collect()
}

fn one(summary: &Summary, comparison: &RegressionSummary, t: &TargetDetection) -> TargetVerdict {
    let key = summary
        .targets
        .iter()
        .find(|r| r.target == t.target)
        .map_or_else(|| t.target.clone(), |r| r.key.clone());
    let note = match t.verdict {
        // Its settings changed: the reason asks for a new anchor, whatever side by side says.
        _ if !t.settings_changed.is_empty() => t.reason.clone(),
        Some(Verdict::Unknown) => comparison
            .inconclusive
            .iter()
            .find(|i| i.target == t.target)
            .map(|i| i.reason.clone()),
        _ if t.method == DetectionMethod::Reference => t.reason.clone(),
        _ => None,
    };
    let overloaded = summary
        .targets
        .iter()
        .find(|r| r.target == t.target)
        .and_then(|r| r.measurement.as_ref())
        .and_then(|m| m.overloaded.as_ref())
        .and_then(crate::history::overload::Overload::note);
    let mut shown = TargetVerdict {
        overloaded,
        held_by_floor: held_by_floor(comparison, t),
        key,
        target: t.target.clone(),
        verdict: t.verdict.map_or("unchanged", Verdict::as_str).into(),
        detectable_pct: t.detectable_pct.map(f64::from),
        decided_by: t.method.as_str().into(),
        note,
        metrics: t.tests.iter().map(metric).collect(),
        side_by_side: None,
    };
    // A side-by-side comparison decides a suspected target: worse is a regression, same clears
    // it (unchanged), unknown leaves the history test's verdict and says why.
    let check = comparison
        .side_by_side
        .as_ref()
        .and_then(|b| b.checks.iter().find(|c| c.target == t.target));
    if let Some(c) = check {
        let sbs_detectable = crate::confirmation::detectable_pct(c);
        match c.verdict {
            SbsVerdict::Worse => {
                shown.verdict = Verdict::Regressed.as_str().into();
                shown.decided_by = "side_by_side".into();
            }
            // Side by side measured both builds with the new settings: no code change, but the
            // target still needs a new anchor before it can be compared again.
            SbsVerdict::Same if !t.settings_changed.is_empty() => {}
            SbsVerdict::Same => {
                shown.verdict = Verdict::Unchanged.as_str().into();
                shown.decided_by = "side_by_side".into();
                shown.note = Some(c.reason.clone());
            }
            SbsVerdict::Unknown => {}
        }
        // What decided states what it can detect (issue 43): side by side's own intervals, the
        // tool's repetitions of both builds in one night; the history test's figures stay in
        // `metrics`.
        if shown.decided_by == "side_by_side" && sbs_detectable.is_some() {
            shown.detectable_pct = sbs_detectable;
        }
        if c.overloaded.is_some() {
            shown.overloaded.clone_from(&c.overloaded);
        }
        shown.side_by_side = Some(SideBySideShown {
            verdict: c.verdict.as_str().into(),
            reason: c.reason.clone(),
            detectable_pct: sbs_detectable,
        });
    }
    shown
}

/// The sentence of a target whose significant worsening the floor kept from the gate: `time
/// +29.3 % (0.0331 -> 0.0428 ms) is significant but under the 0.05 ms floor
/// (min_optimized_time_delta_ms): not a regression by rule; set
/// targets[].thresholds.min_optimized_time_delta_ms lower to gate changes this small`.
fn held_by_floor(comparison: &RegressionSummary, t: &TargetDetection) -> Option<String> {
    let held = comparison
        .held_by_floor
        .iter()
        .find(|h| h.row.target() == t.target)?;
    let change = t
        .tests
        .iter()
        .find(|m| m.metric == "optimized_latency")
        .map_or_else(
            || format!("the optimized time moved {} ms", fmt_sig(held.delta_ms, 3)),
            |m| {
                format!(
                    "time {:+.1} % ({} -> {} ms)",
                    m.change_pct.get(),
                    fmt_sig(m.reference_value, 3),
                    fmt_sig(m.current_value, 3)
                )
            },
        );
    Some(format!(
        "{change} is significant but under the {} ms floor (min_optimized_time_delta_ms): not a \
         regression by rule; set targets[].thresholds.min_optimized_time_delta_ms lower to gate \
         changes this small",
        held.floor_ms.get()
    ))
}

fn metric(m: &MetricTest) -> MetricVerdict {
    MetricVerdict {
        metric: m.metric.clone(),
        anchor: m.reference_value.get(),
        current: m.current_value.get(),
        change_pct: m.change_pct.get(),
        threshold_pct: m.threshold_pct.map(f64::from),
        detectable_pct: m.detectable_pct.get(),
        p_value: m.p_value.get(),
        verdict: m.verdict.map(|v| v.as_str().to_string()),
        held_by_floor: m.held_by_floor,
    }
}

/// Say on stderr what a reader must not miss: regressions, unknown targets (what they could not
/// rule out) and significant changes held by the floor, each with its figures and rule.
pub(crate) fn log(comparison: &RegressionSummary) {
    let detection = comparison.detection.as_ref();
    for row in &comparison.regressions {
        tracing::error!(
            "regression: {}",
            crate::regress::verdict::describe_row(row, detection)
        );
    }
    let changed: Vec<&TargetDetection> = detection
        .iter()
        .flat_map(|d| &d.targets)
        .filter(|t| !t.settings_changed.is_empty())
        .collect();
    for t in &changed {
        let reason = t.reason.as_deref().unwrap_or_default();
        tracing::warn!(target = %t.target, "unknown: {reason}");
    }
    for i in comparison
        .inconclusive
        .iter()
        .filter(|i| !changed.iter().any(|t| t.target == i.target))
    {
        tracing::warn!(target = %i.target, "unknown: {}", i.reason);
    }
    for h in &comparison.held_by_floor {
        tracing::warn!(
            "held by the floor (not a regression by rule): {}; {}",
            crate::regress::verdict::describe_row(&h.row, detection),
            h.rule
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::*;
    use crate::history::{SbsRatio, SideBySideBlock, SideBySideCheck};
    use crate::suite::Thresholds;

    /// Issue 43: a target side by side decided states that comparison's detectable change (its
    /// own intervals, here ±1 %: 5.89 % at the 5 % threshold), and its side-by-side line says
    /// it too; the history test's figures stay in its metrics.
    #[test]
    fn a_target_side_by_side_decided_states_its_detectable_change() {
        let anchor = summary("anchor", vec![speed_opt("a", 2.0, 50.0)]);
        let current = summary("run", vec![speed_opt("a", 2.0, 100.0)]);
        let first =
            crate::regress::compare(&current, Some(&anchor), Thresholds::default()).expect("ok");
        let ratio = |r: f64| SbsRatio {
            ratio: r.into(),
            low: (r * 0.99).into(),
            high: (r * 1.01).into(),
        };
        let check = SideBySideCheck {
            target: "labs/a:a".into(),
            key: "a".into(),
            suspected_as: "regressed".into(),
            verdict: SbsVerdict::Same,
            reason: "figures".into(),
            cause: None,
            threshold_pct: 5.0.into(),
            decided_on: "both".into(),
            optimized_time_ratio: Some(ratio(1.0)),
            speedup_ratio: Some(ratio(1.0)),
            rounds: 10,
            seconds: 1.0.into(),
            build_seconds: None,
            evidence_dir: None,
            overloaded: None,
        };
        let block = SideBySideBlock {
            enabled: true,
            reason: "on".into(),
            warning: None,
            anchor_commit: None,
            current_commit: None,
            checks: vec![check],
        };
        let out = crate::confirmation::apply(first, &current, &anchor, block);
        let shown = targets(&current, &out);
        let a = shown.iter().find(|t| t.key == "a").expect("target a");
        assert_eq!(
            (a.verdict.as_str(), a.decided_by.as_str()),
            ("unchanged", "side_by_side")
        );
        let d = a.detectable_pct.expect("stated");
        assert!((d - 5.890).abs() < 0.01, "{d}");
        let sbs = a.side_by_side.as_ref().expect("its comparison");
        assert_eq!(sbs.detectable_pct, Some(d));
    }

    /// Issue 43: a significant +29 % of a 33 µs benchmark held by the 0.05 ms floor read
    /// `unchanged time +29.2 %` in the ending, with nothing naming the floor. The target now
    /// carries the sentence: the change, the floor and the setting that lowers it.
    #[test]
    fn a_change_held_by_the_floor_names_the_floor_and_its_setting() {
        use crate::aggregate::fixtures::measured;
        let anchor = summary(
            "anchor",
            vec![measured(speed_opt("tiny", 2.0, 0.0331), 0.3)],
        );
        let current = summary("run", vec![measured(speed_opt("tiny", 1.547, 0.0428), 0.3)]);
        let out =
            crate::regress::compare(&current, Some(&anchor), Thresholds::default()).expect("ok");
        assert!(out.regressions.is_empty() && !out.held_by_floor.is_empty());
        let shown = targets(&current, &out);
        let held = shown[0]
            .held_by_floor
            .as_deref()
            .expect("the floor is named");
        for part in [
            "time +29.3 %",
            "0.0331 -> 0.0428 ms",
            "under the 0.05 ms floor",
            "targets[].thresholds.min_optimized_time_delta_ms",
        ] {
            assert!(held.contains(part), "{part:?} in {held:?}");
        }
        // Without a held change there is no sentence.
        let same = targets(
            &anchor,
            &crate::regress::compare(&anchor, Some(&anchor), Thresholds::default()).expect("ok"),
        );
        assert_eq!(same[0].held_by_floor, None);
    }
}
