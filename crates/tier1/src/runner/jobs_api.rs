//! The one live call attestation makes: the jobs of this run attempt, from the GitHub REST API
//! (`GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}/jobs`), every page. Minimal and isolated so
//! the full GitHub client can replace it.

use super::{Job, JobsPage, RunnerError};

/// Jobs per page requested (the API maximum).
const PER_PAGE: u32 = 100;
/// Pages read before declaring the listing unbounded.
const MAX_PAGES: u32 = 50;

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

/// Fetch every job of the attempt (blocking: runs its own single-threaded runtime).
pub fn fetch(req: &JobsRequest) -> Result<Vec<Job>, RunnerError> {
    let base = format!(
        "{}/repos/{}/actions/runs/{}/attempts/{}/jobs",
        req.api_url.trim_end_matches('/'),
        req.repository,
        req.run_id,
        req.attempt
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunnerError::Remote {
            url: base.clone(),
            message: format!("could not start a runtime: {e}"),
        })?;
    rt.block_on(fetch_all(&base, &req.token))
}

async fn fetch_all(base: &str, token: &str) -> Result<Vec<Job>, RunnerError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let remote = |url: &str, message: String| RunnerError::Remote {
        url: url.to_string(),
        message,
    };
    let client = reqwest::Client::builder()
        .user_agent(concat!("tier1-attest/", env!("CARGO_PKG_VERSION")))
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| remote(base, e.to_string()))?;
    let mut jobs = Vec::new();
    for page in 1..=MAX_PAGES {
        let url = format!("{base}?per_page={PER_PAGE}&page={page}");
        let resp = client
            .get(&url)
            .bearer_auth(token)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .send()
            .await
            .map_err(|e| remote(&url, e.to_string()))?;
        let status = resp.status();
        let body = resp
            .bytes()
            .await
            .map_err(|e| remote(&url, e.to_string()))?;
        if !status.is_success() {
            let excerpt: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            return Err(remote(
                &url,
                format!("expected 200, found {status}: {excerpt}"),
            ));
        }
        let parsed: JobsPage = serde_json::from_slice(&body).map_err(|e| RunnerError::Jobs {
            source_name: url.clone(),
            message: e.to_string(),
        })?;
        let empty = parsed.jobs.is_empty();
        jobs.extend(parsed.jobs);
        if empty || jobs.len() as u64 >= parsed.total_count {
            return Ok(jobs);
        }
    }
    Err(remote(
        base,
        format!("expected the listing to end within {MAX_PAGES} pages, found more"),
    ))
}
