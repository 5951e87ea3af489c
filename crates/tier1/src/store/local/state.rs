//! What `store.json` holds: [`StoreState`], its [`StoredArtifact`]s, the [`NewRun`] a run is
//! created from, and the layout's version and limits.

use crate::store::WorkflowRun;
use crate::store::local_check::Counters;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Version of the `store.json` layout.
pub(crate) const STORE_SCHEMA_VERSION: u32 = 1;
/// Longest retention GitHub allows (private repositories), in days.
pub(crate) const MAX_RETENTION_DAYS: u32 = 400;

/// One stored artifact as `store.json` records it. `expired` is a forced flag (deleted); the
/// effective state also expires when the clock reaches `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredArtifact {
    /// Artifact id (> 0); its bytes live in `artifacts/<id>.bin`.
    pub id: u64,
    /// Artifact name, unique within its run.
    pub name: String,
    /// The run that uploaded it.
    pub workflow_run_id: u64,
    /// Size of the stored bytes.
    pub size_in_bytes: u64,
    /// `sha256:<hex>` of the stored bytes as recorded at upload (tests may tamper with it).
    pub digest: Option<String>,
    /// Upload time.
    pub created_at: DateTime<Utc>,
    /// Expiry time (`created_at` + retention days).
    pub expires_at: DateTime<Utc>,
    /// Forced expiry (as if deleted); expiry by clock is derived, not stored.
    #[serde(default)]
    pub expired: bool,
}

/// The whole of `store.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreState {
    /// [`STORE_SCHEMA_VERSION`].
    pub(crate) schema_version: u32,
    /// `owner/name` this store models; the default repository of new runs.
    pub repository: String,
    /// Next run id to hand out.
    pub(crate) next_run_id: u64,
    /// Next artifact id to hand out.
    pub(crate) next_artifact_id: u64,
    /// Every run, in creation order.
    pub runs: Vec<WorkflowRun>,
    /// Every artifact, in upload order.
    pub artifacts: Vec<StoredArtifact>,
}

impl StoreState {
    /// The counters and the highest recorded ids ([`local_check`](crate::store::local_check) compares
    /// them).
    pub(super) fn counters(&self) -> Counters<'_> {
        Counters {
            next_run_id: self.next_run_id,
            next_artifact_id: self.next_artifact_id,
            max_run_id: self.runs.iter().map(|r| r.id).max(),
            max_artifact: self
                .artifacts
                .iter()
                .max_by_key(|a| a.id)
                .map(|a| (a.id, a.name.as_str())),
        }
    }

    pub(super) fn empty(repository: &str) -> Self {
        StoreState {
            schema_version: STORE_SCHEMA_VERSION,
            repository: repository.to_string(),
            next_run_id: 1,
            next_artifact_id: 1,
            runs: Vec::new(),
            artifacts: Vec::new(),
        }
    }
}

/// What `create_run` needs; the store assigns the id, status and creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// Workflow file path, e.g. `.github/workflows/tier1-nightly.yml`.
    pub workflow_path: String,
    /// Branch.
    pub(crate) head_branch: String,
    /// 40-hex commit.
    pub(crate) head_sha: String,
    /// Triggering event (`schedule`, `workflow_dispatch`, ...).
    pub event: String,
    /// Base repository; None: the store's repository.
    pub(crate) repository: Option<String>,
    /// Head repository; None: the base repository.
    pub head_repository: Option<String>,
    /// Attempt number (1-based).
    pub(crate) run_attempt: u32,
}

impl NewRun {
    /// A first attempt of `.github/workflows/<workflow>` on `branch` at `sha` (event `schedule`).
    pub fn new(workflow: &str, branch: &str, sha: &str) -> Self {
        NewRun {
            workflow_path: format!(".github/workflows/{workflow}"),
            head_branch: branch.to_string(),
            head_sha: sha.to_string(),
            event: "schedule".to_string(),
            repository: None,
            head_repository: None,
            run_attempt: 1,
        }
    }
}
