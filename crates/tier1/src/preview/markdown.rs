//! The preview in Markdown, for a pull request comment and the step summary: a hidden marker (so
//! the same comment is found and updated on the next run), a one-line verdict that says "preview,
//! not canonical", a compact table (target, anchor, pull request, change, verdict, most serious
//! first), and the details folded in `<details>`; always within GitHub's comment size limit.

use super::rows::{Change, Side, TargetRow};
use crate::gate::Verdict;
use crate::history::model::RegressionSummary;
use crate::regress_md::cell;
use std::fmt::Write as _;

/// The hidden first line that identifies the preview comment.
pub(crate) const MARKER: &str = "<!-- tier1-preview -->";
/// What every preview output says wherever it shows a verdict.
pub(crate) const NOTICE: &str = "preview, not canonical";
/// The title of the preview's `regression_summary.md`.
pub(crate) const SUMMARY_TITLE: &str = "Tier-1 Regression Summary (preview, not canonical)";
/// At most this many lines of a list (gate reasons, warnings) in the short details.
const SHORT_LIST: usize = 20;

/// What the comment is about.
#[derive(Debug, Clone)]
pub(crate) struct Context<'a> {
    /// The preview's run id.
    pub(crate) run_id: &'a str,
    /// The checked-out commit.
    pub(crate) commit: Option<&'a str>,
    /// The anchor's run id.
    pub(crate) anchor_run_id: &'a str,
    /// The anchor's commit.
    pub(crate) anchor_commit: Option<&'a str>,
    /// The branch whose canonical history was restored.
    pub(crate) branch: &'a str,
    /// Profile.
    pub(crate) profile: &'a str,
    /// Devices measured on (GPU names, or the CPU).
    pub(crate) devices: &'a [String],
    /// Link to the workflow run, when known.
    pub(crate) run_url: Option<&'a str>,
    /// The nightly gate's verdict on this run.
    pub(crate) gate: &'a Verdict,
    /// The rows, most serious first.
    pub(crate) rows: &'a [TargetRow],
    /// The comparison (after rechecks).
    pub(crate) comparison: &'a RegressionSummary,
    /// Notes about the comparison itself (for example an anchor due for renewal).
    pub(crate) notes: &'a [String],
}

/// A rendered comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The Markdown, [`MARKER`] first.
    pub(crate) body: String,
    /// Table rows shown (the rest were cut for size).
    pub(crate) rows_shown: usize,
    /// Whether the full regression summary is in the details.
    pub(crate) full_details: bool,
}

/// The one-line verdict.
pub(crate) fn verdict_line(gate: &Verdict) -> String {
    if gate.passed {
        format!("### ✅ Tier-1 {NOTICE}: the nightly gate would pass this commit")
    } else {
        format!("### ❌ Tier-1 {NOTICE}: the nightly gate would fail this commit")
    }
}

/// The comment for `ctx`, at most `max_chars` characters (GitHub allows 65,536): every row and
/// the full details when they fit; else the short details; else as many rows as fit, most
/// serious first, with a note of how many were left out.
pub(crate) fn comment(ctx: &Context<'_>, max_chars: usize) -> Rendered {
    let head = head(ctx);
    let lines: Vec<String> = ctx.rows.iter().map(row_line).collect();
    let full = details(ctx, true);
    let short = details(ctx, false);
    let table = |n: usize| {
        let mut t = String::from(TABLE_HEAD);
        for l in &lines[..n] {
            t.push_str(l);
        }
        if n < lines.len() {
            let _ = writeln!(
                t,
                "\n_{} more target(s) not shown: this text holds at most {max_chars} characters. \
                 Every target is in `preview.json` of the run._",
                lines.len() - n
            );
        }
        t
    };
    let assemble = |n: usize, d: &str| format!("{MARKER}\n{head}\n{}\n{d}\n{FOOTER}\n", table(n));
    let all = lines.len();
    for (d, is_full) in [(&full, true), (&short, false)] {
        let body = assemble(all, d);
        if body.chars().count() <= max_chars {
            return Rendered {
                body,
                rows_shown: all,
                full_details: is_full,
            };
        }
    }
    // Keep the most serious rows that fit beside the short details.
    let fixed = assemble(0, &short).chars().count();
    let mut used = fixed;
    let mut n = 0;
    while n < all && used + lines[n].chars().count() <= max_chars {
        used += lines[n].chars().count();
        n += 1;
    }
    let body = clamp(assemble(n, &short), max_chars);
    Rendered {
        body,
        rows_shown: n,
        full_details: false,
    }
}

