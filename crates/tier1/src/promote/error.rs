//! Why a promotion was refused ([`PromoteError`]) and the exit code each refusal maps to.

use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use crate::suite::SuiteError;

/// Why a promotion was refused.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    /// A rule of §6.2 failed.
    #[error("{0}")]
    Invalid(String),
    /// The output root holds data, or the run is already in live history.
    #[error("{0}")]
    Conflict(String),
    /// The suite config cannot be used.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A history root fails validation.
    #[error("{which} history: {source}")]
    History {
        /// `candidate` or `canonical`.
        which: &'static str,
        /// The failure.
        source: HistoryError,
    },
    /// The run's measurements are not good enough for an anchor (imprecise, throttled, or an
    /// outlier against the accepted runs).
    #[error("refusing to promote {run_id}: it is not a good anchor: {}", reasons.join("; "))]
    AnchorQuality {
        /// The run.
        run_id: String,
        /// One line per target, with the figures.
        reasons: Vec<String>,
    },
    /// The comparison cannot be recomputed.
    #[error(transparent)]
    Compare(#[from] crate::regress::RegressError),
    /// The downloaded evidence is not what was uploaded.
    #[error("{0}")]
    Integrity(String),
    /// The evidence archive is unsafe or unreadable.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    /// The output root is unusable (a symbolic link, occupied, or inside an input tree).
    #[error(transparent)]
    OutputRoot(#[from] crate::fsx::OutputRootError),
    /// The approvals could not be read from GitHub.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
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

impl Classify for PromoteError {
    fn exit(&self) -> Exit {
        match self {
            PromoteError::Invalid(_)
            | PromoteError::Compare(_)
            | PromoteError::AnchorQuality { .. } => Exit::Invalid,
            PromoteError::Conflict(_) => Exit::Conflict,
            PromoteError::Suite(e) => e.exit(),
            PromoteError::History { source, .. } => source.exit(),
            PromoteError::Io { source, .. } => crate::exit::of_io(source),
            PromoteError::Integrity(_) => Exit::Integrity,
            PromoteError::Archive(e) => e.exit(),
            PromoteError::Store(e) => e.exit(),
            PromoteError::OutputRoot(e) => e.exit(),
            PromoteError::Package(e) => e.exit(),
        }
    }
}

/// A refusal of a rule of §6.2 (`PromoteError::Invalid`).
pub(super) fn invalid<T>(m: impl Into<String>) -> Result<T, PromoteError> {
    Err(PromoteError::Invalid(m.into()))
}

/// The failure of a history tree, named `which`.
pub(super) fn history(which: &'static str) -> impl Fn(HistoryError) -> PromoteError {
    move |source| PromoteError::History { which, source }
}
