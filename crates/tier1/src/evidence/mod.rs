//! The evidence package of a run: layout under the evidence root (`artifacts/runs/<run_id>/`),
//! the manifest, binding the identity to the checkout, deterministic packing, and verifying the
//! uploaded artifact's digest and effective retention.

pub mod bind;
pub mod git;
pub mod manifest;
pub mod pack;
pub mod retention;
pub mod verify;

use crate::exit::{Classify, Exit};
use std::path::Path;

/// Default evidence root, relative to the repository root.
pub const DEFAULT_EVIDENCE_ROOT: &str = "artifacts/runs";
/// Manifest file inside a run's evidence directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Markdown report inside a run's evidence directory.
pub const REPORT_FILE: &str = "report.md";
/// Separator of recheck evidence directories: `<run_id>__recheck__<key>`.
pub const RECHECK_INFIX: &str = "__recheck__";

/// `<run_id>/manifest.json`, relative to the evidence root.
pub fn manifest_rel(run_id: &str) -> String {
    format!("{run_id}/{MANIFEST_FILE}")
}

/// `<run_id>/report.md`, relative to the evidence root.
pub fn report_rel(run_id: &str) -> String {
    format!("{run_id}/{REPORT_FILE}")
}

/// `<run_id>/results/benchmark_test_results.json`, relative to the evidence root.
pub fn results_rel(run_id: &str) -> String {
    format!("{run_id}/{}", crate::bench::result::RESULTS_REL_PATH)
}

/// The evidence directories of a run: `<run_id>` and every `<run_id>__recheck__*`, sorted.
pub fn run_dirs(evidence_root: &Path, run_id: &str) -> Result<Vec<String>, EvidenceError> {
    let prefix = format!("{run_id}{RECHECK_INFIX}");
    let mut dirs = Vec::new();
    let entries =
        std::fs::read_dir(evidence_root).map_err(|e| EvidenceError::io(evidence_root, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| EvidenceError::io(evidence_root, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name == run_id || name.starts_with(&prefix)) && entry.path().is_dir() {
            dirs.push(name);
        }
    }
    dirs.sort();
    if !dirs.iter().any(|d| d == run_id) {
        return Err(EvidenceError::Invalid {
            path: evidence_root.join(run_id).display().to_string(),
            message: format!("evidence directory of run {run_id:?} does not exist"),
        });
    }
    Ok(dirs)
}

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
