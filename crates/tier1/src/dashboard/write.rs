//! The dashboard of a history root written into its output directory, and the step summary.

use super::error::io_err;
use super::{DashboardOptions, DashboardOutcome, ReportError, html, markdown, model, readiness};
use crate::fsx::{StagedDir, write_atomic};
use chrono::{DateTime, Utc};
use std::path::Path;

/// File name of the HTML page inside the output directory.
pub(crate) const HTML_FILE: &str = "index.html";
/// File name of the Markdown summary inside the output directory.
pub(crate) const MARKDOWN_FILE: &str = "summary.md";
/// Parse `--now` (or read the clock).
pub(crate) fn parse_now(now: Option<&str>) -> Result<DateTime<Utc>, ReportError> {
    match now {
        None => Ok(Utc::now()),
        Some(s) => DateTime::parse_from_rfc3339(s.trim())
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| ReportError::BadNow(s.to_string())),
    }
}

/// Build the dashboard of a history root and write `index.html` and `summary.md` into a staged
/// copy of the output directory, renamed into place; then append the summary to the step summary.
pub fn write_dashboard(opts: &DashboardOptions) -> Result<DashboardOutcome, ReportError> {
    let now = parse_now(opts.now.as_deref())?;
    let mut inputs = vec![("history root", opts.history_root.as_path())];
    if let Some(e) = &opts.evidence_root {
        inputs.push(("evidence root", e.as_path()));
    }
    crate::fsx::check_output_root(&opts.output, &inputs).map_err(|e| match e {
        crate::fsx::OutputRootError::NotEmpty { path } => ReportError::OutputNotEmpty(path),
        other => ReportError::Output(other),
    })?;
    crate::fsx::stale::tidy_beside(&[&opts.output]);
    let Rendered {
        dash,
        verdict,
        html: page,
        md,
    } = render_root(opts, &opts.history_root, now)?;
    write_files(opts, &page, &md)?;
    Ok(DashboardOutcome {
        ready: verdict.ready,
        blockers: verdict.blockers.iter().map(|b| b.to_string()).collect(),
        notes: verdict.notes.iter().map(|n| n.to_string()).collect(),
        total_runs: dash.total_runs(),
        sealed_runs: dash.sealed_runs(),
        accepted_runs: dash.accepted_runs(),
        latest_evidence_run_id: dash.latest_evidence().map(|r| r.row.run_id.clone()),
        latest_run_id: dash.latest_accepted().map(|r| r.row.run_id.clone()),
        files: vec![HTML_FILE.into(), MARKDOWN_FILE.into()],
    })
}

/// One history root's dashboard: the model, the verdict, the page and the Markdown summary.
pub(crate) struct Rendered {
    /// The model.
    pub(crate) dash: model::Dashboard,
    /// The release verdict.
    pub(crate) verdict: readiness::Verdict,
    /// The HTML page.
    pub(crate) html: String,
    /// The Markdown summary.
    pub(crate) md: String,
}

/// Render the history at `root` as `opts` asks.
pub(crate) fn render_root(
    opts: &DashboardOptions,
    root: &Path,
    now: DateTime<Utc>,
) -> Result<Rendered, ReportError> {
    let suite =
        crate::suite::Suite::discover(opts.suite_config.as_deref(), &opts.repo_root, Some(root))?
            .suite;
    let mut dash = model::Dashboard::load(root, opts.evidence_root.as_deref(), now)?;
    dash.suite = suite;
    dash.stale_after_days = opts.stale_after_days;
    let verdict = readiness::assess(&dash);
    let html = html::render(&dash, &verdict);
    let md = markdown::render(&dash, &verdict);
    Ok(Rendered {
        dash,
        verdict,
        html,
        md,
    })
}

/// Write `index.html` and `summary.md` into a staged output directory renamed into place, then
/// append the summary to the step summary when asked.
pub(crate) fn write_files(
    opts: &DashboardOptions,
    page: &str,
    md: &str,
) -> Result<(), ReportError> {
    let stage = StagedDir::new(&opts.output).map_err(io_err(&opts.output))?;
    write_readable(&stage.path().join(HTML_FILE), page.as_bytes())?;
    write_readable(&stage.path().join(MARKDOWN_FILE), md.as_bytes())?;
    stage.commit().map_err(io_err(&opts.output))?;
    if opts.step_summary {
        crate::gha::step_summary(md).map_err(|source| ReportError::Io {
            path: "$GITHUB_STEP_SUMMARY".into(),
            source,
        })?;
    }
    Ok(())
}

/// Write a report file atomically, readable by everyone (a static page is meant to be served).
fn write_readable(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    write_atomic(path, bytes).map_err(io_err(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
            .map_err(io_err(path))?;
    }
    Ok(())
}
