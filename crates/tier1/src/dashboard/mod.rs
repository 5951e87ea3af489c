//! Reports a person reads: the dashboard (one self-contained HTML page with inline CSS and SVG) and
//! the Markdown summary for `$GITHUB_STEP_SUMMARY`, both built from one [`model::Dashboard`].

pub mod axis;
pub mod changes;
pub mod declines;
pub mod format;
pub mod freshness;
pub mod from_store;
#[cfg(test)]
mod glance_tests;
pub mod html;
pub mod markdown;
pub mod model;
pub mod readiness;
#[cfg(test)]
mod render_tests;
pub mod sealed;
pub mod status;
pub mod svg;
pub mod targets;
#[cfg(test)]
pub(crate) mod testkit;
pub mod trends;

use crate::exit::{Classify, Exit};
use crate::fsx::{StagedDir, write_atomic};
use crate::history::error::HistoryError;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// File name of the HTML page inside the output directory.
pub const HTML_FILE: &str = "index.html";
/// File name of the Markdown summary inside the output directory.
pub const MARKDOWN_FILE: &str = "summary.md";

/// Why a dashboard could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The history root fails validation (the same errors restore reports).
    #[error("invalid history: {0}")]
    History(#[from] HistoryError),
    /// The output directory already holds files.
    #[error("output directory {0} is not empty: expected an absent or empty directory")]
    OutputNotEmpty(String),
    /// The output directory is unusable (a symbolic link, not a directory, inside or around the
    /// history or evidence root).
    #[error("--output: {0}")]
    Output(#[from] crate::fsx::OutputRootError),
    /// No suite can be chosen, or the chosen file is invalid.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// The store could not be read, or its history could not be restored (fail closed).
    #[error("restore: {0}")]
    Restore(#[from] crate::restore::RestoreError),
    /// `--now` is not an RFC 3339 time.
    #[error("--now: expected an RFC 3339 time such as 2026-08-16T00:00:00Z, found {0:?}")]
    BadNow(String),
    /// Writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for ReportError {
    fn exit(&self) -> Exit {
        match self {
            ReportError::History(e) => e.exit(),
            ReportError::BadNow(_) => Exit::Invalid,
            ReportError::Suite(e) => e.exit(),
            ReportError::Restore(e) => e.exit(),
            ReportError::OutputNotEmpty(_) => Exit::Conflict,
            ReportError::Output(e) => e.exit(),
            ReportError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What `tier1-dashboard` was asked to do.
#[derive(Debug, Clone)]
pub struct DashboardOptions {
    /// The history root to read (absent or empty means "no history yet").
    pub history_root: PathBuf,
    /// Output directory (absent or empty); receives `index.html` and `summary.md`.
    pub output: PathBuf,
    /// Where evidence files live locally; references to files found there are shown as local.
    pub evidence_root: Option<PathBuf>,
    /// The clock (anchor age); `None` means the system clock.
    pub now: Option<String>,
    /// `--suite-config` (thresholds and tolerances shown); None: [`crate::suite::Suite::discover`]
    /// from the history's recorded suite under `repo_root`.
    pub suite_config: Option<PathBuf>,
    /// The checkout whose `configs/benchmark_suites/` discovery looks in.
    pub repo_root: PathBuf,
    /// Append the Markdown summary to `$GITHUB_STEP_SUMMARY` (through `gha`) when it is set.
    pub step_summary: bool,
    /// Warn when the latest published run is more than this many days old (default
    /// [`freshness::DEFAULT_STALE_AFTER_DAYS`]).
    pub stale_after_days: i64,
}

/// The machine-readable outcome printed on stdout.
#[derive(Debug, Clone, Serialize)]
pub struct DashboardOutcome {
    /// Release verdict.
    pub ready: bool,
    /// Why not ready (empty when ready).
    pub blockers: Vec<String>,
    /// Non-blocking notes (anchor declines, anchor age).
    pub notes: Vec<String>,
    /// Runs in the history (live and sealed).
    pub total_runs: usize,
    /// Of which sealed in segments.
    pub sealed_runs: usize,
    /// Accepted or eligible runs.
    pub accepted_runs: usize,
    /// Newest run of any kind.
    pub latest_evidence_run_id: Option<String>,
    /// Newest accepted or eligible run.
    pub latest_run_id: Option<String>,
    /// Files written, relative to the output directory.
    pub files: Vec<String>,
}

/// Parse `--now` (or read the clock).
pub fn parse_now(now: Option<&str>) -> Result<DateTime<Utc>, ReportError> {
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
    let suite = crate::suite::Suite::discover(
        opts.suite_config.as_deref(),
        &opts.repo_root,
        Some(&opts.history_root),
    )?
    .suite;
    let mut dash = model::Dashboard::load(&opts.history_root, opts.evidence_root.as_deref(), now)?;
    dash.suite = suite;
    dash.stale_after_days = opts.stale_after_days;
    let verdict = readiness::assess(&dash);
    let page = html::render(&dash, &verdict);
    let md = markdown::render(&dash, &verdict);

    let stage = StagedDir::new(&opts.output).map_err(io_err(&opts.output))?;
    write_readable(&stage.path().join(HTML_FILE), page.as_bytes())?;
    write_readable(&stage.path().join(MARKDOWN_FILE), md.as_bytes())?;
    stage.commit().map_err(io_err(&opts.output))?;

    if opts.step_summary {
        crate::gha::step_summary(&md).map_err(|source| ReportError::Io {
            path: "$GITHUB_STEP_SUMMARY".into(),
            source,
        })?;
    }
    Ok(DashboardOutcome {
        ready: verdict.ready,
        blockers: verdict.blockers.iter().map(|b| b.to_string()).collect(),
        notes: verdict.notes.iter().map(|n| n.to_string()).collect(),
        total_runs: dash.total_runs(),
        sealed_runs: dash.sealed.len(),
        accepted_runs: dash.accepted_runs(),
        latest_evidence_run_id: dash.latest_evidence().map(|r| r.row.run_id.clone()),
        latest_run_id: dash.latest_accepted().map(|r| r.row.run_id.clone()),
        files: vec![HTML_FILE.into(), MARKDOWN_FILE.into()],
    })
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
