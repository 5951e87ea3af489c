//! One dashboard of several runner classes side by side (docs/sharding.md §1): each class's
//! history rendered as its own dashboard (its verdict, cards, targets, trends, changes and runs,
//! every figure naming the class), one section per class under an overview table, in one page and
//! one Markdown summary. A history whose index names another class than the one it is shown as is
//! refused.

use super::write::{Rendered, render_root, write_files};
use super::{DashboardOptions, ReportError, parse_now};
use crate::history::HistoryError;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A runner class's history to show.
#[derive(Debug, Clone)]
pub struct ClassHistory {
    /// The class.
    pub class: String,
    /// Its history root (absent or empty: "no history yet").
    pub history_root: PathBuf,
}

/// One class's line of the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct ClassOutcome {
    /// The class.
    pub(crate) class: String,
    /// Its release verdict.
    pub(crate) ready: bool,
    /// Why not.
    pub(crate) blockers: Vec<String>,
    /// Its runs.
    pub(crate) total_runs: usize,
    /// Its newest run.
    pub(crate) latest_evidence_run_id: Option<String>,
    /// Its anchor.
    pub(crate) anchor_run_id: Option<String>,
}

/// What a classes dashboard printed.
#[derive(Debug, Clone, Serialize)]
pub struct ClassesOutcome {
    /// Every class ready.
    pub(crate) ready: bool,
    /// Per class.
    pub(crate) classes: Vec<ClassOutcome>,
    /// Files written, relative to the output directory.
    pub(crate) files: Vec<String>,
}

/// A malformed request of the classes dashboard (exit 3).
pub fn usage(message: String) -> ReportError {
    ReportError::Suite(crate::suite::SuiteError::Choice { message })
}

/// The `<main>` of a rendered page, its element ids prefixed with `<class>-` (unique in the page).
fn main_of(page: &str, class: &str) -> String {
    let start = page.find("<main>").map_or(0, |i| i + "<main>".len());
    let end = page.rfind("</main>").unwrap_or(page.len());
    page[start..end].replace(" id=\"", &format!(" id=\"{class}-"))
}

/// Write the dashboard of `classes` side by side into `opts.output`: the output root checked,
/// each class's history rendered, then one page and one summary of the overview table and one
/// section per class.
pub fn write_classes_dashboard(
    opts: &DashboardOptions,
    classes: &[ClassHistory],
) -> Result<ClassesOutcome, ReportError> {
    let now = parse_now(opts.now.as_deref())?;
    check_output_root(opts, classes)?;
    let mut rendered: Vec<(&ClassHistory, Rendered)> = Vec::new();
    for c in classes {
        rendered.push((c, render_class(opts, c, now)?));
    }
    let names: Vec<&str> = classes.iter().map(|c| c.class.as_str()).collect();
    let mut page = page_head(&names);
    page.push_str(
        "<section id=\"classes\"><h2>Runner classes</h2><table><thead><tr><th>Class</th><th>Verdict</th><th>Runs</th><th>Latest run</th><th>Anchor</th></tr></thead><tbody>",
    );
    let mut md = String::from(
        "# Benchmark history by runner class\n\n| Class | Verdict | Runs | Latest run | Anchor |\n|---|---|---|---|---|\n",
    );
    let outcomes: Vec<ClassOutcome> = rendered
        .iter()
        .map(|(c, r)| overview_row(&mut page, &mut md, c, r))
        .collect();
    page.push_str("</tbody></table></section>\n");
    for (c, r) in &rendered {
        let _ = write!(
            page,
            "<section id=\"class-{0}\" class=\"runner-class\"><h2>Runner class {0}</h2>\n{1}</section>\n",
            super::format::esc(&c.class),
            main_of(&r.html, &c.class)
        );
        let _ = write!(md, "\n## Runner class {}\n\n{}", c.class, r.md);
    }
    page.push_str("</main>\n<footer class=\"muted\">tier1-dashboard · static page, no scripts, no network requests</footer>\n</body>\n</html>\n");
    write_files(opts, &page, &md)?;
    Ok(ClassesOutcome {
        ready: outcomes.iter().all(|o| o.ready),
        classes: outcomes,
        files: vec![
            super::write::HTML_FILE.into(),
            super::write::MARKDOWN_FILE.into(),
        ],
    })
}

