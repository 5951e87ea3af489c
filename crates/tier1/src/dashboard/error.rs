//! Why a dashboard could not be written, and its exit code.

use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use std::path::Path;

/// Why a dashboard could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The history root fails validation (the same errors restore reports).
    #[error("invalid history: {0}")]
    History(#[from] HistoryError),
    /// The output directory already holds files.
    #[error("output directory {0} is not empty: expected an absent or empty directory")]
    OutputNotEmpty(String),
    /// The output directory is unusable (a symbolic link, not a directory, inside or around the
    /// history or evidence root).
    #[error("--output: {0}")]
    Output(#[from] crate::fsx::OutputRootError),
    /// No suite can be chosen, or the chosen file is invalid.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// The store could not be read, or its history could not be restored (fail closed).
    #[error("restore: {0}")]
    Restore(#[from] crate::restore::RestoreError),
    /// `--now` is not an RFC 3339 time.
    #[error("--now: expected an RFC 3339 time such as 2026-08-16T00:00:00Z, found {0:?}")]
    BadNow(String),
    /// Writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for ReportError {
    fn exit(&self) -> Exit {
        match self {
            ReportError::History(e) => e.exit(),
            ReportError::BadNow(_) => Exit::Invalid,
            ReportError::Suite(e) => e.exit(),
            ReportError::Restore(e) => e.exit(),
            ReportError::OutputNotEmpty(_) => Exit::Conflict,
            ReportError::Output(e) => e.exit(),
            ReportError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    }
}
