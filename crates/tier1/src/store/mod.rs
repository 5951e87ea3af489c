//! The `ArtifactStore` trait: what restore, publish and promote need from "GitHub Actions artifacts",
//! with two backends, `local` (a directory that models runs and artifacts) and `github` (REST).

pub mod github;
mod local_check;
pub mod local_lease;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::io::Write;

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
    pub expired: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Expiry time.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// The run that uploaded it.
    pub workflow_run_id: u64,
    /// That run's branch, as the artifact record states it.
    #[serde(default)]
    pub workflow_run_head_branch: Option<String>,
    /// That run's commit, as the artifact record states it.
    #[serde(default)]
    pub workflow_run_head_sha: Option<String>,
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
    pub fn of(items: Vec<T>, truncated: bool) -> Self {
        Listing {
            items,
            truncated,
            skipped: Vec::new(),
        }
    }
}

/// A listed record that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// The run the record names, when it names one.
    pub workflow_run_id: Option<u64>,
    /// Why it was left out, naming the field and what was found.
    pub reason: String,
}

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The thing asked for does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was looked up.
        what: String,
    },
    /// The artifact expired (HTTP 410, or the local record says so).
    #[error("artifact {name} (id {id}) has expired")]
    Expired {
        /// Artifact id.
        id: u64,
        /// Artifact name.
        name: String,
    },
    /// The bytes served disagree with the metadata (size cap, length, digest).
    #[error("artifact {name} (id {id}): {message}")]
    Integrity {
        /// Artifact id.
        id: u64,
        /// Artifact name.
        name: String,
        /// What disagreed, with expected and found values.
        message: String,
    },
    /// A remote call failed (after retries, where the call is idempotent).
    #[error("{endpoint}: HTTP {status}: {message}")]
    Remote {
        /// Method and path.
        endpoint: String,
        /// HTTP status, 0 for transport errors.
        status: u16,
        /// GitHub's message or the transport error.
        message: String,
    },
    /// The store's own files are malformed.
    #[error("store {path}: {message}")]
    Corrupt {
        /// File in the store.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The request itself is invalid (bad name, bad id).
    #[error("{0}")]
    Invalid(String),
    /// The downloaded bytes could not be written to their destination (a full disk, ...): the
    /// caller, who knows the destination, names it.
    #[error("writing artifact {name} (id {id}) to its destination: {source}")]
    Sink {
        /// Artifact id.
        id: u64,
        /// Artifact name.
        name: String,
        /// The destination's error.
        source: std::io::Error,
    },
}

impl crate::exit::Classify for StoreError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            StoreError::NotFound { .. } | StoreError::Expired { .. } => Exit::Unavailable,
            StoreError::Integrity { .. } => Exit::Integrity,
            StoreError::Remote { .. } => Exit::Remote,
            StoreError::Corrupt { .. } => Exit::Integrity,
            StoreError::Io { source, .. } | StoreError::Sink { source, .. } => {
                crate::exit::of_io(source)
            }
            StoreError::Invalid(_) => Exit::Invalid,
        }
    }
}

/// The error for a wanted artifact whose record was skipped (the reasons of every skipped record
/// with that name).
pub fn skipped_error(skipped: &[Skipped], run_id: u64, name: &str) -> StoreError {
    let reasons: Vec<String> = skipped
        .iter()
        .filter(|s| s.name == name)
        .map(|s| format!("id {}: {}", s.id, s.reason))
        .collect();
    StoreError::Corrupt {
        path: format!("artifact {name:?} of run {run_id}"),
        message: format!("its record cannot be used: {}", reasons.join("; ")),
    }
}

/// Facts of a finished download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// SHA-256 of the bytes written to the sink.
    pub digest: crate::digest::Digest,
    /// Number of bytes written.
    pub bytes: u64,
}

/// Read access to runs and artifacts: everything restore and the publication jobs need.
/// Implementations are synchronous; the GitHub backend drives its own runtime.
pub trait ArtifactStore {
    /// `owner/name` this store serves.
    fn repository(&self) -> &str;

    /// "Now" for age checks (the local store allows a fixed clock for tests).
    fn now(&self) -> DateTime<Utc>;

