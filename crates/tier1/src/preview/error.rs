//! A preview that could not be made, and its exit code.

use crate::exit::{Classify, Exit};
use crate::restore::RestoreError;
use crate::run::RunError;
use std::path::Path;

/// A preview that could not run or could not post. Nothing is written to the output.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// A request value is unusable.
    #[error("{0}")]
    Invalid(String),
    /// The output directory holds data.
    #[error("--output {path}: expected an absent or empty directory, found one with files")]
    OutputNotEmpty {
        /// The directory.
        path: String,
    },
    /// The canonical history could not be restored.
    #[error("restoring the canonical history of branch {branch}: {source}")]
    Restore {
        /// The branch.
        branch: String,
        /// Why.
        source: RestoreError,
    },
    /// The suite run or the comparison failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// GitHub refused or failed.
    #[error(transparent)]
    Github(#[from] crate::github::GithubError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for PreviewError {
    fn exit(&self) -> Exit {
        match self {
            PreviewError::Invalid(_) => Exit::Invalid,
            PreviewError::OutputNotEmpty { .. } => Exit::Conflict,
            PreviewError::Restore { source, .. } => source.exit(),
            PreviewError::Run(e) => e.exit(),
            PreviewError::Github(e) => e.exit(),
            PreviewError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PreviewError + '_ {
    move |source| PreviewError::Io {
        path: path.display().to_string(),
        source,
    }
}
