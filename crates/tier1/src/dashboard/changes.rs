//! The latest run's changes against its anchor: regressions, suppressed regressions,
//! significant worsenings held by the floor, unknown targets, improvements, changes within noise,
//! the other anchor declines by what they are (further worsenings of regressed targets, worsenings
//! beyond the thresholds under the floor, declines below the thresholds), new and missing targets,
//! warnings, and its evidence files.
//! Groups are built once here and drawn by both HTML and Markdown.

use super::format::{self, esc, evidence_html, text};
use super::model::{Dashboard, RunView};
use crate::json::Finite;
use std::fmt::Write;

/// A titled table of change rows (cells unescaped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    /// HTML id and stable name.
    pub(crate) id: &'static str,
    /// Heading.
    pub(crate) title: &'static str,
    /// Column headers.
    pub(crate) columns: &'static [&'static str],
    /// Rows.
    pub(crate) rows: Vec<Vec<String>>,
}

const CHANGE_COLUMNS: &[&str] = &["Target", "Reason", "Before", "After", "Delta"];

/// The change columns and the rule that held the change from the gate.
const HELD_COLUMNS: &[&str] = &["Target", "Reason", "Before", "After", "Delta", "Rule"];

/// The five change cells of `row` (target, reason, before, after, delta), then `extra`.
fn change_row(
    row: &crate::history::model::ChangeRow,
    extra: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let [b, a, d] = format::change_cells(row);
    [row.target().to_string(), row.reason().to_string(), b, a, d]
        .into_iter()
        .chain(extra)
        .collect()
}

/// A group of change rows under the five change columns.
fn change_group<'a>(
    id: &'static str,
    title: &'static str,
    rows: impl IntoIterator<Item = &'a crate::history::model::ChangeRow>,
) -> Group {
    Group {
        id,
        title,
        columns: CHANGE_COLUMNS,
        rows: rows.into_iter().map(|r| change_row(r, [])).collect(),
    }
}

/// The groups of a run, in reading order (empty groups included); `suite` judges the declines
/// where the record does not say which thresholds applied.
pub(crate) fn groups(run: &RunView, suite: &crate::suite::Suite) -> Vec<Group> {
    let r = &run.regression;
    let declines = super::declines::split(run, suite);
    vec![
        change_group("regressions", "Regressions", &r.regressions),
        suppressed_group(&r.suppressed_regressions),
        held_by_floor_group(&r.held_by_floor),
        Group {
            id: "unknown",
            title: "Unknown (the measurement cannot decide at this noise: listed, never an anchor)",
            columns: &["Target", "What could not be ruled out"],
            rows: r
                .inconclusive
                .iter()
                .map(|i| vec![i.target.clone(), i.reason.clone()])
                .collect(),
        },
        change_group("improvements", "Improvements", &r.improvements),
        change_group(
            "within-noise",
            "Within noise (beyond the thresholds, not significant against run-to-run noise; do not block)",
            &r.within_noise,
        ),
        change_group(
            "regressed-also",
            "Further worsenings of regressed targets (beyond the thresholds; the target counts once, under Regressions)",
            declines.on_regressed_target,
        ),
        under_floor_group(&declines.under_floor),
        change_group(
            "beyond-unfiled",
            "Worsenings beyond the suite's thresholds that the comparison did not file (it was decided under other thresholds)",
            declines.beyond_unfiled,
        ),
        change_group(
            "declines",
            "Anchor declines below the thresholds (hold anchor advancement, do not block)",
            declines.below_thresholds,
        ),
        Group {
            id: "missing-targets",
            title: "Missing targets (in the anchor, not in this run)",
            columns: &["Target", "Anchor status"],
            rows: target_rows(&r.missing_targets),
        },
        Group {
            id: "new-targets",
            title: "New targets",
            columns: &["Target", "Status"],
            rows: if r.baseline_run_id.is_some() {
                target_rows(&r.new_targets)
            } else {
                vec![]
            },
        },
        Group {
            id: "warnings",
            title: "Warnings",
            columns: &["Warning"],
            rows: r.warnings.iter().map(|w| vec![w.clone()]).collect(),
        },
    ]
}

