//! Why a `tier1-shard` step refused, and its exit code (docs/tier1-shard.md): an invalid request
//! or a plan that does not fit the checkout is 3, a shard package that fails its digest, its
//! members or its provenance is 4 (fail closed: nothing is written or published), no shard
//! delivered at all is 5, an occupied output is 8.

use crate::exit::{Classify, Exit};

/// Why a `tier1-shard` step refused.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// The request, the plan or the checkout does not fit.
    #[error("{0}")]
    Invalid(String),
    /// A shard package's digest, members or provenance does not match (the night is refused).
    #[error("{0}")]
    Integrity(String),
    /// No shard delivered evidence: there is no night to record.
    #[error("{0}")]
    Unavailable(String),
    /// An output already holds data.
    #[error("{0}")]
    Conflict(String),
    /// The suite cannot be used.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// A history root fails validation or cannot be written.
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    /// The shard's measurement could not run.
    #[error(transparent)]
    Run(#[from] crate::run::RunError),
    /// Evidence could not be bound, packed or written.
    #[error(transparent)]
    Evidence(#[from] crate::evidence::EvidenceError),
    /// A package is unsafe or unreadable.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    /// The artifact store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The whole night's comparison was refused.
    #[error(transparent)]
    Regress(#[from] crate::regress::RegressError),
    /// A file could not be read or written.
    #[error(transparent)]
    Json(#[from] crate::json::JsonError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for ShardError {
    fn exit(&self) -> Exit {
        match self {
            ShardError::Invalid(_) => Exit::Invalid,
            ShardError::Integrity(_) => Exit::Integrity,
            ShardError::Unavailable(_) => Exit::Unavailable,
            ShardError::Conflict(_) => Exit::Conflict,
            ShardError::Suite(e) => e.exit(),
            ShardError::History(e) => e.exit(),
            ShardError::Run(e) => e.exit(),
            ShardError::Evidence(e) => e.exit(),
            ShardError::Archive(e) => e.exit(),
            ShardError::Store(e) => e.exit(),
            ShardError::Regress(e) => e.exit(),
            ShardError::Json(e) => e.exit(),
            ShardError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

/// `Io` for `path`.
pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ShardError + '_ {
    move |source| ShardError::Io {
        path: path.display().to_string(),
        source,
    }
}
