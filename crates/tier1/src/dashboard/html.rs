//! The dashboard page: one self-contained HTML file (inline CSS and SVG, no script, no fetch) with
//! the verdict, the latest evidence and latest accepted run cards, the per-target table, trend
//! charts, the changes against the anchor and the most recent runs. All text is escaped.

use super::format::{self, esc, evidence_html, link, text};
use super::model::{Dashboard, RunView};
use super::readiness::Verdict;
use super::svg;
use super::trends;
use super::{changes, targets};
use std::fmt::Write;

/// Runs listed in the run table (most recent first); older runs are counted, not listed.
pub(crate) const RUN_TABLE_ROWS: usize = 50;

pub(crate) const CSS: &str = include_str!("dashboard.css");

/// Render the page.
pub(crate) fn render(dash: &Dashboard, verdict: &Verdict) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let suite = dash.suite_name.as_deref().unwrap_or("tier1");
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{} benchmark history</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(suite)
    );
    let version = dash
        .suite_version
        .map(|v| format!(" v{v}"))
        .unwrap_or_default();
    let class = dash
        .runner_class
        .as_deref()
        .map(|c| format!(" · runner class {c}"))
        .unwrap_or_default();
    let _ = write!(
        s,
        "<header><h1>{} benchmark history{}{}</h1><p class=\"muted\">Generated {} · {} runs, {} accepted</p></header>\n<main>\n",
        esc(suite),
        esc(&version),
        esc(&class),
        esc(&dash.now.format("%Y-%m-%d %H:%M UTC").to_string()),
        dash.total_runs(),
        dash.accepted_runs()
    );
    verdict_section(&mut s, verdict);
    if let Some(reset) = &dash.chain_reset {
        let _ = writeln!(
            s,
            "<p id=\"chain-reset\" class=\"warn\">History restarted {} by {} (first run <code>{}</code>): {}</p>",
            esc(&format::time(&reset.at)),
            text(&reset.actor),
            esc(&reset.first_run_id),
            text(&reset.reason)
        );
    }
    if dash.runs.is_empty() {
        s.push_str(
            "<section id=\"empty\"><h2>No history yet</h2><p>This history root holds no run. \
             The first anchor is created by a bootstrap promotion; until then there is nothing \
             to compare or release.</p></section>\n",
        );
    } else {
        cards(&mut s, dash);
        targets::table(&mut s, dash);
        charts(&mut s, dash);
        changes::section(&mut s, dash);
        runs_table(&mut s, dash);
    }
    s.push_str("</main>\n<footer class=\"muted\">tier1-dashboard · static page, no scripts, no network requests</footer>\n</body>\n</html>\n");
    s
}

fn verdict_section(s: &mut String, v: &Verdict) {
    let (class, head) = if v.ready {
        ("ready", "Release ready")
    } else {
        ("blocked", "Not ready for release")
    };
    let _ = write!(
        s,
        "<section id=\"verdict\" class=\"verdict {class}\"><h2>{head}</h2>"
    );
    if v.ready {
        s.push_str("<p>The latest run is accepted, every target succeeded, and it has no regressions, suppressed regressions, missing targets or warnings.</p>");
    } else {
        s.push_str("<ul class=\"reasons\">");
        for b in &v.blockers {
            let _ = write!(s, "<li>{}</li>", esc(&b.to_string()));
        }
        s.push_str("</ul>");
    }
    if !v.notes.is_empty() {
        s.push_str("<ul class=\"notes\">");
        for n in &v.notes {
            let _ = write!(s, "<li>{}</li>", esc(&n.to_string()));
        }
        s.push_str("</ul>");
    }
    if let Some(age) = v.anchor_age.as_ref().filter(|a| !a.needs_renewal()) {
        let _ = write!(
            s,
            "<p id=\"anchor-age\" class=\"muted\">Anchor {} evidence age: {} days ({} days before it expires at {} days).</p>",
            esc(&age.run_id),
            age.age_days,
            age.days_left().max(0),
            super::readiness::EXPIRY_DAYS
        );
    }
    s.push_str("</section>\n");
}

