//! What the local main job's chains share ([`single`](super::single) for one job,
//! [`sharded`](super::sharded)): the plan they work with, the error of a failed step, the
//! restore of live history and the verified upload.

use super::{NightlyRequest, RETENTION_DAYS};
use crate::evidence::EvidenceError;
use crate::evidence::git::GitInfo;
use crate::exit::{Classify, Exit};
use crate::history_check::restorable::PackageRefused;
use crate::promote;
use crate::publish;
use crate::restore::{self, RestoreOptions, RestoreOutcome};
use crate::run;
use crate::store::local::LocalStore;
use crate::store::{ArtifactMeta, ArtifactStore, StoreError, WorkflowRun};
use crate::suite::RunNames;
use serde_json::Value;
use std::path::Path;

/// A step of the chain that failed; the chain stops there, as a failed job step does.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JobError {
    /// Restore refused.
    #[error("restore: {0}")]
    Restore(#[from] restore::RestoreError),
    /// The run could not start or complete.
    #[error("run: {0}")]
    Run(#[from] run::RunError),
    /// Bind or pack refused.
    #[error("evidence: {0}")]
    Evidence(#[from] EvidenceError),
    /// The store refused an upload or download.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// Publication refused.
    #[error("publish: {0}")]
    Publish(#[from] publish::PublishError),
    /// Promotion refused.
    #[error("promote: {0}")]
    Promote(#[from] promote::PromoteError),
    /// A sharded night's plan or combine step refused.
    #[error("shard: {0}")]
    Shard(#[from] crate::shard::ShardError),
    /// The package to upload is one restore would refuse (publish and promote check it too).
    #[error("publish: {0}")]
    Package(#[from] PackageRefused),
    /// The published history's sealed segments could not be stored in the vault (the history is
    /// published; its segments stay in the package until a later vault step stores them).
    #[error("vault: the history was published, its sealed segments stay in the package: {0}")]
    Vault(#[from] crate::vault::VaultError),
    /// The uploaded evidence is not what was packed.
    #[error("verify: uploaded evidence {name} has digest {found}, packed {expected}")]
    Verify {
        /// Artifact name.
        name: String,
        /// Packed digest.
        expected: String,
        /// Digest the store reports.
        found: String,
    },
    /// The publication job found no canonical history to merge into.
    #[error(
        "publish: no canonical history exists yet; establish the first anchor with --bootstrap --accept --note"
    )]
    NoCanonicalHistory,
    /// SIGINT or SIGTERM arrived between two steps.
    #[error("{0}")]
    Cancelled(crate::process::Cancelled),
    /// A concurrency group could not be taken (or the job was cancelled while queued on it).
    #[error("{0}")]
    Lock(#[from] super::locks::LockError),
    /// The published history could not be copied to `--history-out` (the history is published;
    /// the previous copy, if any, is unchanged).
    #[error(
        "--history-out {path}: the history was published but could not be copied here: {source}"
    )]
    HistoryOut {
        /// The destination.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Local I/O of the job's work directory.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

impl Classify for JobError {
    fn exit(&self) -> Exit {
        match self {
            JobError::Restore(e) => e.exit(),
            JobError::Run(e) => e.exit(),
            JobError::Evidence(e) => e.exit(),
            JobError::Store(e) => e.exit(),
            JobError::Publish(e) => e.exit(),
            JobError::Promote(e) => e.exit(),
            JobError::Shard(e) => e.exit(),
            JobError::Package(e) => e.exit(),
            JobError::Vault(e) => e.exit(),
            JobError::Verify { .. } => Exit::Integrity,
            JobError::NoCanonicalHistory => Exit::Unavailable,
            JobError::Io { source, .. } => crate::exit::of_io(source),
            JobError::Cancelled(_) => Exit::Cancelled,
            JobError::Lock(super::locks::LockError::Cancelled(..)) => Exit::Cancelled,
            JobError::Lock(super::locks::LockError::Store(e)) => e.exit(),
            JobError::HistoryOut { source, .. } => match source.kind() {
                std::io::ErrorKind::AlreadyExists => Exit::Conflict,
                _ => crate::exit::of_io(source),
            },
        }
    }
}

/// The I/O error of `path`.
pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Stop between steps when a cancellation was requested, as a cancelled job does.
pub(super) fn checkpoint() -> Result<(), JobError> {
    crate::process::requested().map_or(Ok(()), |c| Err(JobError::Cancelled(c)))
}

/// A value as JSON for the outcome (none when it cannot be).
pub(super) fn json<T: serde::Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok()
}

/// Restore the class's live history into `dest`, as the workflow's restore steps do.
pub(super) fn restore_into(
    plan: &Plan<'_>,
    dest: &Path,
    renewal: bool,
    bootstrap: bool,
) -> Result<RestoreOutcome, JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        class,
        ..
    } = *plan;
    let opts = RestoreOptions {
        repository: store.repository().to_string(),
        workflow: names.workflow.clone(),
        branch: req.branch.clone(),
        current_run_id: Some(wf.id),
        destination: dest.to_path_buf(),
        allow_bootstrap: bootstrap,
        allow_anchor_renewal: renewal,
        artifact_prefix: names.artifact_prefix.clone(),
        runner_class: class.map(str::to_string),
    };
    Ok(restore::restore(store, &opts)?)
}

/// What the chain works with.
pub(super) struct Plan<'a> {
    /// The request (bootstrap and acceptance resolved).
    pub(crate) req: &'a NightlyRequest,
    /// The workflow and artifact names of this suite's runs.
    pub(crate) names: &'a RunNames,
    /// The store.
    pub(crate) store: &'a LocalStore,
    /// This job's recorded run.
    pub(crate) wf: &'a WorkflowRun,
    /// The checkout.
    pub(crate) git: &'a GitInfo,
    /// The job's work directory.
    pub(crate) work: &'a Path,
    /// The bootstrap was chosen automatically (no history was published when the job started).
    pub(crate) auto_bootstrap: bool,
    /// The runner class (docs/sharding.md); `names` carry its artifact prefix already.
    pub(crate) class: Option<&'a str>,
}

/// Upload `file` as the artifact `name` of run `run` (as is, like `archive: false`) and require the
/// digest the store records to be the packed one (the workflow's verify step).
pub(super) fn upload_verified(
    store: &LocalStore,
    run: u64,
    name: &str,
    file: &Path,
    packed: &crate::digest::Digest,
) -> Result<ArtifactMeta, JobError> {
    let uploaded = store.upload_file(run, name, file, RETENTION_DAYS)?;
    if uploaded.digest.as_deref() != Some(packed.as_str()) {
        return Err(JobError::Verify {
            name: name.to_string(),
            expected: packed.to_string(),
            found: uploaded.digest.unwrap_or_else(|| "none".into()),
        });
    }
    Ok(uploaded)
}
