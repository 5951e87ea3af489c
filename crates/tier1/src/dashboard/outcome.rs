//! The machine-readable outcome printed on stdout.

use serde::Serialize;

/// The machine-readable outcome printed on stdout.
#[derive(Debug, Clone, Serialize)]
pub struct DashboardOutcome {
    /// Release verdict.
    pub(crate) ready: bool,
    /// Why not ready (empty when ready).
    pub(crate) blockers: Vec<String>,
    /// Non-blocking notes (anchor declines, anchor age).
    pub(crate) notes: Vec<String>,
    /// Runs in the history (live and sealed).
    pub(crate) total_runs: usize,
    /// Of which sealed in segments.
    pub(crate) sealed_runs: usize,
    /// Accepted or eligible runs.
    pub(crate) accepted_runs: usize,
    /// Newest run of any kind.
    pub(crate) latest_evidence_run_id: Option<String>,
    /// Newest accepted or eligible run.
    pub(crate) latest_run_id: Option<String>,
    /// Files written, relative to the output directory.
    pub(crate) files: Vec<String>,
}
