//! What `tier1-dashboard` was asked to do.

use std::path::PathBuf;

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
    /// [`freshness::DEFAULT_STALE_AFTER_DAYS`](super::freshness::DEFAULT_STALE_AFTER_DAYS)).
    pub stale_after_days: i64,
}
