//! Validation of a history root: every rule of the reference index loader and restore validator,
//! plus the hash chain. (Interface fixed; the owner of the history work fills in the rules.)

use super::model::Index;
use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use std::path::Path;

/// Structural problems may be skipped when GitHub proves the source run did not succeed;
/// integrity problems are always fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryErrorKind {
    /// Malformed or incomplete package (reference `HistoryCompatibilityError`).
    Structural,
    /// Tampering or unsafe content (reference `HistoryRestoreError`): digest, chain, paths.
    Integrity,
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

impl Classify for HistoryError {
    fn exit(&self) -> Exit {
        match self.kind {
            HistoryErrorKind::Structural => Exit::Invalid,
            HistoryErrorKind::Integrity => Exit::Integrity,
        }
    }
}

/// The anchor restore must bind to retained evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorRef {
    /// Run id of the latest eligible anchor.
    pub run_id: String,
    /// Its `evidence_artifact_name` (defaults to `tier1-evidence-<run_id>`).
    pub evidence_artifact_name: String,
    /// Its 40-hex source commit.
    pub git_commit: String,
    /// Its persisted `baseline_evidence_digest`, when promotion recorded one.
    pub evidence_digest: Option<Digest>,
}

/// A root that passed every rule.
#[derive(Debug, Clone)]
pub struct ValidatedHistory {
    /// The parsed index.
    pub index: Index,
    /// The latest eligible anchor (None only for an empty history).
    pub latest_anchor: Option<AnchorRef>,
}

/// Strict read-only validation of a history root (publish, promote, run, dashboard).
/// A missing `index.json` is a structural error; callers that allow "no history" check first.
pub fn validate_history_root(root: &Path) -> Result<ValidatedHistory, HistoryError> {
    Err(HistoryError {
        kind: HistoryErrorKind::Structural,
        path: root.join(super::model::INDEX_FILE).display().to_string(),
        message: "history validation is not implemented yet".into(),
    })
}

/// Restore's validator: everything `validate_history_root` checks, plus the reference sanitizing
/// (portable paths, generic warning text, backfills, re-rendered Markdown), applied in place to a
/// freshly extracted staging tree. Requires a non-empty run list and at least one eligible anchor.
pub fn sanitize_restored(root: &Path) -> Result<ValidatedHistory, HistoryError> {
    validate_history_root(root)
}
