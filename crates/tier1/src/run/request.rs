//! What to run: the request of the producer step.

use crate::bench::backend::Backend;
use crate::bench::options::Hook;
use crate::evidence::git::GitInfo;
use crate::suite::{Suite, SuiteSource};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// What to run.
pub struct RunRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// How the suite was chosen ([`Suite::discover`]).
    pub suite_source: SuiteSource,
    /// Profile name.
    pub profile: String,
    /// Run id (safe pattern).
    pub run_id: String,
    /// Candidate history root (the restored live history; updated in place).
    pub history_root: PathBuf,
    /// Evidence root (`artifacts/runs`).
    pub evidence_root: PathBuf,
    /// Backend to measure on.
    pub backend: Arc<dyn Backend>,
    /// `--history-anchor-candidate`: this run may not elect itself as the first anchor.
    pub anchor_candidate: bool,
    /// Attestation records to embed in the manifest.
    pub attestation: Option<Value>,
    /// The checkout.
    pub git: GitInfo,
    /// The checkout's directory (named in the dirty-tree refusal).
    pub repo_root: PathBuf,
    /// Run although the checkout is dirty (the run is recorded dirty: never accepted, never bound).
    pub allow_dirty: bool,
    /// `tier1-evidence-<suffix>` when known.
    pub evidence_artifact_name: Option<String>,
    /// Test hook passed to the harness.
    pub hook: Option<Hook>,
    /// Passes to measure in; `None`: the profile's `anchor_passes` when this run may become the
    /// anchor (no anchor yet, or `anchor_candidate`), else one. A preview, which is never an
    /// anchor, asks for one.
    pub passes: Option<u32>,
    /// The runner class measured on (docs/sharding.md): recorded in the results' environment
    /// (part of its key) and the manifest; None: the unnamed class.
    pub runner_class: Option<String>,
    /// Measure as one shard of a sharded night (`run::shard::measure_shard`); None: the
    /// whole suite.
    pub shard: Option<ShardPlacement>,
}

/// Which shard of a plan a run measures (docs/sharding.md §3).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardPlacement {
    /// 1-based shard number.
    pub shard: u32,
    /// The plan's shard count.
    pub shards: u32,
    /// The plan's digest.
    pub plan_digest: crate::digest::Digest,
    /// The target keys of this shard.
    pub keys: Vec<String>,
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("run_id", &self.run_id)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}
