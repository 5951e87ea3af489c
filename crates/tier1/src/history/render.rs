//! `regression_summary.md`: the Markdown rendering of a regression summary (reference §2.3).

use super::model::{ChangeRow, RegressionSummary, TargetSummary};
use std::fmt::Write;

fn num(v: f64) -> String {
    format!("{v}")
}

fn cells(r: &ChangeRow) -> (String, String, String) {
    match r {
        ChangeRow::Status { before, after, .. } => (before.clone(), after.clone(), String::new()),
        ChangeRow::Speedup {
            before,
            after,
            delta_pct,
            ..
        }
        | ChangeRow::OptimizedLatency {
            before,
            after,
            delta_pct,
            ..
        }
        | ChangeRow::OptimizedMemory {
            before,
            after,
            delta_pct,
            ..
        } => (num(*before), num(*after), format!("{delta_pct:+.2}%")),
        ChangeRow::MemorySavings {
            before,
            after,
            delta_points,
            ..
        } => (num(*before), num(*after), format!("{delta_points:+.2} pts")),
    }
}

fn table(out: &mut String, title: &str, rows: &[&ChangeRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## {title}\n\n| Target | Reason | Before | After | Delta |\n| --- | --- | --- | --- | --- |"
    );
    for r in rows {
        let (b, a, d) = cells(r);
        let _ = writeln!(
            out,
            "| `{}` | {} | {b} | {a} | {d} |",
            r.target(),
            r.reason()
        );
    }
}

fn targets(out: &mut String, title: &str, ts: &[TargetSummary]) {
    if ts.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## {title}\n");
    for t in ts {
        let _ = writeln!(out, "- `{}` ({})", t.target, t.status);
    }
}

/// Render the Markdown summary of a comparison.
pub fn regression_markdown(r: &RegressionSummary) -> String {
    let mut out = String::from("# Tier-1 Regression Summary\n\n");
    let _ = writeln!(
        out,
        "- Current run: `{}`",
        r.current_run_id.as_deref().unwrap_or("unknown")
    );
    match &r.baseline_run_id {
        Some(b) => {
            let _ = writeln!(out, "- Baseline run: `{b}`");
        }
        None => out.push_str("- Baseline run: none\n"),
    }
    let _ = write!(
        out,
        "\n## Summary\n\n- Regressions: {}\n- Improvements: {}\n- Suppressed regressions after recheck: {}\n- Baseline advancement holds: {}\n- New targets: {}\n- Missing targets: {}\n",
        r.regressions.len(),
        r.improvements.len(),
        r.suppressed_regressions.len(),
        r.anchor_declines.len(),
        r.new_targets.len(),
        r.missing_targets.len()
    );
    if !r.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &r.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    table(
        &mut out,
        "Regressions",
        &r.regressions.iter().collect::<Vec<_>>(),
    );
    table(
        &mut out,
        "Improvements",
        &r.improvements.iter().collect::<Vec<_>>(),
    );
    table(
        &mut out,
        "Suppressed Regressions After Recheck",
        &r.suppressed_regressions
            .iter()
            .map(|s| &s.row)
            .collect::<Vec<_>>(),
    );
    targets(&mut out, "New Targets", &r.new_targets);
    targets(&mut out, "Missing Targets", &r.missing_targets);
    if r.baseline_run_id.is_none() {
        out.push_str("\n## Notes\n\n- No eligible prior baseline: every target is new.\n");
    }
    out
}
