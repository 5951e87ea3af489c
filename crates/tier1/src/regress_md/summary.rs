//! The Markdown of a comparison: the header, runs, counts and warnings, the change tables, the
//! suppressed regressions, new and missing targets, and tier1's detection sections.

use super::cells::{cell, cells, inline, line, opt_num};
use super::verdicts;
use crate::history::model::{ChangeRow, RegressionSummary, TargetSummary};
use crate::history::{Detection, DetectionMethod};
use std::fmt::Write;

/// The reference title of the summary.
pub(crate) const TITLE: &str = "Tier-1 Regression Summary";

/// Render the Markdown regression summary (deterministic; ends with one newline).
pub fn render(r: &RegressionSummary) -> String {
    render_titled(r, TITLE)
}

/// [`render`] under another first heading (the preview marks its copy as not canonical): the
/// header, the counts, the warnings, the change tables and detection verdicts, the suppressed
/// regressions, the side-by-side block, new and missing targets, the detection sections, notes.
pub(crate) fn render_titled(r: &RegressionSummary, title: &str) -> String {
    let mut md = String::new();
    header(&mut md, r, title);
    counts(&mut md, r);
    if !r.warnings.is_empty() {
        md.push_str("\n## Warnings\n\n");
        for w in &r.warnings {
            line(&mut md, format_args!("- {}", inline(w)));
        }
    }
    change_table(&mut md, "Regressions", &r.regressions);
    change_table(&mut md, "Improvements", &r.improvements);
    if let Some(d) = &r.detection {
        verdicts::held_by_floor(&mut md, r);
        verdicts::unknown(&mut md, r);
        within_noise(&mut md, &r.within_noise, d);
    }
    suppressed(&mut md, r);
    side_by_side(&mut md, r);
    target_list(&mut md, "New Targets", &r.new_targets);
    target_list(&mut md, "Missing Targets", &r.missing_targets);
    if let Some(d) = &r.detection {
        verdicts::table(&mut md, d);
        detection(&mut md, d);
    }
    if r.baseline_run_id.is_none() {
        md.push_str("\n## Notes\n\n");
        md.push_str(
            "- No eligible baseline run was available, so nothing was compared; every target is listed as new.\n",
        );
    }
    md
}

/// The first heading and the two runs compared (`none` where there is none).
fn header(md: &mut String, r: &RegressionSummary, title: &str) {
    let run = |id: &Option<String>| id.as_deref().map_or("none".to_string(), inline);
    line(md, format_args!("# {}\n", inline(title)));
    line(
        md,
        format_args!("- Current run: `{}`", run(&r.current_run_id)),
    );
    line(
        md,
        format_args!("- Baseline run: `{}`", run(&r.baseline_run_id)),
    );
}

/// The summary's counts; the detection's three only where the comparison used tier1's detection.
fn counts(md: &mut String, r: &RegressionSummary) {
    md.push_str("\n## Summary\n\n");
    let counts = [
        ("Regressions", r.regressions.len()),
        ("Improvements", r.improvements.len()),
        (
            "Suppressed regressions after recheck",
            r.suppressed_regressions.len(),
        ),
        ("Baseline advancement holds", r.anchor_declines.len()),
        ("New targets", r.new_targets.len()),
        ("Missing targets", r.missing_targets.len()),
    ];
    for (label, n) in counts {
        line(md, format_args!("- {label}: {n}"));
    }
    if r.detection.is_some() {
        line(
            md,
            format_args!(
                "- Within noise (over a threshold, not significant): {}",
                r.within_noise.len()
            ),
        );
        line(
            md,
            format_args!(
                "- Unknown (the measurement cannot decide at this noise): {}",
                r.inconclusive.len()
            ),
        );
        line(
            md,
            format_args!(
                "- Held by the floor (significant, under min_optimized_time_delta_ms): {}",
                r.held_by_floor.len()
            ),
        );
    }
}

