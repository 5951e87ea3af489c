//! A shard's own record (`<run_id>/shards/<K>/shard.json`, `tier1.shard.v1`, docs/sharding.md
//! §3): which shard of which plan it is, what it measured, its rechecks (with their pooled rows)
//! and its side-by-side block, so the combine step recomputes the whole night's comparison from
//! the shards' own measurements.

use crate::digest::Digest;
use crate::history::SideBySideBlock;
use crate::history::model::TargetSummary;
use crate::json::Finite;
use crate::recheck::RecheckResult;
use serde::{Deserialize, Serialize};

/// `schema` of a shard record.
pub(crate) const SHARD_SCHEMA: &str = "tier1.shard.v1";
/// The record's file name inside `<run_id>/shards/<K>/`.
pub(crate) const SHARD_FILE: &str = "shard.json";

/// One recheck of a shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordedRecheck {
    /// Target string.
    pub(crate) target: String,
    /// Target key.
    pub(crate) key: String,
    /// `<run_id>__recheck__<key>/results/benchmark_test_results.json`.
    pub(crate) recheck_output_json: String,
    /// The pooled row; None when the recheck failed to run.
    pub(crate) row: Option<TargetSummary>,
}

impl From<&RecheckResult> for RecordedRecheck {
    fn from(r: &RecheckResult) -> Self {
        RecordedRecheck {
            target: r.target.clone(),
            key: r.key.clone(),
            recheck_output_json: r.recheck_output_json.clone(),
            row: r.row.clone(),
        }
    }
}

impl From<&RecordedRecheck> for RecheckResult {
    fn from(r: &RecordedRecheck) -> Self {
        RecheckResult {
            target: r.target.clone(),
            key: r.key.clone(),
            recheck_output_json: r.recheck_output_json.clone(),
            row: r.row.clone(),
        }
    }
}

/// `shard.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardRecord {
    /// [`SHARD_SCHEMA`].
    pub(crate) schema: String,
    /// The night's run id.
    pub(crate) run_id: String,
    /// 1-based shard number.
    pub(crate) shard: u32,
    /// The plan's shard count.
    pub(crate) shards: u32,
    /// The plan's digest.
    pub(crate) plan_digest: Digest,
    /// The runner class.
    pub(crate) runner_class: Option<String>,
    /// The commit measured.
    pub(crate) commit: String,
    /// The keys measured.
    pub(crate) targets: Vec<String>,
    /// The anchor compared with.
    pub(crate) anchor_run_id: Option<String>,
    /// The shard's rechecks.
    pub(crate) rechecks: Vec<RecordedRecheck>,
    /// The shard's side-by-side block.
    pub(crate) side_by_side: Option<SideBySideBlock>,
    /// Wall time of the shard's measurement.
    pub(crate) seconds: Finite,
}
