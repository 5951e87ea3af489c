//! What a validated history root yields: the parsed index, its chain state, and the latest eligible
//! anchor restore must bind to retained evidence.

use crate::digest::Digest;
use crate::history::chain::ChainState;
use crate::history::model::Index;
use crate::history::package::IndexDoc;

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
    /// Whether the index carries a verified hash chain (legacy reference indexes do not).
    pub chain: ChainState,
    /// The index as stored (raw rows kept for byte-identical extension).
    pub doc: IndexDoc,
}
