//! The verdict sections of `regression_summary.md`: one row per compared target with its verdict
//! and the smallest change it could detect, the targets the measurement could not decide, and
//! the significant changes a floor kept from the gate, each with the rule that decided.

use super::cells::{cell, cells, inline, line};
use crate::history::model::RegressionSummary;
use crate::history::{Detection, DetectionMethod, Verdict};
use crate::suite::UnknownRule;
use crate::text::{fmt_pct, fmt_sig};

/// `## Verdicts`: target, verdict, the change of each tested metric, detectable change.
pub(super) fn table(md: &mut String, d: &Detection) {
    if d.targets.is_empty() {
        return;
    }
    md.push_str("\n## Verdicts\n\n");
    md.push_str(
        "Regressed: worse by at least the threshold and significant. Unchanged: a threshold-sized worsening is ruled out. Unknown: the measurement cannot decide at this noise. Detectable: the smallest slowdown this comparison catches in 95 % of nights.\n\n",
    );
    md.push_str("| Target | Verdict | Speedup change | Optimized time change | Detectable slowdown | Decided by |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- |\n");
    for t in &d.targets {
        let change = |metric: &str| {
            t.test(metric).map_or_else(
                || "-".to_string(),
                |m| {
                    let floor = if m.held_by_floor {
                        " (held by the floor)"
                    } else {
                        ""
                    };
                    format!("{}{floor}", fmt_pct(m.change_pct, 1))
                },
            )
        };
        let decided = match t.method {
            DetectionMethod::Statistical => match &t.pooled_with {
                Some(r) => format!("test, pooled with {}", cell(r)),
                None => "test".into(),
            },
            DetectionMethod::Reference => cell(t.reason.as_deref().unwrap_or("reference rules")),
        };
        line(
            md,
            format_args!(
                "| {} | {} | {} | {} | {} | {decided} |",
                cell(&t.target),
                t.verdict.map_or("-", Verdict::as_str),
                change("speedup"),
                change("optimized_latency"),
                t.detectable_pct
                    .map_or_else(|| "-".into(), |x| format!("{} %", fmt_sig(x, 3))),
            ),
        );
    }
}

/// `## Unknown`: what each undecided target could not rule out, and the gate's rule for it.
pub(super) fn unknown(md: &mut String, r: &RegressionSummary) {
    if r.inconclusive.is_empty() {
        return;
    }
    md.push_str("\n## Unknown\n\n");
    let rule = r
        .detection
        .as_ref()
        .and_then(|d| d.on_unknown)
        .unwrap_or_default();
    let says = match rule {
        UnknownRule::Pass => {
            "The gate passes a night with unknown targets (it never fails on noise alone); such a run is never an anchor, and what it could not rule out is listed here (thresholds.on_unknown: pass)."
        }
        UnknownRule::Fail => {
            "The gate fails while a target is unknown (thresholds.on_unknown: fail)."
        }
    };
    line(md, format_args!("{says}\n"));
    for i in &r.inconclusive {
        line(
            md,
            format_args!("- `{}`: {}", inline(&i.target), inline(&i.reason)),
        );
    }
}

/// `## Held By The Floor`: significant worsenings over a threshold under the absolute floor.
pub(super) fn held_by_floor(md: &mut String, r: &RegressionSummary) {
    if r.held_by_floor.is_empty() {
        return;
    }
    md.push_str("\n## Held By The Floor\n\n");
    md.push_str("Significant worsenings beyond their threshold that the absolute floor kept from being regressions (set `targets[].thresholds.min_optimized_time_delta_ms` for microsecond kernels; docs/suite.md).\n\n");
    md.push_str("| Target | Reason | Before | After | Delta | Rule |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- |\n");
    for h in &r.held_by_floor {
        let (before, after, delta) = cells(&h.row);
        line(
            md,
            format_args!(
                "| {} | {} | {before} | {after} | {delta} | {} |",
                cell(h.row.target()),
                h.row.reason(),
                cell(&h.rule)
            ),
        );
    }
}
