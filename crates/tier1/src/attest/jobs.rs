//! The jobs of a run attempt as the jobs API lists them, and the pick of this runner's job.

use super::error::RunnerError;
use serde::{Deserialize, Serialize};

/// One job of a jobs API response (only the fields attestation reads; others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Job {
    /// Job id.
    pub(crate) id: u64,
    /// Job name.
    #[serde(default)]
    pub(crate) name: String,
    /// `queued`, `in_progress`, `completed`, ...
    #[serde(default)]
    pub(crate) status: String,
    /// Run attempt the job belongs to.
    #[serde(default)]
    pub(crate) run_attempt: Option<u32>,
    /// The labels the job requested (`runs-on`).
    #[serde(default)]
    pub(crate) labels: Vec<String>,
    /// The runner the job was assigned to (null until assigned).
    #[serde(default)]
    pub(crate) runner_name: Option<String>,
}

/// A jobs API response page: `{total_count, jobs}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobsPage {
    /// Jobs across all pages.
    pub(crate) total_count: u64,
    /// The jobs of this page.
    pub(crate) jobs: Vec<Job>,
}

/// Pick this runner's job: the jobs assigned to `runner_name`, preferring the one in progress.
pub(super) fn find_job<'a>(jobs: &'a [Job], runner_name: &str) -> Result<&'a Job, String> {
    let mine: Vec<&Job> = jobs
        .iter()
        .filter(|j| j.runner_name.as_deref() == Some(runner_name))
        .collect();
    let running: Vec<&Job> = mine
        .iter()
        .copied()
        .filter(|j| j.status == "in_progress")
        .collect();
    match (mine.as_slice(), running.as_slice()) {
        ([], _) => Err(format!("no job of {} assigned to this runner", jobs.len())),
        ([one], _) | (_, [one]) => Ok(one),
        (_, []) => Err(format!(
            "{} jobs on this runner, none in progress",
            mine.len()
        )),
        (_, many) => Err(format!("{} jobs in progress on this runner", many.len())),
    }
}

/// Parse a saved jobs API response (`{total_count, jobs}`) from a file.
pub(crate) fn read_jobs_file(path: &std::path::Path) -> Result<Vec<Job>, RunnerError> {
    Ok(crate::json::read::<JobsPage>(path)?.jobs)
}