/// Refuses an output root that is not empty or overlaps a class's history root.
fn check_output_root(opts: &DashboardOptions, classes: &[ClassHistory]) -> Result<(), ReportError> {
    let inputs: Vec<(&str, &std::path::Path)> = classes
        .iter()
        .map(|c| ("history root", c.history_root.as_path()))
        .collect();
    crate::fsx::check_output_root(&opts.output, &inputs).map_err(|e| match e {
        crate::fsx::OutputRootError::NotEmpty { path } => ReportError::OutputNotEmpty(path),
        other => ReportError::Output(other),
    })
}

/// Class `c`'s history rendered as its own dashboard, refused when its index names another class
/// (an empty history, without an index yet, is rendered as the class's).
fn render_class(
    opts: &DashboardOptions,
    c: &ClassHistory,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Rendered, ReportError> {
    let mut r = render_root(opts, &c.history_root, now)?;
    if let Some(found) = r.dash.runner_class.as_deref().filter(|f| *f != c.class) {
        return Err(ReportError::History(HistoryError::integrity(
            c.history_root.join("index.json").display().to_string(),
            format!(
                "runner_class: expected {:?} (the class shown), found {found:?}",
                c.class
            ),
        )));
    }
    if r.dash.runner_class.is_none() {
        // A class's empty history (no index yet) is still that class's.
        r.dash.runner_class = Some(c.class.clone());
        r.html = super::html::render(&r.dash, &r.verdict);
        r.md = super::markdown::render(&r.dash, &r.verdict);
    }
    Ok(r)
}

/// The page's head and heading, naming the classes, up to the opening of `<main>`.
fn page_head(names: &[&str]) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>Benchmark history by runner class</title>\n<style>{}</style>\n</head>\n<body>\n\
         <header><h1>Benchmark history by runner class: {}</h1></header>\n<main>\n",
        super::html::CSS,
        super::format::esc(&names.join(", "))
    );
    page
}

/// Class `c`'s row of the overview table, in the page and the summary, and its outcome.
fn overview_row(
    page: &mut String,
    md: &mut String,
    c: &ClassHistory,
    r: &Rendered,
) -> ClassOutcome {
    let latest = r.dash.latest_evidence().map(|v| v.row.run_id.clone());
    let anchor = r.dash.anchor_run().map(|v| v.row.run_id.clone());
    let verdict = if r.verdict.ready {
        "ready"
    } else {
        "not ready"
    };
    let esc = super::format::esc;
    let _ = write!(
        page,
        "<tr><td><a href=\"#class-{0}\">{0}</a></td><td>{1}</td><td>{2}</td><td><code>{3}</code></td><td><code>{4}</code></td></tr>",
        esc(&c.class),
        verdict,
        r.dash.total_runs(),
        esc(latest.as_deref().unwrap_or("–")),
        esc(anchor.as_deref().unwrap_or("–"))
    );
    let _ = writeln!(
        md,
        "| {} | {verdict} | {} | `{}` | `{}` |",
        c.class,
        r.dash.total_runs(),
        latest.as_deref().unwrap_or("–"),
        anchor.as_deref().unwrap_or("–")
    );
    ClassOutcome {
        class: c.class.clone(),
        ready: r.verdict.ready,
        blockers: r.verdict.blockers.iter().map(|b| b.to_string()).collect(),
        total_runs: r.dash.total_runs(),
        latest_evidence_run_id: latest,
        anchor_run_id: anchor,
    }
}
