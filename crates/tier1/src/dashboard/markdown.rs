//! The Markdown summary (`summary.md`, appended to `$GITHUB_STEP_SUMMARY`): the same verdict,
//! cards, target table and changes as the page, without charts. All text is escaped.

use super::changes;
use super::format::{self, md, scrub_paths};
use super::model::{Dashboard, RunView};
use super::readiness::Verdict;
use super::targets;
use std::fmt::Write;

fn text(s: &str) -> String {
    md(&scrub_paths(s))
}

/// Render the summary: the verdict, then (with runs) the run counts, the cards, the target
/// table and the latest run's changes.
pub(crate) fn render(dash: &Dashboard, verdict: &Verdict) -> String {
    let mut s = String::new();
    verdict_section(&mut s, dash, verdict);
    if dash.runs.is_empty() {
        s.push_str(
            "\nNo history yet: this history root holds no run. The first anchor is created by a \
             bootstrap promotion.\n",
        );
        return s;
    }
    run_counts(&mut s, dash);
    cards(&mut s, dash);
    target_table(&mut s, dash);
    if let Some(run) = dash.latest_evidence() {
        change_groups(&mut s, dash, run);
    }
    s
}

/// The heading with the verdict, its blockers and notes, the anchor's evidence age (while it
/// needs no renewal) and the history's restart, if any.
fn verdict_section(s: &mut String, dash: &Dashboard, verdict: &Verdict) {
    let suite = dash.suite_name.as_deref().unwrap_or("tier1");
    let head = if verdict.ready {
        "✅ Release ready"
    } else {
        "❌ Not ready for release"
    };
    let _ = writeln!(s, "# {} benchmark history: {head}\n", text(suite));
    for b in &verdict.blockers {
        let _ = writeln!(s, "- {}", text(&b.to_string()));
    }
    for n in &verdict.notes {
        let _ = writeln!(s, "- ⚠️ {}", text(&n.to_string()));
    }
    if let Some(age) = verdict.anchor_age.as_ref().filter(|a| !a.needs_renewal()) {
        let _ = writeln!(
            s,
            "- Anchor `{}` evidence age: {} days ({} days before it expires).",
            age.run_id,
            age.age_days,
            age.days_left().max(0)
        );
    }
    if let Some(reset) = &dash.chain_reset {
        let _ = writeln!(
            s,
            "- History restarted {} by {} (first run `{}`): {}",
            md(&format::time(&reset.at)),
            text(&reset.actor),
            reset.first_run_id,
            text(&reset.reason)
        );
    }
}

/// How many runs (and how many of them sealed), how many accepted, and the best speedup seen.
fn run_counts(s: &mut String, dash: &Dashboard) {
    let sealed = if dash.sealed.is_empty() {
        String::new()
    } else {
        format!(
            " ({} of them sealed in {} segments)",
            dash.sealed_runs(),
            dash.sealed.len()
        )
    };
    let _ = writeln!(
        s,
        "\n{} runs{sealed}, {} accepted. Best speedup seen (accepted runs only): {}.\n",
        dash.total_runs(),
        dash.accepted_runs(),
        format::speedup(dash.best_speedup_seen())
    );
}

/// The cards of the latest evidence run, the latest accepted run (one line when it is the same
/// run) and the current anchor (when it is another run).
fn cards(s: &mut String, dash: &Dashboard) {
    card(s, "Latest evidence run", dash.latest_evidence());
    let latest_id = dash.latest_evidence().map(|r| r.row.run_id.as_str());
    match dash.latest_accepted() {
        Some(run) if Some(run.row.run_id.as_str()) == latest_id => {
            let _ = writeln!(
                s,
                "## Latest accepted run\n\n`{}`: the latest evidence run is also the latest accepted run.\n",
                run.row.run_id
            );
        }
        other => card(s, "Latest accepted run", other),
    }
    if let Some(anchor) = dash.distinct_anchor() {
        card(s, "Current anchor", Some(anchor));
    }
}

/// The table of targets, one row per target.
fn target_table(s: &mut String, dash: &Dashboard) {
    s.push_str("## Targets\n\n| Target | Goal | Baseline | Optimized | Speedup / savings | vs anchor | Threshold | Decided by | Detects | Status |\n|---|---|--:|--:|--:|---|---|---|--:|---|\n");
    for r in targets::rows(dash) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            text(&r.key),
            r.goal,
            md(&r.baseline),
            md(&r.optimized),
            md(&r.result),
            md(&r.vs_anchor),
            md(&r.threshold),
            md(&r.decision),
            md(&r.detectable),
            text(&r.status.label)
        );
    }
}

/// The changes of `run`, one table per group that has rows.
fn change_groups(s: &mut String, dash: &Dashboard, run: &RunView) {
    for g in changes::groups(run, &dash.suite) {
        if g.rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n## {} ({})\n", g.title, g.rows.len());
        let _ = writeln!(s, "| {} |", g.columns.join(" | "));
        let _ = writeln!(s, "|{}", "---|".repeat(g.columns.len()));
        for row in &g.rows {
            let cells: Vec<String> = row.iter().map(|c| text(c)).collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
    }
}

/// A card: the run's summary under `title`, or `None yet.`
fn card(s: &mut String, title: &str, run: Option<&RunView>) {
    let _ = writeln!(s, "## {title}\n");
    let Some(run) = run else {
        s.push_str("None yet.\n\n");
        return;
    };
    let sum = &run.summary;
    let _ = writeln!(s, "- Run: `{}` ({})", run.row.run_id, run.class().label());
    let _ = writeln!(
        s,
        "- Commit: `{}`",
        md(sum.source_git_commit.as_deref().unwrap_or("–"))
    );
    let _ = writeln!(
        s,
        "- Generated: {}",
        md(&format::time(&run.row.generated_at))
    );
    if let Some(e) = &sum.environment {
        let _ = writeln!(
            s,
            "- Environment: {} · {} · driver {}",
            text(&e.backend),
            text(&e.device_names.join(", ")),
            text(e.driver_version.as_deref().unwrap_or("–"))
        );
    }
    let _ = writeln!(
        s,
        "- Representative speedup: {} · {} of {} targets succeeded",
        format::speedup(run.representative()),
        sum.summary.succeeded,
        sum.summary.target_count
    );
    let r = &run.row;
    if let Some(kind) = r.baseline_acceptance {
        let _ = writeln!(s, "- Acceptance: {}", format::acceptance(kind));
    }
    if let Some(a) = &r.baseline_acceptance_actor {
        let _ = writeln!(s, "- Requester: {}", text(a));
    }
    if !r.baseline_acceptance_reviewers.is_empty() {
        let _ = writeln!(
            s,
            "- Reviewers: {}",
            text(&r.baseline_acceptance_reviewers.join(", "))
        );
    }
    if let Some(n) = &r.baseline_acceptance_note {
        let _ = writeln!(s, "- Note: {}", text(n));
    }
    if let Some(w) = &r.baseline_acceptance_workflow_run {
        let _ = writeln!(s, "- Workflow run: {}", text(w));
    }
    s.push('\n');
}
