//! The records a store lists: workflow runs (the provenance facts restore checks), artifact
//! metadata, listings with the records left out, and the facts of a finished download.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A workflow run as the artifact store sees it (the provenance facts restore checks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowRun {
    /// Run id (> 0).
    pub id: u64,
    /// Numeric workflow id, when the backend knows it.
    #[serde(default)]
    pub workflow_id: Option<u64>,
    /// Workflow file path, `.github/workflows/tier1-nightly.yml` (any `@ref` suffix stripped).
    pub path: String,
    /// Branch the run ran on.
    pub head_branch: String,
    /// 40-hex commit.
    pub head_sha: String,
    /// Triggering event (`schedule`, `workflow_dispatch`, `pull_request`, ...).
    pub event: String,
    /// `completed`, `in_progress`, ...
    pub status: String,
    /// `success`, `failure`, ... (None while running).
    #[serde(default)]
    pub conclusion: Option<String>,
    /// `owner/name` of the base repository.
    pub repository: String,
    /// `owner/name` of the head repository (differs for forks).
    pub head_repository: String,
    /// Attempt number (1-based).
    #[serde(default = "one")]
    pub run_attempt: u32,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// The provenance facts a GitHub run record reports (None where the store has none: the local
    /// store models the operator's own runs). Never serialized: a record tier1 prints or stores
    /// stays as it was.
    #[serde(skip)]
    pub provenance: Option<RunProvenance>,
}

/// What a GitHub run record says about where the run came from: the facts restore's provenance
/// rule ([`crate::restore::provenance`]) judges; the store judges none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunProvenance {
    /// The workflow id the listing asked for (None for a run fetched by id).
    pub(crate) listed_workflow_id: Option<u64>,
    /// The base repository's id.
    pub(crate) repository_id: u64,
    /// The head repository object (None when the record has none: a deleted fork).
    pub(crate) head_repository: Option<RepositoryRef>,
    /// The record's own `head_repository_id` field, when present.
    pub(crate) head_repository_id: Option<u64>,
}

/// What an artifact record says about the run that uploaded it (GitHub: its `workflow_run`, every
/// field optional in the API description): the facts restore's artifact provenance rule
/// ([`crate::restore::provenance::artifact_rejection`]) judges; the store judges none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactProvenance {
    /// Whether the record names its uploading run at all (`workflow_run` present and not null).
    pub(crate) workflow_run_reported: bool,
    /// The uploading run's base repository id, when present.
    pub(crate) repository_id: Option<u64>,
    /// The uploading run's head repository id, when present (differs for a fork's run).
    pub(crate) head_repository_id: Option<u64>,
}

/// The caller's rule for artifact records: why a record's [`ArtifactProvenance`] cannot be
/// trusted, or `None` when it can. A store whose records report provenance applies it to every
/// record before anything else (before the newest-per-name pick); a rejected record is listed as
/// [`Skipped`] with the rule's reason. A store whose records report none (the local store, which
/// models the operator's own runs) has nothing to judge.
pub(crate) type ArtifactRule<'a> = &'a dyn Fn(&ArtifactProvenance) -> Option<String>;

/// A repository as a run record names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepositoryRef {
    /// Repository id.
    pub(crate) id: u64,
    /// `owner/name`.
    pub(crate) full_name: String,
}

fn one() -> u32 {
    1
}

/// An artifact's metadata (never its bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactMeta {
    /// Artifact id (> 0).
    pub id: u64,
    /// Name (`tier1-history-<suffix>`, `tier1-evidence-<suffix>`, ...).
    pub name: String,
    /// Size of the downloadable bytes.
    pub size_in_bytes: u64,
    /// `sha256:<hex>` as reported by the store; None when absent.
    #[serde(default)]
    pub digest: Option<String>,
    /// Whether it expired.
    #[serde(default)]
    pub(crate) expired: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Expiry time.
    #[serde(default)]
    pub(crate) expires_at: Option<DateTime<Utc>>,
    /// The run that uploaded it.
    pub(crate) workflow_run_id: u64,
    /// That run's branch, as the artifact record states it.
    #[serde(default)]
    pub(crate) workflow_run_head_branch: Option<String>,
    /// That run's commit, as the artifact record states it.
    #[serde(default)]
    pub(crate) workflow_run_head_sha: Option<String>,
}

/// A list that may have been cut short by a cap or an incomplete listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing<T> {
    /// What was found.
    pub items: Vec<T>,
    /// True when more may exist than were listed (a cap hit, or pagination stopped early).
    pub truncated: bool,
    /// Listed records left out because they cannot be used or trusted (absent provenance, a null
    /// required field); one bad record never fails the whole listing.
    pub skipped: Vec<Skipped>,
}

impl<T> Listing<T> {
    /// A listing with nothing skipped.
    pub(crate) fn of(items: Vec<T>, truncated: bool) -> Self {
        Listing {
            items,
            truncated,
            skipped: Vec::new(),
        }
    }
}

impl Listing<WorkflowRun> {
    /// The runs a listing keeps, newest first (creation time, then id), at most `cap` of them;
    /// truncated when more were found than `cap` or `more` says the source has more.
    pub(crate) fn newest_runs(mut runs: Vec<WorkflowRun>, cap: usize, more: bool) -> Self {
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let truncated = more || runs.len() > cap;
        runs.truncate(cap);
        Listing::of(runs, truncated)
    }
}

/// A listed record that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub(crate) name: String,
    /// The run the record names, when it names one.
    pub(crate) workflow_run_id: Option<u64>,
    /// Why it was left out, naming the field and what was found.
    pub reason: String,
}

/// Facts of a finished download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// SHA-256 of the bytes written to the sink.
    pub digest: crate::digest::Digest,
    /// Number of bytes written.
    pub bytes: u64,
}
