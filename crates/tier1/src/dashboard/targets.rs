//! The per-target table of the latest run: goal, baseline and optimized measurements, speedup or
//! memory savings, the change against the anchor with the threshold that applies, how it was
//! decided, the slowdown the comparison could detect, one status and the verification tolerance.
//! Cells are built once here and drawn by both HTML and Markdown.

use super::format::{self, esc, text};
use super::model::{Dashboard, RunView};
use crate::history::model::TargetSummary;
use crate::suite::{Goal, Thresholds};
use std::fmt::Write;

/// One row, as display strings (unescaped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TargetRow {
    /// Target key.
    pub(crate) key: String,
    /// Category.
    pub(crate) category: String,
    /// `speed` or `memory`.
    pub(crate) goal: &'static str,
    /// Baseline time (speed) or memory (memory).
    pub(crate) baseline: String,
    /// Optimized time or memory.
    pub(crate) optimized: String,
    /// Speedup, or memory savings.
    pub(crate) result: String,
    /// Change against the anchor.
    pub(crate) vs_anchor: String,
    /// The regression threshold that applies.
    pub(crate) threshold: String,
    /// The one status of the target, agreeing with its verdict ([`super::status::of`]).
    pub(crate) status: super::status::Status,
    /// Verification tolerance.
    pub(crate) tolerance: String,
    /// How the comparison decided the target ([`decision`]).
    pub(crate) decision: String,
    /// The smallest slowdown the comparison could detect for the target ([`detectable`]).
    pub(crate) detectable: String,
}

/// The threshold text for a goal.
pub(crate) fn threshold_text(goal: Goal, t: &Thresholds) -> String {
    match goal {
        Goal::Speed => format!(
            "speedup −{}% or latency +{}% (if |Δ| ≥ {} ms)",
            t.speedup_regression_pct,
            t.optimized_latency_regression_pct,
            t.min_optimized_time_delta_ms
        ),
        Goal::Time => format!(
            "time +{}% (if |Δ| ≥ {} ms)",
            t.optimized_latency_regression_pct, t.min_optimized_time_delta_ms
        ),
        Goal::Memory => format!(
            "savings −{} pts or memory +{}%",
            t.memory_savings_regression_points, t.optimized_memory_regression_pct
        ),
    }
}

fn vs_anchor(goal: Goal, cur: &TargetSummary, prev: Option<&TargetSummary>) -> String {
    let Some(prev) = prev else {
        return "no anchor value".into();
    };
    match goal {
        Goal::Speed => {
            let mut parts = Vec::new();
            if let (Some(c), Some(p)) = (cur.best_speedup, prev.best_speedup)
                && p > 0.0
            {
                parts.push(format!(
                    "speedup {}",
                    format::signed((c.get() - p.get()) / p.get() * 100.0, " %")
                ));
            }
            if let (Some(c), Some(p)) = (cur.best_optimized_time_ms, prev.best_optimized_time_ms)
                && c > 0.0
                && p > 0.0
            {
                parts.push(format!(
                    "latency {} ms",
                    format::signed_ms(c.get() - p.get())
                ));
            }
            if parts.is_empty() {
                "–".into()
            } else {
                parts.join(", ")
            }
        }
        Goal::Time => match (cur.baseline_time_ms, prev.baseline_time_ms) {
            (Some(c), Some(p)) if c > 0.0 && p > 0.0 => {
                format!("time {} ms", format::signed_ms(c.get() - p.get()))
            }
            _ => "–".into(),
        },
        Goal::Memory => match (cur.best_memory_savings_pct, prev.best_memory_savings_pct) {
            (Some(c), Some(p)) => format!("savings {}", format::signed(c.get() - p.get(), " pts")),
            _ => "–".into(),
        },
    }
}

/// The smallest slowdown (percent) the run's comparison could detect for `target` with 95 %
/// probability (`detectable_pct` of its verdict), or `–` where it was not tested.
pub(crate) fn detectable(run: &RunView, target: &str) -> String {
    run.regression
        .detection
        .as_ref()
        .and_then(|d| d.target(target))
        .and_then(|t| t.detectable_pct)
        .filter(|d| d.is_finite())
        .map_or_else(
            || "–".into(),
            |d| format!("{} %", crate::text::fmt_sig(d.get(), 3)),
        )
}

