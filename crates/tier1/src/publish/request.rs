//! What `tier1-publish` is asked to merge ([`MergeRequest`]) and what it prints ([`MergeOutcome`]).

use serde::Serialize;
use std::path::PathBuf;

/// What to merge.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// The producer's candidate history tree (read only).
    pub candidate_root: PathBuf,
    /// The live canonical history, restored again under the publication lock (read only).
    pub canonical_root: PathBuf,
    /// Where the merged tree goes (must not exist or be empty).
    pub output_root: PathBuf,
    /// The run to publish: the candidate's newest row.
    pub run_id: String,
    /// The runner class published (docs/sharding.md): the candidate, its run and the live
    /// history must all be of it; None: the unnamed class.
    pub runner_class: Option<String>,
}

/// The JSON `tier1-publish` prints.
#[derive(Debug, Clone, Serialize)]
pub struct MergeOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// The merged run.
    pub(crate) run_id: String,
    /// The candidate was compared against an anchor that is no longer the latest live anchor.
    pub(crate) stale_baseline: bool,
    /// `run_accepted` as recorded in the output.
    pub(crate) run_accepted: bool,
    /// Always false: normal publication never makes a run eligible once an anchor exists.
    pub baseline_eligible: bool,
    /// The latest live anchor.
    pub(crate) anchor_run_id: String,
    /// The candidate's `baseline_run_id`.
    pub(crate) candidate_baseline_run_id: Option<String>,
    /// Runs in the output history (live and sealed).
    pub(crate) run_count: usize,
    /// Live runs in the output index.
    pub(crate) live_run_count: usize,
    /// Sealed segments in the output.
    pub(crate) segment_count: usize,
    /// Segments this publication sealed (compaction), oldest first.
    pub(crate) segments_sealed: Vec<String>,
    /// Runs this publication sealed.
    pub(crate) runs_sealed: usize,
    /// True when the live index was a legacy (unchained) one and the output starts its chain.
    pub(crate) chain_adopted: bool,
    /// Always `"."`.
    pub(crate) history_root: String,
}
