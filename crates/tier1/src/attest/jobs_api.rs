//! The one live call attestation makes: the jobs of this run attempt
//! (`GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}/jobs`, every page), through the shared GitHub
//! client, so retries, pagination, headers and error reporting follow one policy.

use super::{Job, RunnerError};
use crate::github::{GithubConfig, Token};
use crate::store::github::GithubStore;

/// Where and as whom to call the API.
#[derive(Debug, Clone)]
pub struct JobsRequest {
    /// `GITHUB_API_URL` (e.g. `https://api.github.com`), without a trailing slash.
    pub api_url: String,
    /// `owner/name`.
    pub repository: String,
    /// `GITHUB_RUN_ID`.
    pub run_id: u64,
    /// `GITHUB_RUN_ATTEMPT`.
    pub attempt: u32,
    /// `GITHUB_TOKEN` (needs `actions: read`).
    pub token: String,
}

/// Fetch every job of the attempt; an incomplete listing is an error, never a partial answer.
pub(crate) fn fetch(req: &JobsRequest) -> Result<Vec<Job>, RunnerError> {
    let endpoint = format!(
        "{}/repos/{}/actions/runs/{}/attempts/{}/jobs",
        req.api_url.trim_end_matches('/'),
        req.repository,
        req.run_id,
        req.attempt
    );
    let remote = |message: String| RunnerError::Remote {
        url: endpoint.clone(),
        message,
    };
    let cfg = GithubConfig::new(&req.api_url, &req.repository, Token::new(req.token.clone()))
        .map_err(|e| remote(e.to_string()))?;
    let store = GithubStore::new(cfg).map_err(|e| remote(e.to_string()))?;
    let jobs = store
        .attempt_jobs(req.run_id, req.attempt)
        .map_err(|e| remote(e.to_string()))?;
    Ok(jobs
        .into_iter()
        .map(|j| Job {
            id: j.id,
            name: j.name,
            status: j.status,
            run_attempt: j.run_attempt,
            labels: j.labels,
            runner_name: j.runner_name,
        })
        .collect())
}
