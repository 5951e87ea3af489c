//! The machine-readable outcome printed on stdout.

use serde::Serialize;

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