/// The comment posted when the preview did not produce a comparison.
pub(crate) fn failure_comment(run_url: Option<&str>) -> String {
    let link = run_url.map_or_else(
        || "the workflow run".to_string(),
        |u| format!("[the workflow run]({u})"),
    );
    format!(
        "{MARKER}\n### ⚠️ Tier-1 {NOTICE}: the preview did not complete\n\n\
         No comparison with the canonical anchor was made; {link} says why (restore, attestation, \
         preflight or the suite failed before a verdict).\n\n{FOOTER}\n"
    )
}

const TABLE_HEAD: &str = "| Target | Anchor | PR | Change | Verdict | Detects |\n| --- | --- | --- | --- | --- | --- |\n";
const FOOTER: &str = "<sub>A preview writes no history and uploads no evidence: it can never \
                      become the canonical anchor or change the nightly's verdict.</sub>";

fn head(ctx: &Context<'_>) -> String {
    let mut s = verdict_line(ctx.gate);
    s.push_str("\n\n");
    let sha8 = |c: Option<&str>| c.and_then(|c| c.get(..8)).unwrap_or("unknown").to_string();
    let _ = write!(
        s,
        "Commit `{}` against the `{}` anchor `{}` (commit `{}`) · profile `{}`",
        sha8(ctx.commit),
        cell(ctx.branch),
        cell(ctx.anchor_run_id),
        sha8(ctx.anchor_commit),
        cell(ctx.profile),
    );
    if let Some(d) = ctx.devices.first() {
        let more = if ctx.devices.len() > 1 {
            format!(" ×{}", ctx.devices.len())
        } else {
            String::new()
        };
        let _ = write!(s, " on {}{more}", cell(d));
    }
    if let Some(u) = ctx.run_url {
        let _ = write!(s, " · [workflow run]({u})");
    }
    s.push('\n');
    let counts = super::rows::Counts::of(ctx.rows);
    let parts: Vec<String> = [
        (counts.regressions, "regression"),
        (counts.failed, "failed"),
        (counts.missing, "missing"),
        (counts.cleared_by_recheck, "cleared by recheck"),
        (counts.unknown, "unknown"),
        (counts.held_by_floor, "held by floor"),
        (counts.improvements, "improvement"),
        (counts.within_noise, "within noise"),
        (counts.new, "new"),
        (counts.unchanged, "unchanged"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| {
        let plural = if *n != 1 && matches!(*what, "regression" | "improvement") {
            "s"
        } else {
            ""
        };
        format!("{n} {what}{plural}")
    })
    .collect();
    if !parts.is_empty() {
        let _ = writeln!(
            s,
            "\n{} of {} target(s).",
            parts.join(" · "),
            ctx.rows.len()
        );
    }
    // Shown above the table, not folded: the verdict stands on the history test alone.
    if let Some(w) = ctx
        .comparison
        .side_by_side
        .as_ref()
        .and_then(|b| b.warning.as_ref())
    {
        let _ = writeln!(s, "\n> ⚠️ **Warning:** {}", cell(w));
    }
    s
}

fn row_line(r: &TargetRow) -> String {
    format!(
        "| `{}` | {} | {} | {} | {} | {} |\n",
        cell(&r.key),
        side_cell(r.anchor.as_ref()),
        side_cell(r.current.as_ref()),
        change_cell(r.change.as_ref()),
        r.verdict.label(),
        r.detectable_pct.map_or_else(
            || "—".into(),
            |d| format!("{} %", crate::text::fmt_sig(d, 2))
        )
    )
}

fn side_cell(s: Option<&Side>) -> String {
    let Some(s) = s else {
        return "—".into();
    };
    if s.status != crate::aggregate::SUCCEEDED {
        return cell(&s.status);
    }
    match (
        s.speedup,
        s.optimized_ms,
        s.memory_savings_pct,
        s.optimized_mb,
    ) {
        (Some(x), Some(ms), _, _) => format!("{x:.2}× · {}", time(ms)),
        (Some(x), None, _, _) => format!("{x:.2}×"),
        (_, _, Some(p), Some(mb)) => format!("{p:.1} % saved · {mb:.0} MB"),
        (_, _, Some(p), None) => format!("{p:.1} % saved"),
        _ => "—".into(),
    }
}

/// A duration in ms with three significant digits (µs below 0.1 ms).
fn time(ms: f64) -> String {
    if ms < 0.1 {
        return format!("{:.1} µs", ms * 1000.0);
    }
    let decimals = if ms >= 100.0 {
        0
    } else if ms >= 10.0 {
        1
    } else if ms >= 1.0 {
        2
    } else {
        3
    };
    format!("{ms:.decimals$} ms")
}

fn change_cell(c: Option<&Change>) -> String {
    let Some(c) = c else {
        return "—".into();
    };
    if let Some(s) = &c.status {
        return cell(s);
    }
    let Some(d) = c.delta else {
        return "—".into();
    };
    match c.metric {
        "speedup" => format!("{d:+.1} % speedup"),
        "optimized_latency" => format!("{d:+.1} % latency"),
        "memory_savings" => format!("{d:+.1} pts savings"),
        "optimized_memory" => format!("{d:+.1} % memory"),
        other => format!("{d:+.1} {other}"),
    }
}

/// The folded details: why the gate would fail, notes, the detection rule, and (full) the whole
/// regression summary.
fn details(ctx: &Context<'_>, full: bool) -> String {
    let mut s = String::from("<details><summary>Details</summary>\n\n");
    let list = |s: &mut String, title: &str, items: &[String]| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(s, "**{title}**\n");
        let shown = if full {
            items.len()
        } else {
            items.len().min(SHORT_LIST)
        };
        for i in &items[..shown] {
            let _ = writeln!(s, "- {}", one_line(i));
        }
        if shown < items.len() {
            let _ = writeln!(s, "- … {} more in `preview.json`", items.len() - shown);
        }
        s.push('\n');
    };
    list(
        &mut s,
        "Why the nightly gate would fail",
        &ctx.gate.failures,
    );
    list(&mut s, "Notes", ctx.notes);
    if let Some(b) = &ctx.comparison.side_by_side {
        let mut items = vec![b.reason.clone()];
        items.extend(b.checks.iter().map(|c| c.line()));
        list(&mut s, "Side by side with the anchor's code", &items);
    }
    if let Some(d) = &ctx.comparison.detection {
        let _ = writeln!(
            s,
            "Detection: `{}` at α {:.4} per target, run-to-run noise from {} accepted run(s) of \
             the canonical history; rechecks: {}.\n",
            d.method.as_str(),
            d.alpha,
            d.history_run_ids.len(),
            ctx.comparison.rechecks.len()
        );
    }
    let _ = writeln!(s, "Preview run `{}`.\n", cell(ctx.run_id));
    if full {
        s.push_str(&demote(&crate::regress_md::render_titled(
            ctx.comparison,
            SUMMARY_TITLE,
        )));
        s.push('\n');
    } else {
        s.push_str(
            "The full regression summary did not fit in a comment: it is `regression_summary.md` \
             of the run.\n\n",
        );
    }
    s.push_str("</details>\n");
    s
}

/// Headings three levels down (`#` becomes `####`), so a document nested in the comment's
/// details does not outshout its verdict.
fn demote(md: &str) -> String {
    md.lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("###{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Cut `body` at a line boundary so it holds at most `max` characters with a closing note (a
/// last guard; the table and details are sized before this).
fn clamp(body: String, max: usize) -> String {
    if body.chars().count() <= max {
        return body;
    }
    const NOTE: &str = "\n\n_Cut at GitHub's comment size limit._\n";
    let room = max.saturating_sub(NOTE.chars().count());
    let mut out = String::new();
    for line in body.split_inclusive('\n') {
        if out.chars().count() + line.chars().count() > room {
            break;
        }
        out.push_str(line);
    }
    out.push_str(NOTE);
    out
}

#[cfg(test)]
mod tests;
