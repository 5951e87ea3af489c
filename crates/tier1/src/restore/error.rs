//! Restore's refusals and failures with their exit codes, and the error classes of one candidate
//! (contract §5.6), with the reference messages.

use crate::exit::{Classify, Exit};
use crate::store::StoreError;
use std::io;
use std::path::Path;

/// The reference message when nothing can be restored and bootstrap is not allowed; the store's
/// [`crate::store::ArtifactStore::bootstrap_hint`] follows it.
pub(crate) const NO_CANDIDATE_MESSAGE: &str =
    "No prior completed Tier-1 run has a matching unexpired history and evidence artifact pair.";
/// The reference renewal message.
pub(crate) const RENEWAL_MESSAGE: &str = "Tier-1 baseline evidence is at least 60 days old. Run a protected manual anchor renewal before the 90-day evidence artifact expires.";

/// A refusal or failure of restore. Nothing is written to the destination.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The destination is unusable (holds data, is a symbolic link or not a directory).
    #[error("--destination: {0}")]
    Destination(#[from] crate::fsx::OutputRootError),
    /// The options are unusable.
    #[error("{0}")]
    Invalid(String),
    /// Discovery was cut short: refusing to reset canonical history.
    #[error("Refusing to reset canonical history: discovery was truncated: {message}")]
    DiscoveryTruncated {
        /// Details.
        message: String,
    },
    /// A candidate failed integrity validation (fatal, no fallback, no bootstrap).
    #[error(
        "Tier-1 history artifact {artifact} (id {artifact_id}, run {run_id}) failed integrity validation: {message}"
    )]
    Integrity {
        /// History artifact name.
        artifact: String,
        /// Its id.
        artifact_id: u64,
        /// Its run.
        run_id: u64,
        /// What failed, naming the member, field or artifact.
        message: String,
    },
    /// A package from a successful or unverified run failed structural validation.
    #[error(
        "Tier-1 history artifact {artifact} (id {artifact_id}, run {run_id}, conclusion {conclusion}) from a successful or unverified workflow run failed structural validation: {message}"
    )]
    Structural {
        /// History artifact name.
        artifact: String,
        /// Its id.
        artifact_id: u64,
        /// Its run.
        run_id: u64,
        /// The run's conclusion (`unknown` when absent).
        conclusion: String,
        /// What failed.
        message: String,
    },
    /// No usable history or evidence and bootstrap is not allowed (or not possible).
    #[error("{message}")]
    Unavailable {
        /// Details.
        message: String,
    },
    /// The anchor evidence needs a protected renewal.
    #[error("{RENEWAL_MESSAGE} ({message})")]
    RenewalRequired {
        /// Which artifact and how old.
        message: String,
    },
    /// The store failed.
    #[error("artifact store: {0}")]
    Store(#[from] StoreError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Writing the restored tree failed locally (a full disk): the package is not at fault.
    #[error("restoring into the destination: {0}")]
    Local(crate::history::error::HistoryError),
}

impl Classify for RestoreError {
    fn exit(&self) -> Exit {
        match self {
            RestoreError::Destination(e) => e.exit(),
            RestoreError::Invalid(_) | RestoreError::Structural { .. } => Exit::Invalid,
            RestoreError::DiscoveryTruncated { .. } | RestoreError::Integrity { .. } => {
                Exit::Integrity
            }
            RestoreError::Unavailable { .. } => Exit::Unavailable,
            RestoreError::RenewalRequired { .. } => Exit::RenewalRequired,
            RestoreError::Store(e) => e.exit(),
            RestoreError::Io { source, .. } => crate::exit::of_io(source),
            RestoreError::Local(e) => e.exit(),
        }
    }
}

/// Why one candidate could not be restored (the §5.6 error classes).
#[derive(Debug)]
pub(crate) enum CandidateError {
    /// Baseline evidence unavailable (expired, deleted, never uploaded).
    Unavailable(String),
    /// Structurally bad package.
    Structural(String),
    /// Tampering or unsafe content.
    Integrity(String),
    /// Evidence needs renewal and renewal is not allowed.
    Renewal(String),
    /// Not about the candidate: the store or the disk failed.
    Fatal(RestoreError),
}

impl CandidateError {
    /// Classify a store failure met while working on a candidate.
    pub(crate) fn from_store(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } | StoreError::Expired { .. } => {
                CandidateError::Unavailable(e.to_string())
            }
            StoreError::Integrity { .. } | StoreError::Corrupt { .. } => {
                CandidateError::Integrity(e.to_string())
            }
            other => CandidateError::Fatal(RestoreError::Store(other)),
        }
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> RestoreError + '_ {
    move |source| RestoreError::Io {
        path: path.display().to_string(),
        source,
    }
}
