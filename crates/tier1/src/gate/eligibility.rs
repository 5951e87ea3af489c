//! Eligibility: the anchor quality a run needs to become the baseline of a normal publication,
//! and the eligible-anchor rules restore re-derives.

use super::{Check, baseline_metrics, provenance};
use crate::history::model::{RegressionSummary, Summary};

/// Anchor quality: every target carries a measurement record taken without throttling, and
/// where the profile requires it (`anchor_precision: required`, and every record older than that
/// setting) one that reached its precision. Under `measured` an anchor carries whatever
/// precision the machine reached, and later verdicts state what they can detect.
pub(crate) fn anchor_precision(summary: &Summary) -> Check {
    let mut c = Check::default();
    for t in &summary.targets {
        match &t.measurement {
            None => c.fail(format!(
                "target {}: no measurement record; an anchor needs a measurement record",
                t.key
            )),
            Some(m) => {
                if let Some(why) = m.anchor_refusal(t.best_speedup) {
                    c.fail(format!("target {}: the measurement {why}", t.key));
                }
            }
        }
    }
    c
}

/// Reference `_tier1_baseline_eligible` for normal publication: eligible only when the run was
/// accepted, the caller allows an initial anchor, there was no prior anchor (`baseline_run_id`
/// null), there are no suppressed regressions and no anchor declines, and (tier1) every target
/// was measured precisely ([`anchor_precision`]).
pub(crate) fn baseline_eligibility(
    summary: &Summary,
    comparison: &RegressionSummary,
    run_accepted: bool,
    allow_initial_anchor: bool,
) -> Check {
    let mut c = Check::default();
    c.require(run_accepted, || "the run was not accepted".into());
    c.require(allow_initial_anchor, || {
        "an initial anchor is not allowed here (anchors move only through protected promotion)"
            .into()
    });
    if let Some(anchor) = &comparison.baseline_run_id {
        c.fail(format!(
            "a prior anchor {anchor} exists; only protected promotion may move it"
        ));
    }
    c.absorb(no_suppressed(comparison));
    let d = comparison.anchor_declines.len();
    c.require(d == 0, || {
        format!("the comparison has {d} anchor decline(s)")
    });
    c.absorb(anchor_precision(summary));
    c
}

fn no_suppressed(comparison: &RegressionSummary) -> Check {
    let mut c = Check::default();
    let s = comparison.suppressed_regressions.len();
    c.require(s == 0, || {
        format!("{s} regression(s) were cleared only by a recheck; such a run is never an anchor")
    });
    let cleared: Vec<&str> = comparison
        .side_by_side
        .iter()
        .flat_map(|b| b.cleared())
        .map(|t| t.target.as_str())
        .collect();
    c.require(cleared.is_empty(), || {
        format!(
            "{} suspected target(s) were cleared only by side by side ({}); such a run is never an anchor",
            cleared.len(),
            cleared.join(", ")
        )
    });
    let unconfirmed: Vec<&str> = comparison
        .side_by_side
        .iter()
        .flat_map(|b| b.unconfirmed())
        .map(|t| t.target.as_str())
        .collect();
    c.require(unconfirmed.is_empty(), || {
        format!(
            "{} regression(s) of the history test were neither confirmed nor ruled out side by side ({}); such a run is never an anchor",
            unconfirmed.len(),
            unconfirmed.join(", ")
        )
    });
    c
}

/// Contract §5.5 step 4 "Eligible anchors must meet": the run was accepted; no comparison changes
/// (regressions, improvements, anchor declines, missing targets) unless the acceptance is explicit;
/// no suppressed regressions; no prior anchor without explicit acceptance; no history warnings;
/// complete metrics; accepted provenance; and (tier1) no target whose measurement record says it
/// was imprecise (rows without a record, from older writers, are not judged).
pub(crate) fn eligible_anchor_rules(
    summary: &Summary,
    comparison: &RegressionSummary,
    run_accepted: bool,
    explicit_acceptance: bool,
    history_warnings: bool,
) -> Check {
    let mut c = Check::default();
    c.require(run_accepted, || "the run was not accepted".into());
    if !explicit_acceptance {
        let changes = [
            ("regression", comparison.regressions.len()),
            ("improvement", comparison.improvements.len()),
            ("anchor decline", comparison.anchor_declines.len()),
            ("missing target", comparison.missing_targets.len()),
        ];
        for (what, n) in changes {
            c.require(n == 0, || {
                format!(
                    "the comparison has {n} {what}(s) and the anchor was not explicitly accepted"
                )
            });
        }
        if let Some(anchor) = &comparison.baseline_run_id {
            c.fail(format!(
                "the run was compared with prior anchor {anchor} and was not explicitly accepted"
            ));
        }
    }
    c.absorb(no_suppressed(comparison));
    c.require(!history_warnings, || "the history has warnings".into());
    c.absorb(baseline_metrics(summary));
    c.absorb(provenance(summary));
    for t in &summary.targets {
        if let Some(why) = t
            .measurement
            .as_ref()
            .and_then(|m| m.anchor_refusal(t.best_speedup))
        {
            c.fail(format!("target {}: the measurement {why}", t.key));
        }
    }
    c
}