/// A target's name and status, one row per target.
fn target_rows(ts: &[crate::history::model::TargetSummary]) -> Vec<Vec<String>> {
    ts.iter()
        .map(|t| vec![t.target.clone(), t.status.clone()])
        .collect()
}

/// The regressions a recheck cleared, each with its recheck run and what the recheck measured.
fn suppressed_group(suppressed: &[crate::history::model::SuppressedRegression]) -> Group {
    Group {
        id: "suppressed",
        title: "Suppressed regressions (cleared only by a recheck: the gate passes them; the run can never be ratified as an anchor)",
        columns: &[
            "Target",
            "Reason",
            "Before",
            "After",
            "Delta",
            "Recheck run",
            "Recheck",
        ],
        rows: suppressed
            .iter()
            .map(|s| {
                change_row(
                    &s.row,
                    [
                        s.recheck_run_id.clone(),
                        recheck_cell(s.recheck_speedup, s.recheck_optimized_time_ms),
                    ],
                )
            })
            .collect(),
    }
}

/// What a recheck measured, as one cell: its speedup and optimized time where it has both, else
/// the one it has (a dash where it has neither).
fn recheck_cell(speedup: Option<Finite>, optimized_ms: Option<Finite>) -> String {
    match (speedup, optimized_ms) {
        (Some(x), Some(ms)) => format!("{}, {}", format::speedup(Some(x)), format::ms(Some(ms))),
        (Some(x), None) => format::speedup(Some(x)),
        (None, ms) => format::ms(ms),
    }
}

/// The significant worsenings the floor kept from the gate, each with the rule that held it.
fn held_by_floor_group(held: &[crate::history::FloorHeld]) -> Group {
    Group {
        id: "held-by-floor",
        title: "Significant worsenings kept from the gate by the floor (not regressions by rule: min_optimized_time_delta_ms; set it per target for microsecond kernels)",
        columns: HELD_COLUMNS,
        rows: held
            .iter()
            .map(|h| change_row(&h.row, [h.rule.clone()]))
            .collect(),
    }
}

/// The worsenings beyond the thresholds that the floor kept from the gate, each with its rule.
fn under_floor_group(under_floor: &[(&crate::history::model::ChangeRow, String)]) -> Group {
    Group {
        id: "under-floor",
        title: "Worsenings beyond the thresholds kept from the gate by the floor (not regressions by rule: min_optimized_time_delta_ms; set it per target for microsecond kernels)",
        columns: HELD_COLUMNS,
        rows: under_floor
            .iter()
            .map(|(row, rule)| change_row(row, [rule.clone()]))
            .collect(),
    }
}