fn cards(s: &mut String, dash: &Dashboard) {
    s.push_str("<section id=\"cards\" class=\"cards\">");
    card(
        s,
        dash,
        "latest-evidence",
        "Latest evidence run",
        dash.latest_evidence(),
    );
    let latest_id = dash.latest_evidence().map(|r| r.row.run_id.as_str());
    match dash.latest_accepted() {
        Some(run) if Some(run.row.run_id.as_str()) == latest_id => {
            let _ = write!(
                s,
                "<article class=\"card\" id=\"latest-accepted\"><h3>Latest accepted run</h3>\
                 <p class=\"runid\"><code>{}</code></p><p>The latest evidence run is also the latest accepted run.</p></article>",
                esc(&run.row.run_id)
            );
        }
        other => card(s, dash, "latest-accepted", "Latest accepted run", other),
    }
    if let Some(anchor) = dash.distinct_anchor() {
        card(s, dash, "anchor", "Current anchor", Some(anchor));
    }
    s.push_str("</section>\n");
}

fn row(s: &mut String, k: &str, v_html: &str) {
    let _ = write!(s, "<dt>{}</dt><dd>{v_html}</dd>", esc(k));
}

fn card(s: &mut String, dash: &Dashboard, id: &str, title: &str, run: Option<&RunView>) {
    let _ = write!(
        s,
        "<article class=\"card\" id=\"{id}\"><h3>{}</h3>",
        esc(title)
    );
    let Some(run) = run else {
        s.push_str("<p class=\"muted\">None yet.</p></article>");
        return;
    };
    let sum = &run.summary;
    let class = run.class().label();
    let _ = write!(
        s,
        "<p class=\"runid\"><code>{}</code> <span class=\"badge {class}\">{class}</span></p><dl>",
        esc(&run.row.run_id)
    );
    let commit = sum.source_git_commit.as_deref();
    let dirty = if sum.source_git_dirty == Some(true) {
        " <span class=\"badge rejected\">dirty</span>"
    } else {
        ""
    };
    row(
        s,
        "Commit",
        &format!(
            "<code title=\"{}\">{}</code>{dirty}",
            esc(commit.unwrap_or("")),
            esc(&format::short_commit(commit))
        ),
    );
    row(s, "Generated", &esc(&format::time(&run.row.generated_at)));
    let env = match &sum.environment {
        Some(e) => {
            let mut parts = vec![e.backend.clone()];
            if !e.device_names.is_empty() {
                parts.push(e.device_names.join(", "));
            }
            if let Some(d) = &e.driver_version {
                parts.push(format!("driver {d}"));
            }
            if let Some(c) = &e.cuda_version {
                parts.push(format!("CUDA {c}"));
            }
            if let Some(p) = e.profile.as_ref().or(sum.profile.as_ref()) {
                parts.push(format!("profile {p}"));
            }
            text(&parts.join(" · "))
        }
        None => "<span class=\"muted\">not recorded</span>".into(),
    };
    row(s, "Environment", &env);
    let agg = &sum.summary;
    row(
        s,
        "Result",
        &format!(
            "{} representative · {} of {} targets succeeded",
            esc(&format::speedup(run.representative())),
            agg.succeeded,
            agg.target_count
        ),
    );
    let compared = run
        .regression
        .baseline_run_id
        .as_deref()
        .map(|a| format!("<code>{}</code>", esc(a)))
        .unwrap_or_else(|| "<span class=\"muted\">none (first anchor)</span>".into());
    row(s, "Compared with", &compared);
    acceptance(s, run);
    let artifact = match sum.evidence_artifact_name.as_deref() {
        Some(n) => format!("<code>{}</code>", text(n)),
        None => "<span class=\"muted\">not bound</span>".into(),
    };
    let digest = run
        .row
        .baseline_evidence_digest
        .as_deref()
        .map(|d| {
            format!(
                " <code class=\"muted\" title=\"{}\">{}…</code>",
                esc(d),
                esc(&d.chars().take(19).collect::<String>())
            )
        })
        .unwrap_or_default();
    row(s, "Evidence", &format!("{artifact}{digest}"));
    if let Some(result) = sum.source_result_json.as_deref() {
        row(s, "Result JSON", &evidence_html(dash, run, result));
    }
    s.push_str("</dl></article>");
}

