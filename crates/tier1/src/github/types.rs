//! Serde types of the GitHub REST responses tier1 reads (workflow, run, artifact, job, approval),
//! with nullable fields as `Option` and the fields octocrab's models lack (`digest`, `path`,
//! `run_attempt`, `head_repository_id`).

use chrono::{DateTime, Utc};
use serde::Deserialize;

/// `GET /repos/{o}/{r}/actions/workflows/{workflow_id}`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiWorkflow {
    /// Numeric workflow id.
    pub(crate) id: u64,
}

/// The `minimal-repository` object embedded in a run.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiRepository {
    /// Repository id.
    pub(crate) id: u64,
    /// `owner/name`.
    pub(crate) full_name: String,
}

/// A workflow run (the fields provenance checks need).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiRun {
    /// Run id.
    pub(crate) id: u64,
    /// Parent workflow id.
    pub(crate) workflow_id: u64,
    /// `.github/workflows/<file>` with an optional `@ref` suffix (spec examples vary).
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Nullable per the spec.
    #[serde(default)]
    pub(crate) head_branch: Option<String>,
    /// Head commit.
    pub(crate) head_sha: String,
    /// Triggering event.
    pub(crate) event: String,
    /// `completed`, `in_progress`, ... (nullable).
    #[serde(default)]
    pub(crate) status: Option<String>,
    /// `success`, `failure`, ... (nullable).
    #[serde(default)]
    pub(crate) conclusion: Option<String>,
    /// Attempt number; not in the spec's `required`.
    #[serde(default)]
    pub(crate) run_attempt: Option<u32>,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Base repository.
    pub(crate) repository: ApiRepository,
    /// Head repository (a fork for fork pull requests; nullable when deleted).
    #[serde(default)]
    pub(crate) head_repository: Option<ApiRepository>,
    /// Head repository id.
    #[serde(default)]
    pub(crate) head_repository_id: Option<u64>,
}

/// `{ total_count, workflow_runs: [...] }`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiRunsPage {
    /// Total across pages.
    pub(crate) total_count: u64,
    /// This page.
    pub(crate) workflow_runs: Vec<ApiRun>,
}

/// The `workflow_run` object embedded in an artifact (all fields optional in the spec).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ApiArtifactRun {
    /// Run id.
    #[serde(default)]
    pub(crate) id: Option<u64>,
    /// Base repository id.
    #[serde(default)]
    pub(crate) repository_id: Option<u64>,
    /// Head repository id.
    #[serde(default)]
    pub(crate) head_repository_id: Option<u64>,
    /// Branch.
    #[serde(default)]
    pub(crate) head_branch: Option<String>,
    /// Commit.
    #[serde(default)]
    pub(crate) head_sha: Option<String>,
}

/// An artifact.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiArtifact {
    /// Artifact id.
    pub(crate) id: u64,
    /// Name.
    pub(crate) name: String,
    /// Size of the stored bytes.
    pub(crate) size_in_bytes: u64,
    /// Whether it expired.
    pub(crate) expired: bool,
    /// `sha256:<hex>`; null for artifacts older than upload-artifact v4.
    #[serde(default)]
    pub(crate) digest: Option<String>,
    /// Nullable per the spec.
    #[serde(default)]
    pub(crate) created_at: Option<DateTime<Utc>>,
    /// Nullable per the spec.
    #[serde(default)]
    pub(crate) expires_at: Option<DateTime<Utc>>,
    /// The uploading run.
    #[serde(default)]
    pub(crate) workflow_run: Option<ApiArtifactRun>,
}

/// `{ total_count, artifacts: [...] }`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiArtifactsPage {
    /// Total across pages.
    pub(crate) total_count: u64,
    /// This page.
    pub(crate) artifacts: Vec<ApiArtifact>,
}

/// A job of a run attempt (where it ran).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct ApiJob {
    /// Job id.
    pub(crate) id: u64,
    /// Run id.
    pub(crate) run_id: u64,
    /// Attempt.
    #[serde(default)]
    pub(crate) run_attempt: Option<u32>,
    /// Job name.
    pub(crate) name: String,
    /// `queued`, `in_progress`, `completed`, ... (kept as text: the spec has values octocrab lacks).
    pub(crate) status: String,
    /// Nullable.
    #[serde(default)]
    pub(crate) conclusion: Option<String>,
    /// The `runs-on` labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Nullable until assigned.
    #[serde(default)]
    pub(crate) runner_id: Option<u64>,
    /// Nullable until assigned.
    #[serde(default)]
    pub(crate) runner_name: Option<String>,
    /// Nullable until assigned.
    #[serde(default)]
    pub(crate) runner_group_name: Option<String>,
}

/// `{ total_count, jobs: [...] }`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiJobsPage {
    /// Total across pages.
    pub(crate) total_count: u64,
    /// This page.
    pub(crate) jobs: Vec<ApiJob>,
}

/// The `simple-user` fields an approval record keeps.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq)]
pub(crate) struct ApiUser {
    /// Login.
    pub(crate) login: String,
    /// Numeric id.
    pub(crate) id: u64,
}

/// An environment named in an approval.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiApprovalEnvironment {
    /// Environment name.
    #[serde(default)]
    pub(crate) name: Option<String>,
}

/// One element of `GET …/runs/{id}/approvals` (an array, not paginated).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiApproval {
    /// Environments the review covered.
    #[serde(default)]
    pub(crate) environments: Vec<ApiApprovalEnvironment>,
    /// `approved`, `rejected` or `pending`.
    pub(crate) state: String,
    /// The reviewer.
    pub(crate) user: ApiUser,
    /// The reviewer's comment.
    #[serde(default)]
    pub(crate) comment: Option<String>,
}

/// The error body GitHub sends: `{ "message": "...", "documentation_url": "..." }`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiErrorBody {
    /// GitHub's message.
    pub(crate) message: String,
}

#[cfg(test)]
mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_with_null_branch_and_no_attempt_parses() {
        let v = serde_json::json!({
            "id": 5, "workflow_id": 7, "head_branch": null, "head_sha": "a", "event": "push",
            "status": "completed", "conclusion": null, "created_at": "2026-01-01T00:00:00Z",
            "repository": {"id": 1, "full_name": "o/r"}, "head_repository": null,
            "extra": {"ignored": true}
        });
        let r: ApiRun = serde_json::from_value(v).unwrap();
        assert_eq!((r.head_branch, r.run_attempt, r.path), (None, None, None));
    }

    #[test]
    fn artifact_digest_and_nullable_times() {
        let v = serde_json::json!({
            "id": 9, "node_id": "x", "name": "a", "size_in_bytes": 3, "url": "u",
            "archive_download_url": "u/zip", "expired": false, "created_at": null,
            "expires_at": null, "updated_at": null, "digest": "sha256:00",
            "workflow_run": {"id": 5}
        });
        let a: ApiArtifact = serde_json::from_value(v).unwrap();
        assert_eq!(a.digest.as_deref(), Some("sha256:00"));
        assert!(a.created_at.is_none());
        assert_eq!(a.workflow_run.unwrap().id, Some(5));
    }
}