/// The regressions a recheck suppressed, with what the recheck measured (nothing when none).
fn suppressed(md: &mut String, r: &RegressionSummary) {
    if r.suppressed_regressions.is_empty() {
        return;
    }
    md.push_str("\n## Suppressed Regressions After Recheck\n\n");
    md.push_str("| Target | Reason | Before | After | Delta | Recheck run | Recheck speedup | Recheck optimized ms |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for s in &r.suppressed_regressions {
        let (before, after, delta) = cells(&s.row);
        line(
            md,
            format_args!(
                "| {} | {} | {before} | {after} | {delta} | {} | {} | {} |",
                cell(s.row.target()),
                s.row.reason(),
                cell(&s.recheck_run_id),
                opt_num(s.recheck_speedup),
                opt_num(s.recheck_optimized_time_ms),
            ),
        );
    }
}

/// The side-by-side comparison with the anchor's code, where one ran: its warning, its reason and
/// one line per check.
fn side_by_side(md: &mut String, r: &RegressionSummary) {
    let Some(b) = &r.side_by_side else {
        return;
    };
    md.push_str("\n## Side By Side With The Anchor's Code\n\n");
    if let Some(w) = &b.warning {
        line(md, format_args!("- **Warning:** {}", inline(w)));
    }
    line(md, format_args!("- {}", inline(&b.reason)));
    for c in &b.checks {
        line(md, format_args!("- {}", inline(&c.line())));
    }
}

/// A change table under `title` (nothing when it has no rows).
fn change_table(md: &mut String, title: &str, rows: &[ChangeRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(md, "\n## {title}\n\n");
    md.push_str("| Target | Reason | Before | After | Delta |\n");
    md.push_str("| --- | --- | --- | --- | --- |\n");
    for row in rows {
        let (before, after, delta) = cells(row);
        line(
            md,
            format_args!(
                "| {} | {} | {before} | {after} | {delta} |",
                cell(row.target()),
                row.reason()
            ),
        );
    }
}

/// Rows over a threshold that the significance test attributed to run-to-run noise, with the
/// test's p-value and the noise estimate.
fn within_noise(md: &mut String, rows: &[ChangeRow], d: &Detection) {
    if rows.is_empty() {
        return;
    }
    md.push_str("\n## Within Noise\n\n");
    md.push_str("| Target | Reason | Before | After | Delta | p-value | Run-to-run noise |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for row in rows {
        let (before, after, delta) = cells(row);
        let test = d
            .targets
            .iter()
            .find(|t| t.target == row.target())
            .and_then(|t| t.tests.iter().find(|m| m.metric == row.reason()));
        let (p, noise) = test.map_or(("-".into(), "-".into()), |m| {
            (format!("{:.4}", m.p_value), format!("{:.2} %", m.noise_pct))
        });
        line(
            md,
            format_args!(
                "| {} | {} | {before} | {after} | {delta} | {p} | {noise} |",
                cell(row.target()),
                row.reason()
            ),
        );
    }
}

/// How changes were decided.
fn detection(md: &mut String, d: &Detection) {
    md.push_str("\n## Detection\n\n");
    match d.method {
        DetectionMethod::Reference => {
            md.push_str("- Method: reference (the thresholds alone).\n");
        }
        DetectionMethod::Statistical => {
            line(
                md,
                format_args!(
                    "- Method: statistical: a change counts when it clears its threshold and a one-sided t-test at α = {:.4} per test (two per speed target) (run-to-run noise from {} accepted run(s), prior {:.2} % over {} run(s)).",
                    d.alpha,
                    d.history_run_ids.len(),
                    d.prior_noise_pct,
                    d.prior_runs
                ),
            );
            let by_reference: Vec<String> = d
                .targets
                .iter()
                .filter(|t| t.method == DetectionMethod::Reference)
                .map(|t| {
                    format!(
                        "`{}` ({})",
                        inline(&t.target),
                        inline(t.reason.as_deref().unwrap_or("reference"))
                    )
                })
                .collect();
            if !by_reference.is_empty() {
                line(
                    md,
                    format_args!(
                        "- Decided by the reference rules alone: {}",
                        by_reference.join("; ")
                    ),
                );
            }
        }
    }
}

/// The targets under `title` with their status (nothing when there are none).
fn target_list(md: &mut String, title: &str, targets: &[TargetSummary]) {
    if targets.is_empty() {
        return;
    }
    let _ = write!(md, "\n## {title}\n\n");
    for t in targets {
        line(
            md,
            format_args!("- `{}` ({})", inline(&t.target), inline(&t.status)),
        );
    }
}