fn acceptance(s: &mut String, run: &RunView) {
    let r = &run.row;
    let Some(kind) = r.baseline_acceptance else {
        let what = if r.is_accepted() {
            "passed the gate (not an anchor)"
        } else {
            "rejected by the gate"
        };
        row(
            s,
            "Acceptance",
            &format!("<span class=\"muted\">{what}</span>"),
        );
        return;
    };
    row(
        s,
        "Acceptance",
        &format!("<code>{}</code>", format::acceptance(kind)),
    );
    if let Some(actor) = &r.baseline_acceptance_actor {
        let role = r
            .baseline_acceptance_actor_role
            .as_deref()
            .map(|x| format!(" ({})", text(x)))
            .unwrap_or_default();
        row(s, "Requester", &format!("{}{role}", text(actor)));
    }
    if !r.baseline_acceptance_reviewers.is_empty() {
        row(
            s,
            "Reviewers",
            &text(&r.baseline_acceptance_reviewers.join(", ")),
        );
    }
    if let Some(note) = &r.baseline_acceptance_note {
        row(s, "Note", &format!("<q>{}</q>", text(note)));
    }
    if let Some(url) = &r.baseline_acceptance_workflow_run {
        row(s, "Workflow run", &link(url));
    }
}

fn charts(s: &mut String, dash: &Dashboard) {
    s.push_str("<section id=\"trends\"><h2>Trends</h2>");
    let best = dash
        .best_speedup_seen()
        .map(|b| format::speedup(Some(b)))
        .unwrap_or_else(|| "–".into());
    let _ = write!(
        s,
        "<p class=\"legend\"><span class=\"key line\"></span> accepted runs <span class=\"key anchor\"></span> anchor \
         <span class=\"key rejected\"></span> rejected evidence (never scales the axis; ▲ = clipped above it) · \
         best speedup seen: <strong id=\"best-seen\">{}</strong></p>",
        esc(&best)
    );
    s.push_str(&svg::render(&trends::suite_chart(dash)));
    s.push_str("<div class=\"small-multiples\">");
    for t in trends::chart_targets(dash) {
        let time = trends::target_time_chart(dash, t);
        let also = if time.is_some() {
            " · speedup and optimized time (ms)"
        } else {
            ""
        };
        let _ = write!(
            s,
            "<figure><figcaption>{}{}{also}</figcaption>",
            esc(&dash.class_label()),
            text(&t.key)
        );
        s.push_str(&svg::render(&trends::target_chart(dash, t)));
        if let Some(chart) = time {
            s.push_str(&svg::render(&chart));
        }
        s.push_str("</figure>");
    }
    s.push_str("</div></section>\n");
}

fn runs_table(s: &mut String, dash: &Dashboard) {
    let total = dash.runs.len();
    let _ = write!(
        s,
        "<section id=\"runs\"><h2>Runs</h2><table><thead><tr><th>Run</th><th>Generated</th><th>Commit</th>\
         <th>Kind</th><th class=\"num\">Representative</th><th class=\"num\">Succeeded</th>\
         <th class=\"num\">Regressions</th><th class=\"num\">Declines</th><th>Compared with</th></tr></thead><tbody>"
    );
    for run in dash.runs.iter().rev().take(RUN_TABLE_ROWS) {
        let class = run.class().label();
        let agg = &run.summary.summary;
        let _ = write!(
            s,
            "<tr class=\"{class}\"><td class=\"nowrap\"><code>{}</code></td><td class=\"nowrap\">{}</td><td class=\"nowrap\"><code>{}</code></td>\
             <td><span class=\"badge {class}\">{class}</span></td><td class=\"num\">{}</td>\
             <td class=\"num\">{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>",
            esc(&run.row.run_id),
            esc(&format::time(&run.row.generated_at)),
            esc(&format::short_commit(
                run.summary.source_git_commit.as_deref()
            )),
            esc(&format::speedup(run.representative())),
            agg.succeeded,
            agg.target_count,
            run.regression.regressions.len(),
            run.regression.anchor_declines.len(),
            esc(run.regression.baseline_run_id.as_deref().unwrap_or("–")),
        );
    }
    s.push_str("</tbody></table>");
    if total > RUN_TABLE_ROWS {
        let _ = write!(
            s,
            "<p class=\"muted\" id=\"older-runs\">Showing the {RUN_TABLE_ROWS} most recent of {total} runs; {} older runs are not listed.</p>",
            total - RUN_TABLE_ROWS
        );
    }
    s.push_str("</section>\n");
}