/// The section as HTML.
pub(crate) fn section(s: &mut String, dash: &Dashboard) {
    let Some(run) = dash.latest_evidence() else {
        return;
    };
    let anchor = run
        .regression
        .baseline_run_id
        .as_deref()
        .map(|a| format!("anchor <code>{}</code>", esc(a)))
        .unwrap_or_else(|| "no anchor (first anchor: nothing to compare)".into());
    let _ = write!(
        s,
        "<section id=\"changes\"><h2>Changes of <code>{}</code> against {anchor}</h2>",
        esc(&run.row.run_id)
    );
    let groups = groups(run, &dash.suite);
    let empty: Vec<&str> = groups
        .iter()
        .filter(|g| g.rows.is_empty())
        .map(|g| g.title.split(" (").next().unwrap_or(g.title))
        .collect();
    if !empty.is_empty() {
        let _ = write!(
            s,
            "<p class=\"muted\" id=\"no-changes\">None: {}.</p>",
            esc(&empty.join(", "))
        );
    }
    for g in groups.iter().filter(|g| !g.rows.is_empty()) {
        let _ = write!(
            s,
            "<h3 id=\"{}\">{} <span class=\"count\">{}</span></h3>",
            g.id,
            esc(g.title),
            g.rows.len()
        );
        s.push_str("<table><thead><tr>");
        for c in g.columns {
            let _ = write!(s, "<th>{}</th>", esc(c));
        }
        s.push_str("</tr></thead><tbody>");
        for row in &g.rows {
            s.push_str("<tr>");
            for cell in row {
                let _ = write!(s, "<td>{}</td>", text(cell));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table>");
    }
    rechecks(s, dash, run);
    side_by_side(s, run);
    evidence(s, dash, run);
    s.push_str("</section>\n");
}

fn rechecks(s: &mut String, dash: &Dashboard, run: &RunView) {
    let rc = &run.regression.rechecks;
    let _ = write!(
        s,
        "<h3 id=\"rechecks\">Rechecks <span class=\"count\">{}</span></h3>",
        rc.len()
    );
    if rc.is_empty() {
        s.push_str("<p class=\"muted\">None.</p>");
        return;
    }
    s.push_str("<table><thead><tr><th>Target</th><th>Recheck run</th><th>Outcome</th><th>Metrics</th><th>Result JSON</th></tr></thead><tbody>");
    for r in rc {
        let outcome = if r.confirmed_regression {
            "<span class=\"badge regressed\">regression confirmed</span>"
        } else {
            "<span class=\"badge suppressed\">not regressed</span>"
        };
        let valid = if r.recheck_metrics_valid {
            "valid"
        } else {
            "invalid"
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td><code>{}</code></td><td>{outcome}</td><td>{valid}</td><td>{}</td></tr>",
            text(&r.target),
            esc(&r.recheck_run_id),
            evidence_html(dash, run, &r.recheck_output_json)
        );
    }
    s.push_str("</tbody></table>");
}

/// One line per target compared side by side with the anchor's code (nothing without a block).
fn side_by_side(s: &mut String, run: &RunView) {
    let Some(b) = &run.regression.side_by_side else {
        return;
    };
    let _ = write!(
        s,
        "<h3 id=\"side-by-side\">Side by side with the anchor's code <span class=\"count\">{}</span></h3><p>{}</p><ul>",
        b.checks.len(),
        text(&b.reason)
    );
    for c in &b.checks {
        let _ = write!(s, "<li>{}</li>", text(&c.line()));
    }
    s.push_str("</ul>");
}

fn evidence(s: &mut String, dash: &Dashboard, run: &RunView) {
    let sum = &run.summary;
    let mut refs: Vec<(String, &str)> = Vec::new();
    for (label, v) in [
        ("result JSON", &sum.source_result_json),
        ("manifest", &sum.source_manifest_json),
        ("report", &sum.source_markdown_report),
    ] {
        if let Some(v) = v {
            refs.push((label.to_string(), v.as_str()));
        }
    }
    for t in &sum.targets {
        for (kind, path) in &t.artifacts {
            refs.push((format!("{} {kind}", t.key), path.as_str()));
        }
    }
    let _ = write!(
        s,
        "<h3 id=\"evidence\">Evidence files <span class=\"count\">{}</span></h3>",
        refs.len()
    );
    if refs.is_empty() {
        s.push_str("<p class=\"muted\">None recorded.</p>");
        return;
    }
    s.push_str("<ul class=\"evidence\">");
    for (label, path) in refs {
        let _ = write!(
            s,
            "<li>{}: {}</li>",
            text(&label),
            evidence_html(dash, run, path)
        );
    }
    s.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recheck_cell_shows_what_the_recheck_measured() {
        let f = |x: f64| Some(Finite::from(x));
        for (speedup, ms, cell) in [
            (f(2.5), f(1.25), "2.50×, 1.250 ms"),
            (f(2.5), None, "2.50×"),
            (None, f(1.25), "1.250 ms"),
            (None, None, "–"),
        ] {
            assert_eq!(recheck_cell(speedup, ms), cell, "{speedup:?} {ms:?}");
        }
    }
}
