//! Store failures with their exit codes, and the error for a wanted record the listing left out.

use super::records::Skipped;

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
pub(crate) fn skipped_error(skipped: &[Skipped], run_id: u64, name: &str) -> StoreError {
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
