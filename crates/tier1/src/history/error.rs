//! The error of a history root that fails to load, validate or write: structural (a malformed or
//! incomplete package), integrity (tampering or unsafe content), or a local write that failed (the
//! disk, never the package), each with its exit code.

use crate::exit::{Classify, Exit};

/// Structural problems may be skipped when GitHub proves the source run did not succeed;
/// integrity problems are always fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryErrorKind {
    /// Malformed or incomplete package (reference `HistoryCompatibilityError`).
    Structural,
    /// Tampering or unsafe content (reference `HistoryRestoreError`): digest, chain, paths.
    Integrity,
    /// Writing the history failed locally (permissions, I/O): not the package's fault.
    Io,
    /// Writing the history failed because the disk is full or over quota.
    DiskFull,
}

/// A history root that fails validation. `path` names the file, `message` the field with the
/// expected and found values.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{path}: {message}")]
pub struct HistoryError {
    /// Structural or integrity.
    pub kind: HistoryErrorKind,
    /// The file (relative to the history root where possible).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl HistoryError {
    /// A structural error about `path`.
    pub(crate) fn structural(path: impl Into<String>, message: impl Into<String>) -> Self {
        HistoryError {
            kind: HistoryErrorKind::Structural,
            path: path.into(),
            message: message.into(),
        }
    }
    /// A failed local write of `path` (a full disk is [`HistoryErrorKind::DiskFull`]).
    pub(crate) fn write(path: impl Into<String>, e: &std::io::Error) -> Self {
        HistoryError {
            kind: if crate::exit::is_disk_full(e) {
                HistoryErrorKind::DiskFull
            } else {
                HistoryErrorKind::Io
            },
            path: path.into(),
            message: format!("cannot write: {e}"),
        }
    }
    /// An integrity error about `path`.
    pub(crate) fn integrity(path: impl Into<String>, message: impl Into<String>) -> Self {
        HistoryError {
            kind: HistoryErrorKind::Integrity,
            path: path.into(),
            message: message.into(),
        }
    }
}

impl Classify for HistoryError {
    fn exit(&self) -> Exit {
        match self.kind {
            HistoryErrorKind::Structural => Exit::Invalid,
            HistoryErrorKind::Integrity => Exit::Integrity,
            HistoryErrorKind::Io => Exit::Io,
            HistoryErrorKind::DiskFull => Exit::DiskFull,
        }
    }
}
