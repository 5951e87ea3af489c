//! An evidence operation that was refused or failed, with its exit code.

use crate::exit::{Classify, Exit};
use std::path::Path;

/// An evidence operation that was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A file or field does not satisfy the evidence contract.
    #[error("{path}: {message}")]
    Invalid {
        /// The file (or field path).
        path: String,
        /// What is wrong, expected and found.
        message: String,
    },
    /// The evidence would bind to a checkout that is not clean or not the expected commit.
    #[error("{0}")]
    Checkout(String),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Packing failed.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    /// The history side of a bind failed.
    #[error(transparent)]
    History(#[from] crate::history::error::HistoryError),
}

impl EvidenceError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        EvidenceError::Io {
            path: path.display().to_string(),
            source,
        }
    }
    /// A JSON file that could not be written: a local I/O failure stays one (a full disk is its
    /// own exit code), anything else is invalid content.
    pub(crate) fn json_write(e: crate::json::JsonError) -> Self {
        match e {
            crate::json::JsonError::Io { path, source } => EvidenceError::Io { path, source },
            crate::json::JsonError::Parse { path, source } => {
                EvidenceError::invalid(path, source.to_string())
            }
        }
    }
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        EvidenceError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl Classify for EvidenceError {
    fn exit(&self) -> Exit {
        match self {
            EvidenceError::Invalid { .. } | EvidenceError::Checkout(_) => Exit::Invalid,
            EvidenceError::Io { source, .. } => crate::exit::of_io(source),
            EvidenceError::Archive(e) => e.exit(),
            EvidenceError::History(e) => e.exit(),
        }
    }
}