/// How the run's comparison decided `target`: its verdict, what an unknown target could not
/// rule out, a change held by the floor, and what decided (the statistical test, or the reference
/// rules with why); `–` without an anchor.
/// Records written before verdicts existed show how they were decided.
pub(crate) fn decision(run: &RunView, target: &str) -> String {
    let r = &run.regression;
    if r.baseline_run_id.is_none() {
        return "–".into();
    }
    let record = r.detection.as_ref().and_then(|d| d.target(target));
    let by = match record {
        Some(t) if t.method == crate::suite::DetectionMethod::Statistical => {
            "statistical test".to_string()
        }
        Some(t) => format!(
            "reference rules ({})",
            t.reason.as_deref().unwrap_or("suite setting")
        ),
        None => "reference rules".into(),
    };
    let held = r
        .held_by_floor
        .iter()
        .find(|h| h.row.target() == target)
        .map(|h| format!("; a significant worsening held by the floor ({})", h.rule))
        .unwrap_or_default();
    match record.and_then(|t| t.verdict) {
        Some(crate::history::Verdict::Unknown) => {
            let why = r
                .inconclusive
                .iter()
                .find(|i| i.target == target)
                .map_or(String::new(), |i| format!(": {}", i.reason));
            format!("unknown{why}")
        }
        Some(v) => format!("{} by the {by}{held}", v.as_str()),
        None => {
            if r.within_noise.iter().any(|c| c.target() == target) {
                return "within noise (beyond the thresholds, not significant)".into();
            }
            if let Some(i) = r.inconclusive.iter().find(|i| i.target == target) {
                return format!("inconclusive: {}; the reference rules decided", i.reason);
            }
            by
        }
    }
}

/// Rows for the latest run, compared with the anchor it was compared with.
pub(crate) fn rows(dash: &Dashboard) -> Vec<TargetRow> {
    let Some(run) = dash.latest_evidence() else {
        return vec![];
    };
    let anchor = dash.compared_anchor(run);
    let declines = super::declines::split(run, &dash.suite);
    run.summary
        .targets
        .iter()
        .map(|t| {
            let goal = Goal::from_stored(t.optimization_goal.as_deref());
            let (baseline, optimized, result) = match goal {
                Goal::Speed => (
                    format::ms(t.baseline_time_ms),
                    format::ms(t.best_optimized_time_ms),
                    format::speedup(t.best_speedup),
                ),
                Goal::Time => (
                    format::ms(t.baseline_time_ms),
                    "–".into(),
                    "single benchmark".into(),
                ),
                Goal::Memory => (
                    format::mb(t.baseline_memory_mb),
                    format::mb(t.best_optimized_memory_mb),
                    format!("{} saved", format::pct(t.best_memory_savings_pct)),
                ),
            };
            let tolerance = t
                .verification_tolerance
                .or_else(|| {
                    dash.suite
                        .targets
                        .iter()
                        .find(|s| s.key == t.key)
                        .map(|s| s.tolerance)
                })
                .map(|tol| format!("rtol {:e}, atol {:e}", tol.rtol, tol.atol))
                .unwrap_or_else(|| "–".into());
            TargetRow {
                key: t.key.clone(),
                category: t.category.clone(),
                goal: goal.as_str(),
                baseline,
                optimized,
                result,
                vs_anchor: vs_anchor(goal, t, anchor.and_then(|a| a.target(&t.target))),
                threshold: threshold_text(goal, &dash.suite.thresholds_for(&t.target)),
                status: super::status::of(run, &declines, &t.target, &t.status),
                tolerance,
                decision: decision(run, &t.target),
                detectable: detectable(run, &t.target),
            }
        })
        .collect()
}

/// The table as HTML.
pub(crate) fn table(s: &mut String, dash: &Dashboard) {
    let rows = rows(dash);
    let run_id = dash
        .latest_evidence()
        .map(|r| r.row.run_id.as_str())
        .unwrap_or("");
    let _ = write!(
        s,
        "<section id=\"targets\"><h2>Targets of <code>{}</code></h2><table><thead><tr><th>Target</th><th>Goal</th>\
         <th class=\"num\">Baseline</th><th class=\"num\">Optimized</th><th class=\"num\">Speedup / savings</th>\
         <th>vs anchor</th><th>Regression threshold</th><th>Decided by</th><th class=\"num\" title=\"the smallest slowdown the comparison detects with 95 % probability\">Detects</th><th>Status</th><th>Tolerance</th></tr></thead><tbody>",
        esc(run_id)
    );
    for r in rows {
        let tone = r.status.tone.class();
        let _ = write!(
            s,
            "<tr><td><strong>{}</strong><br><span class=\"muted\">{}</span></td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"small\">{}</td>\
             <td class=\"small\">{}</td><td class=\"num\">{}</td><td><span class=\"status {tone}\">{}</span></td><td class=\"small\">{}</td></tr>",
            text(&r.key),
            text(&r.category),
            r.goal,
            esc(&r.baseline),
            esc(&r.optimized),
            esc(&r.result),
            esc(&r.vs_anchor),
            esc(&r.threshold),
            esc(&r.decision),
            esc(&r.detectable),
            text(&r.status.label),
            esc(&r.tolerance)
        );
    }
    s.push_str("</tbody></table></section>\n");
}
