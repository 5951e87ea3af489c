//! Why a publication is refused ([`PublishError`]), and the exit code of each refusal.

use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;

/// Why a merge was refused.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The request or the candidate breaks a publication rule.
    #[error("{0}")]
    Invalid(String),
    /// The output root holds data, or the run id is already published.
    #[error("{0}")]
    Conflict(String),
    /// A history root fails validation (structural or integrity).
    #[error("{which} history: {source}")]
    History {
        /// `candidate` or `canonical`.
        which: &'static str,
        /// The validation failure.
        source: HistoryError,
    },
    /// The output root is unusable (a symbolic link, occupied, or inside an input tree).
    #[error(transparent)]
    OutputRoot(#[from] crate::fsx::OutputRootError),
    /// The merged package would break a limit restore applies (member count, expanded size):
    /// nothing is written.
    #[error(transparent)]
    Unpublishable(#[from] crate::archive::ArchiveError),
    /// Writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The output root.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The output package could not be compacted, or restore would refuse it.
    #[error(transparent)]
    Package(#[from] crate::compaction::package::PackageError),
}

impl Classify for PublishError {
    fn exit(&self) -> Exit {
        match self {
            PublishError::Invalid(_) => Exit::Invalid,
            PublishError::Conflict(_) => Exit::Conflict,
            PublishError::History { source, .. } => source.exit(),
            PublishError::Io { source, .. } => crate::exit::of_io(source),
            PublishError::OutputRoot(e) => e.exit(),
            PublishError::Unpublishable(e) => e.exit(),
            PublishError::Package(e) => e.exit(),
        }
    }
}

/// A history validation failure of the `which` tree (`candidate` or `canonical`).
pub(super) fn history(which: &'static str) -> impl Fn(HistoryError) -> PublishError {
    move |source| PublishError::History { which, source }
}
