//! `regression_summary.md`: the reference `render_regression_summary` Markdown of a comparison
//! (header, runs, counts, warnings, change tables, suppressed regressions, new and missing
//! targets), plus tier1's detection sections when the comparison carries them: changes within
//! noise, inconclusive targets and the detection method.

mod verdicts;

use crate::history::model::{ChangeRow, RegressionSummary, TargetSummary};
use crate::history::{Detection, DetectionMethod};
use std::fmt::Write;

/// The reference title of the summary.
pub(crate) const TITLE: &str = "Tier-1 Regression Summary";

/// Render the Markdown regression summary (deterministic; ends with one newline).
pub fn render(r: &RegressionSummary) -> String {
    render_titled(r, TITLE)
}

/// [`render`] under another first heading (the preview marks its copy as not canonical).
pub(crate) fn render_titled(r: &RegressionSummary, title: &str) -> String {
    let mut md = String::new();
    let run = |id: &Option<String>| id.as_deref().map_or("none".to_string(), inline);
    line(&mut md, format_args!("# {}\n", inline(title)));
    line(
        &mut md,
        format_args!("- Current run: `{}`", run(&r.current_run_id)),
    );
    line(
        &mut md,
        format_args!("- Baseline run: `{}`", run(&r.baseline_run_id)),
    );
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
        line(&mut md, format_args!("- {label}: {n}"));
    }
    if r.detection.is_some() {
        line(
            &mut md,
            format_args!(
                "- Within noise (over a threshold, not significant): {}",
                r.within_noise.len()
            ),
        );
        line(
            &mut md,
            format_args!(
                "- Unknown (the measurement cannot decide at this noise): {}",
                r.inconclusive.len()
            ),
        );
        line(
            &mut md,
            format_args!(
                "- Held by the floor (significant, under min_optimized_time_delta_ms): {}",
                r.held_by_floor.len()
            ),
        );
    }
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
    if !r.suppressed_regressions.is_empty() {
        md.push_str("\n## Suppressed Regressions After Recheck\n\n");
        md.push_str("| Target | Reason | Before | After | Delta | Recheck run | Recheck speedup | Recheck optimized ms |\n");
        md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for s in &r.suppressed_regressions {
            let (before, after, delta) = cells(&s.row);
            line(
                &mut md,
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
    if let Some(b) = &r.side_by_side {
        md.push_str("\n## Side By Side With The Anchor's Code\n\n");
        if let Some(w) = &b.warning {
            line(&mut md, format_args!("- **Warning:** {}", inline(w)));
        }
        line(&mut md, format_args!("- {}", inline(&b.reason)));
        for c in &b.checks {
            line(&mut md, format_args!("- {}", inline(&c.line())));
        }
    }
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

fn line(md: &mut String, args: std::fmt::Arguments<'_>) {
    // Writing to a String cannot fail.
    let _ = md.write_fmt(args);
    md.push('\n');
}

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

/// Before, after and delta cells: delta is `delta_pct`, else `delta_points`, formatted `+.2f`.
pub(crate) fn cells(row: &ChangeRow) -> (String, String, String) {
    match row {
        ChangeRow::Status { before, after, .. } => (cell(before), cell(after), "-".into()),
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
        } => (num(*before), num(*after), signed(*delta_pct)),
        ChangeRow::MemorySavings {
            before,
            after,
            delta_points,
            ..
        } => (num(*before), num(*after), signed(*delta_points)),
    }
}

/// A number as Python's `str(float)` prints ordinary values (`2.0`, `2.49`).
fn num(x: impl Into<f64>) -> String {
    let x: f64 = x.into();
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

fn opt_num(x: Option<impl Into<f64>>) -> String {
    x.map_or_else(|| "-".into(), num)
}

fn signed(x: impl Into<f64>) -> String {
    format!("{:+.2}", x.into())
}

/// Text safe inside a table cell: no line breaks, escaped pipes, no backticks.
pub(crate) fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

/// Text safe inside a list item or code span: no line breaks or backticks.
pub(crate) fn inline(s: &str) -> String {
    s.replace(['\n', '\r'], " ").replace('`', "'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::*;
    use crate::recheck::{RecheckResult, apply};
    use crate::regress::compare;
    use crate::suite::Thresholds;

    #[test]
    fn cells_are_escaped_and_numbers_look_like_the_reference() {
        assert_eq!(cell("a|b\nc`d"), "a\\|b c'd");
        assert_eq!(inline("a|b"), "a|b");
        assert_eq!(
            (num(2.0), num(2.49), num(-0.5)),
            ("2.0".into(), "2.49".into(), "-0.5".into())
        );
        assert_eq!(
            (signed(5.0), signed(-11.654), signed(0.0)),
            ("+5.00".into(), "-11.65".into(), "+0.00".into())
        );
        assert_eq!(opt_num(None::<f64>), "-");
    }

    #[test]
    fn no_baseline_markdown() {
        let current = summary(
            "20260816_031500_tier1_nightly_abcdef12",
            vec![speed_opt("block_scaling", 1.45, 0.0740689655)],
        );
        let mut r = compare(&current, None, Thresholds::default()).expect("no anchor");
        r.warnings
            .push("Tier-1 history contains runs but no eligible prior baseline".into());
        insta::assert_snapshot!(render(&r));
    }

    #[test]
    fn comparison_markdown() {
        let anchor = summary(
            "tier1_anchor",
            vec![
                speed_opt("llama_3_1_8b", 2.49, 5.278),
                speed_opt("persistent_decode", 11.93, 0.118),
                speed_opt("block_scaling", 1.45, 0.0740689655),
                memory_target("kv_standard", 1024.0, 50.0),
                speed_opt("gradient_fusion", 1.21, 0.826),
                speed_opt("gone", 2.0, 1.0),
                speed_opt("flashattention4_alibi", 10.0, 5.0),
            ],
        );
        let current = summary(
            "tier1_new",
            vec![
                speed_opt("llama_3_1_8b", 2.20, 5.974),
                speed_opt("persistent_decode", 11.93, 0.2),
                speed_opt("block_scaling", 1.60, 0.067),
                memory_target("kv_standard", 1024.0, 40.0),
                with_status(speed_opt("gradient_fusion", 1.0, 1.0), "failed_no_speedup"),
                speed_opt("fresh|pipe", 3.0, 1.0),
                speed_opt("flashattention4_alibi", 12.0, 5.0 * 10.0 / 12.0),
            ],
        );
        let th = Thresholds::default();
        let first = compare(&current, Some(&anchor), th).expect("comparable");
        let recheck = RecheckResult {
            target: "labs/persistent_decode:persistent_decode".into(),
            key: "persistent_decode".into(),
            recheck_output_json: "x.json".into(),
            row: Some(speed_opt("persistent_decode", 11.93, 0.12)),
        };
        let r = apply(
            first,
            &current,
            &anchor,
            &[recheck],
            th,
            &Default::default(),
        );
        assert_eq!(r.suppressed_regressions.len(), 1);
        let md = render(&r);
        assert!(md.contains("| labs/llama_3_1_8b:llama_3_1_8b | speedup | 2.49 | 2.2 | -11.65 |"));
        assert!(md.contains("- Suppressed regressions after recheck: 1"));
        assert!(md.contains("- `labs/fresh|pipe:fresh|pipe` (succeeded)"));
        assert!(!md.contains("## Notes"));
        insta::assert_snapshot!(md);
    }

    #[test]
    fn statistical_markdown_shows_verdicts_noise_and_unknown_targets() {
        // Precise measurements (±0.5 %) on a young history (the prior: 2 % noise over 8 runs).
        let anchor = precise(summary(
            "tier1_anchor",
            vec![
                speed_opt("steady", 2.0, 50.0),
                speed_opt("slower", 2.0, 50.0),
                speed_opt("noisy", 2.0, 50.0),
            ],
        ));
        let current = summary(
            "tier1_new",
            vec![
                // -6 %: over the 5 % threshold but not significant at 2 % run-to-run noise.
                measured(speed_opt("steady", 1.88, 53.2), 0.5),
                // -20 %: over the threshold and significant.
                measured(speed_opt("slower", 1.6, 62.5), 0.5),
                // -7 %, measured imprecisely: the test says unknown, never a regression on
                // noise alone, and never a silent pass either.
                measured(speed_opt("noisy", 1.86, 53.8), 3.0),
            ],
        );
        let r = compare(&current, Some(&anchor), Thresholds::default()).expect("comparable");
        let reasons = |rows: &[ChangeRow]| -> Vec<String> {
            rows.iter()
                .map(|r| format!("{} {}", r.target(), r.reason()))
                .collect()
        };
        assert_eq!(reasons(&r.regressions), ["labs/slower:slower speedup"]);
        assert_eq!(
            reasons(&r.within_noise),
            [
                "labs/steady:steady speedup",
                "labs/steady:steady optimized_latency",
                "labs/noisy:noisy speedup",
                "labs/noisy:noisy optimized_latency"
            ]
        );
        let unknown: Vec<&str> = r.inconclusive.iter().map(|i| i.target.as_str()).collect();
        assert_eq!(unknown, ["labs/steady:steady", "labs/noisy:noisy"]);
        assert!(
            r.inconclusive[1]
                .reason
                .contains("speedup 2.000x -> 1.860x (-7.0 %): a 5.00 % worsening is not ruled out"),
            "{}",
            r.inconclusive[1].reason
        );
        let md = render(&r);
        assert!(md.contains("## Within Noise"));
        assert!(md.contains("## Unknown"));
        assert!(md.contains("| labs/slower:slower | regressed |"), "{md}");
        assert!(md.contains("| labs/noisy:noisy | unknown |"), "{md}");
        insta::assert_snapshot!(md);
    }
}