    /// Runs of `workflow` (file name, e.g. `tier1-nightly.yml`) on `branch` of every status (in
    /// progress and completed, failed ones included), newest first, at most `cap`; `truncated`
    /// when more may exist. Restore judges a run by its artifacts, not its status: a publishing
    /// job's run is completed only seconds after the job released the publication lock
    /// (docs/github-store.md, "Why runs of every status").
    fn list_runs(
        &self,
        workflow: &str,
        branch: &str,
        cap: usize,
    ) -> Result<Listing<WorkflowRun>, StoreError>;

    /// One run by id.
    fn get_run(&self, run_id: u64) -> Result<WorkflowRun, StoreError>;

    /// Artifacts uploaded by a run (expired ones included, flagged).
    fn list_run_artifacts(&self, run_id: u64) -> Result<Listing<ArtifactMeta>, StoreError>;

    /// Artifacts of the repository with exactly this name, newest first.
    fn find_artifacts_by_name(&self, name: &str) -> Result<Listing<ArtifactMeta>, StoreError>;

    /// The artifact named `name` uploaded by run `run_id`; where a re-run uploaded the name twice,
    /// the one with the highest id. `NotFound` when the run has none.
    fn find_run_artifact(&self, run_id: u64, name: &str) -> Result<ArtifactMeta, StoreError> {
        let listing = self.list_run_artifacts(run_id)?;
        let found = listing
            .items
            .into_iter()
            .filter(|a| a.name == name)
            .max_by_key(|a| a.id);
        match found {
            Some(a) => Ok(a),
            None if listing.skipped.iter().any(|s| s.name == name) => {
                Err(skipped_error(&listing.skipped, run_id, name))
            }
            None if listing.truncated => Err(StoreError::Corrupt {
                path: format!("artifacts of run {run_id}"),
                message: format!("listing is incomplete and does not contain {name:?}"),
            }),
            None => Err(StoreError::NotFound {
                what: format!("artifact {name:?} of run {run_id}"),
            }),
        }
    }

    /// Stream an artifact's bytes into `sink`, hashing as they pass, refusing more than `cap` bytes.
    /// The caller compares the returned digest with the metadata's.
    fn download(
        &self,
        artifact: &ArtifactMeta,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError>;

    /// How an operator establishes the first anchor in this store; restore ends its "no history"
    /// refusal with it.
    fn bootstrap_hint(&self) -> String {
        GITHUB_BOOTSTRAP_HINT.to_string()
    }

    /// The store's own files and directories, for a store on this machine: an output root may
    /// neither lie inside nor contain any of them. Empty for a remote store.
    fn own_paths(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

/// The reference's bootstrap instruction for GitHub Actions.
pub const GITHUB_BOOTSTRAP_HINT: &str = "Run one manual main-branch dispatch with bootstrap_history enabled to establish the canonical B200 anchor.";

pub mod local;

/// What opening a store needs besides its spec.
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// `owner/name` the caller works for.
    pub repository: String,
    /// REST base URL (`GITHUB_API_URL`), for the github store.
    pub api_url: Option<String>,
    /// Fixed clock (`--now`); None: the system clock.
    pub now: Option<DateTime<Utc>>,
}

/// Open a store from its spec: `local:DIR` (an existing local store) or `github`.
pub fn open_store(spec: &str, cfg: &StoreConfig) -> Result<Box<dyn ArtifactStore>, StoreError> {
    if let Some(dir) = spec.strip_prefix("local:") {
        if dir.is_empty() {
            return Err(StoreError::Invalid(
                "store spec `local:` needs a directory: expected `local:DIR`".into(),
            ));
        }
        let mut s = local::LocalStore::open(std::path::Path::new(dir))?;
        if !cfg.repository.is_empty() && cfg.repository != s.repository() {
            return Err(StoreError::Invalid(format!(
                "local store {dir} models repository {}, not {}: omit --repository (and GITHUB_REPOSITORY) to restore it under its own name (docs/local-store.md)",
                s.repository(),
                cfg.repository
            )));
        }
        if let Some(now) = cfg.now {
            s = s.with_now(now);
        }
        return Ok(Box::new(s));
    }
    if spec == "github" {
        let repository = (!cfg.repository.is_empty()).then_some(cfg.repository.as_str());
        let mut s = github::GithubStore::from_env(cfg.api_url.as_deref(), repository)?;
        if let Some(now) = cfg.now {
            s = s.with_now(now);
        }
        return Ok(Box::new(s));
    }
    Err(StoreError::Invalid(format!(
        "unknown store {spec:?}: expected `local:DIR` or `github`"
    )))
}
