//! The history package's file types, field for field as the reference contract names them
//! (`index.json`, `<run_id>/summary.json`, `regression_summary.json`, `trend_snapshot.json`,
//! `regression_rechecks.json`), plus tier1's additive, versioned extensions. Unknown fields of a
//! stored file are kept (`extra`) so a round trip never drops data another writer added.
//! Metric floats are [`Finite`]: a NaN or infinity can never be written to a file nor read from one.

use crate::json::Finite;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Current `schema_version` of tier1-written indexes.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// File names inside a history root.
pub(crate) const INDEX_FILE: &str = "index.json";
/// Per-run file names.
pub const SUMMARY_FILE: &str = "summary.json";
/// Per-run regression summary (JSON).
pub const REGRESSION_JSON_FILE: &str = "regression_summary.json";
/// Per-run regression summary (Markdown).
pub const REGRESSION_MD_FILE: &str = "regression_summary.md";
/// Per-run trend snapshot.
pub const TREND_FILE: &str = "trend_snapshot.json";
/// Per-run recheck records.
pub const RECHECKS_FILE: &str = "regression_rechecks.json";

/// `index.json` at the history root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// tier1 extension: format version of this index (absent in reference-written files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) schema_version: Option<u32>,
    /// Suite identity.
    pub(crate) suite_name: String,
    /// Suite contract version.
    pub(crate) suite_version: u32,
    /// Always `"."`: stored paths are relative to the root.
    #[serde(default = "dot")]
    pub history_root: String,
    /// tier1 extension: why the current hash chain was started (bootstrap reset record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_reset: Option<ChainReset>,
    /// Runs in publication order (append-only; sort by time only for display). In a compacted
    /// index (`schema_version` 2) only the live runs; the sealed ones are in `segments`.
    pub runs: Vec<IndexRow>,
    /// tier1 extension (`schema_version` 2 and 3): the sealed segments, in chain order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<super::segment::SegmentRecord>,
    /// tier1 extension (`schema_version` 3): the names of the segments whose archive lives in the
    /// vault rather than in the package (sorted). Not part of the chain: it says where an archive
    /// is, the chained record what it is; restore checks the vault against the record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vaulted: Vec<String>,
    /// tier1 extension: the runner class whose history this is (docs/sharding.md); absent: the
    /// unnamed class. Every live run's summary names the same class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_class: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

fn dot() -> String {
    ".".into()
}

/// Why and when a hash chain was (re)started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainReset {
    /// RFC 3339 time of the reset.
    pub(crate) at: String,
    /// The public reason (the bootstrap acceptance note).
    pub reason: String,
    /// Who asked for it.
    pub actor: String,
    /// Run id that started the new chain.
    pub first_run_id: String,
}

/// How an eligible anchor was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Acceptance {
    /// Protected promotion (`tier1-promote`).
    AcceptHistoryAnchor,
    /// Reference value: regressions accepted explicitly.
    AcceptRegressions,
    /// The first anchor of a normal publication (no actor fields).
    Clean,
    /// Reference value: expectations updated explicitly.
    UpdateExpectations,
}

impl Acceptance {
    /// Explicit acceptances need actor, note and workflow-run fields.
    pub(crate) fn is_explicit(self) -> bool {
        !matches!(self, Acceptance::Clean)
    }
}

/// One run of `index.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexRow {
    /// Safe run id (`^[A-Za-z0-9][A-Za-z0-9_.-]*$`).
    pub run_id: String,
    /// RFC 3339 UTC time the run was generated.
    pub(crate) generated_at: String,
    /// `<run_id>/summary.json`.
    pub summary_path: String,
    /// `<run_id>/regression_summary.md`.
    pub(crate) regression_summary_path: String,
    /// `<run_id>/regression_summary.json`.
    pub(crate) regression_json_path: String,
    /// `<run_id>/trend_snapshot.json`.
    pub(crate) trend_snapshot_path: String,
    /// Aggregates copied from the summary.
    #[serde(default)]
    pub(crate) avg_speedup: Option<Finite>,
    /// Median of per-target speedups.
    #[serde(default)]
    pub(crate) median_speedup: Option<Finite>,
    /// Geometric mean of positive speedups.
    #[serde(default)]
    pub(crate) geomean_speedup: Option<Finite>,
    /// Same as geomean.
    #[serde(default)]
    pub(crate) representative_speedup: Option<Finite>,
    /// Best per-target speedup.
    #[serde(default)]
    pub(crate) max_speedup: Option<Finite>,
    /// Counts.
    #[serde(default)]
    pub(crate) succeeded: u32,
    /// Targets whose status starts with `failed`.
    #[serde(default)]
    pub(crate) failed: u32,
    /// Targets whose status starts with `skipped`.
    #[serde(default)]
    pub(crate) skipped: u32,
    /// Targets with no result.
    #[serde(default)]
    pub(crate) missing: u32,
    /// Passed the release gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_accepted: Option<bool>,
    /// May serve as the comparison anchor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_eligible: Option<bool>,
    /// How it was accepted as an anchor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_acceptance: Option<Acceptance>,
    /// Requester of an explicit acceptance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_acceptance_actor: Option<String>,
    /// `requester` (written by promotion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_acceptance_actor_role: Option<String>,
    /// Public note of an explicit acceptance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_acceptance_note: Option<String>,
    /// HTTPS Actions run URL (or the documented local form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_acceptance_workflow_run: Option<String>,
    /// tier1 extension: reviewers who approved the protected environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_acceptance_reviewers: Vec<String>,
    /// `sha256:<hex>` of the evidence artifact (written by promotion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_evidence_digest: Option<String>,
    /// tier1 extension: hash chain link (SHA-256 hex of previous link + canonical row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_sha256: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

impl IndexRow {
    /// `baseline_eligible == Some(true)`.
    pub fn is_eligible(&self) -> bool {
        self.baseline_eligible == Some(true)
    }
    /// `run_accepted == Some(true)`.
    pub(crate) fn is_accepted(&self) -> bool {
        self.run_accepted == Some(true)
    }
}

/// `<run_id>/summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Suite identity.
    pub(crate) suite_name: String,
    /// Suite contract version.
    pub(crate) suite_version: u32,
    /// Suite description.
    #[serde(default)]
    pub(crate) description: String,
    /// The run id.
    pub run_id: String,
    /// RFC 3339 UTC (the result JSON's timestamp).
    pub(crate) generated_at: String,
    /// `<run_id>/results/benchmark_test_results.json`, relative to the evidence root.
    #[serde(default)]
    pub source_result_json: Option<String>,
    /// `<run_id>/manifest.json`, relative to the evidence root.
    #[serde(default)]
    pub(crate) source_manifest_json: Option<String>,
    /// `<run_id>/report.md`, relative to the evidence root.
    #[serde(default)]
    pub(crate) source_markdown_report: Option<String>,
    /// 40 lower-hex commit of the checkout.
    #[serde(default)]
    pub(crate) source_git_commit: Option<String>,
    /// Whether the tree was dirty.
    #[serde(default)]
    pub(crate) source_git_dirty: Option<bool>,
    /// Commit recorded in the manifest.
    #[serde(default)]
    pub(crate) source_manifest_git_commit: Option<String>,
    /// `tier1-evidence-<suffix>` (null when run outside CI and not bound).
    #[serde(default)]
    pub evidence_artifact_name: Option<String>,
    /// tier1 extension: the measurement environment (comparisons across keys are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<Environment>,
    /// tier1 extension: profile the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<String>,
    /// Per-target rows, in suite order.
    pub targets: Vec<TargetSummary>,
    /// Counts and aggregates.
    pub summary: Aggregates,
    /// tier1 extension: the shards a combined run was measured in (docs/sharding.md); absent
    /// for a run one runner measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<super::shards::ShardsRecord>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

/// Where a run was measured. Two runs are comparable only when their `key()` is equal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// `cpu` or `cuda`.
    pub backend: String,
    /// Device names (GPU names, or the CPU model).
    #[serde(default)]
    pub device_names: Vec<String>,
    /// GPU UUIDs (empty on CPU).
    #[serde(default)]
    pub device_uuids: Vec<String>,
    /// NVIDIA driver version.
    #[serde(default)]
    pub driver_version: Option<String>,
    /// CUDA driver API version.
    #[serde(default)]
    pub cuda_version: Option<String>,
    /// Runner name (self-hosted runner) or host name.
    #[serde(default)]
    pub runner: Option<String>,
    /// The profile the shapes came from.
    #[serde(default)]
    pub profile: Option<String>,
    /// The clock CPU samples were read from when it is not wall time (`cpu`): part of the key,
    /// so CPU-time and wall-time runs are never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// The runner class the run measured on (docs/sharding.md): part of the key, so runs of two
    /// classes are never compared and one class's run never becomes another's anchor. Absent:
    /// the unnamed class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_class: Option<String>,
}

impl Environment {
    /// The comparability key: backend, device models, profile, clock and runner class (UUIDs and
    /// runner may change).
    pub fn key(&self) -> String {
        let mut names = self.device_names.clone();
        names.sort();
        let key = format!(
            "{}|{}|{}",
            self.backend,
            names.join(","),
            self.profile.as_deref().unwrap_or("")
        );
        let key = match &self.clock {
            Some(c) => format!("{key}|clock={c}"),
            None => key,
        };
        match &self.runner_class {
            Some(c) => format!("{key}|class={c}"),
            None => key,
        }
    }
}

/// One target row of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSummary {
    /// Target key.
    pub key: String,
    /// Reference target string.
    pub target: String,
    /// Category.
    #[serde(default)]
    pub(crate) category: String,
    /// Rationale.
    #[serde(default)]
    pub(crate) rationale: String,
    /// `succeeded`, `failed_*`, `skipped_*` or `missing`.
    pub status: String,
    /// Median baseline time (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_time_ms: Option<Finite>,
    /// Best verified speedup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_speedup: Option<Finite>,
    /// `baseline_time_ms / best_speedup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_optimized_time_ms: Option<Finite>,
    /// Name of the best optimized variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) best_optimization: Option<String>,
    /// `performance`/`speed` or `memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimization_goal: Option<String>,
    /// Baseline peak memory (MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_memory_mb: Option<Finite>,
    /// Best memory savings (percent, may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) best_memory_savings_pct: Option<Finite>,
    /// Best optimized peak memory (MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_optimized_memory_mb: Option<Finite>,
    /// Baseline p75 (ms) or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_p75_ms: Option<Finite>,
    /// Repo-relative file of the baseline implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_file: Option<String>,
    /// Evidence references (`<run_id>/...`), keyed by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) artifacts: BTreeMap<String, String>,
    /// tier1 extension: verification tolerance applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verification_tolerance: Option<crate::suite::Tolerance>,
    /// tier1 extension: how precisely the target was measured (statistical detection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measurement: Option<super::Measurement>,
    /// tier1 extension: the settings it was measured with; a change against the anchor's asks
    /// for a new anchor instead of a comparison (`super::settings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measurement_settings: Option<super::settings::MeasurementSettings>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

/// The `summary` block of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregates {
    /// Number of targets.
    pub(crate) target_count: u32,
    /// `status == succeeded`.
    pub succeeded: u32,
    /// Status starts with `failed`.
    pub failed: u32,
    /// Status starts with `skipped`.
    pub skipped: u32,
    /// Status `missing`.
    pub missing: u32,
    /// Arithmetic mean of succeeded speedups.
    #[serde(default)]
    pub avg_speedup: Option<Finite>,
    /// Median.
    #[serde(default)]
    pub median_speedup: Option<Finite>,
    /// Geometric mean of positive speedups.
    #[serde(default)]
    pub geomean_speedup: Option<Finite>,
    /// Same as geomean.
    #[serde(default)]
    pub representative_speedup: Option<Finite>,
    /// Max.
    #[serde(default)]
    pub max_speedup: Option<Finite>,
}

/// A change row of a regression summary; the `reason` tag selects the shape (contract §2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum ChangeRow {
    /// Status moved to or from `succeeded`.
    Status {
        /// Target string.
        target: String,
        /// Previous status.
        before: String,
        /// Current status.
        after: String,
    },
    /// Relative speedup change.
    Speedup {
        /// Target string.
        target: String,
        /// Previous speedup.
        before: Finite,
        /// Current speedup.
        after: Finite,
        /// `(after - before) / before * 100`.
        delta_pct: Finite,
        /// Previous optimized time.
        optimized_time_before_ms: Option<Finite>,
        /// Current optimized time.
        optimized_time_after_ms: Option<Finite>,
        /// Difference, null unless both times are > 0.
        optimized_time_delta_ms: Option<Finite>,
    },
    /// Optimized latency change (catches common-mode slowdowns).
    OptimizedLatency {
        /// Target string.
        target: String,
        /// Previous optimized ms.
        before: Finite,
        /// Current optimized ms.
        after: Finite,
        /// Relative change in percent.
        delta_pct: Finite,
        /// Absolute change in ms.
        optimized_time_delta_ms: Finite,
    },
    /// Memory savings change in percentage points.
    MemorySavings {
        /// Target string.
        target: String,
        /// Previous savings %.
        before: Finite,
        /// Current savings %.
        after: Finite,
        /// `after - before`.
        delta_points: Finite,
    },
    /// Optimized memory change.
    OptimizedMemory {
        /// Target string.
        target: String,
        /// Previous MB.
        before: Finite,
        /// Current MB.
        after: Finite,
        /// Relative change in percent.
        delta_pct: Finite,
        /// Absolute change in MB.
        optimized_memory_delta_mb: Finite,
    },
}

impl ChangeRow {
    /// The target string of any row.
    pub fn target(&self) -> &str {
        match self {
            ChangeRow::Status { target, .. }
            | ChangeRow::Speedup { target, .. }
            | ChangeRow::OptimizedLatency { target, .. }
            | ChangeRow::MemorySavings { target, .. }
            | ChangeRow::OptimizedMemory { target, .. } => target,
        }
    }
    /// The `reason` tag.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            ChangeRow::Status { .. } => "status",
            ChangeRow::Speedup { .. } => "speedup",
            ChangeRow::OptimizedLatency { .. } => "optimized_latency",
            ChangeRow::MemorySavings { .. } => "memory_savings",
            ChangeRow::OptimizedMemory { .. } => "optimized_memory",
        }
    }
}

/// A regression cleared by its recheck (never eligible, never promotable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SuppressedRegression {
    /// The original regression row.
    #[serde(flatten)]
    pub(crate) row: ChangeRow,
    /// Always `recheck_not_regressed`.
    pub(crate) suppression_reason: String,
    /// `<run_id>__recheck__<key>`.
    pub(crate) recheck_run_id: String,
    /// Speedup measured by the recheck.
    #[serde(default)]
    pub(crate) recheck_speedup: Option<Finite>,
    /// Optimized time measured by the recheck.
    #[serde(default)]
    pub(crate) recheck_optimized_time_ms: Option<Finite>,
}

/// One recheck record (also the elements of `regression_rechecks.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RecheckRecord {
    /// Target string.
    pub(crate) target: String,
    /// `<run_id>__recheck__<key>`.
    pub(crate) recheck_run_id: String,
    /// Evidence-relative result JSON of the recheck.
    pub(crate) recheck_output_json: String,
    /// The recheck's target row.
    #[serde(default)]
    pub(crate) recheck_summary: Option<TargetSummary>,
    /// Regression rows the recheck still shows against the same anchor.
    #[serde(default)]
    pub(crate) recheck_regressions: Vec<ChangeRow>,
    /// Whether the recheck's metrics were finite and positive.
    pub(crate) recheck_metrics_valid: bool,
    /// True when the regression stands.
    pub(crate) confirmed_regression: bool,
}

/// `<run_id>/regression_summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegressionSummary {
    /// Anchor run id, null when there was none.
    pub(crate) baseline_run_id: Option<String>,
    /// This run.
    pub(crate) current_run_id: Option<String>,
    /// Confirmed regressions.
    #[serde(default)]
    pub regressions: Vec<ChangeRow>,
    /// Improvements.
    #[serde(default)]
    pub(crate) improvements: Vec<ChangeRow>,
    /// Every decline, with no threshold (holds anchor advancement).
    #[serde(default)]
    pub(crate) anchor_declines: Vec<ChangeRow>,
    /// Targets new in this run (full target rows).
    #[serde(default)]
    pub(crate) new_targets: Vec<TargetSummary>,
    /// Targets of the anchor missing from this run (blocking).
    #[serde(default)]
    pub(crate) missing_targets: Vec<TargetSummary>,
    /// History warnings.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Regressions cleared by recheck.
    #[serde(default)]
    pub(crate) suppressed_regressions: Vec<SuppressedRegression>,
    /// Recheck records.
    #[serde(default)]
    pub(crate) rechecks: Vec<RecheckRecord>,
    /// `<run_id>/regression_rechecks.json` when a previous summary existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression_rechecks_path: Option<String>,
    /// tier1 extension: changes beyond the thresholds that the significance test attributes to
    /// run-to-run noise (neither regressions nor improvements).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) within_noise: Vec<ChangeRow>,
    /// tier1 extension: targets the measurement could not decide (verdict `unknown`), with what
    /// could not be ruled out. (Older records: targets too imprecise for the test, which the
    /// reference rules then decided.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) inconclusive: Vec<super::Inconclusive>,
    /// tier1 extension: significant worsenings beyond their threshold that the absolute floor
    /// (`min_optimized_time_delta_ms`) kept from being regressions, each with the rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) held_by_floor: Vec<super::FloorHeld>,
    /// tier1 extension: which rule decided each target, with the test statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<super::Detection>,
    /// tier1 extension: the suspected targets compared side by side with the anchor's own code
    /// (absent in older records and in runs without an anchor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) side_by_side: Option<super::SideBySideBlock>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

/// One row of a trend snapshot's `history` / `evidence_history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrendRow {
    /// Run id.
    pub(crate) run_id: String,
    /// RFC 3339 time.
    pub(crate) generated_at: String,
    /// Aggregates.
    pub(crate) avg_speedup: Option<Finite>,
    /// Median.
    pub(crate) median_speedup: Option<Finite>,
    /// Geomean.
    pub(crate) geomean_speedup: Option<Finite>,
    /// Representative (falls back to geomean).
    pub(crate) representative_speedup: Option<Finite>,
    /// Max.
    pub(crate) max_speedup: Option<Finite>,
    /// Counts.
    pub(crate) succeeded: u32,
    /// Failed.
    pub(crate) failed: u32,
    /// Skipped.
    pub(crate) skipped: u32,
    /// Missing.
    pub(crate) missing: u32,
}

/// `<run_id>/trend_snapshot.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendSnapshot {
    /// Suite identity.
    pub(crate) suite_name: String,
    /// Accepted or eligible runs.
    pub run_count: u32,
    /// All runs.
    pub(crate) evidence_run_count: u32,
    /// Accepted or eligible runs, by time.
    pub(crate) history: Vec<TrendRow>,
    /// All runs, by time.
    pub(crate) evidence_history: Vec<TrendRow>,
    /// Mean of avg over history.
    pub(crate) avg_speedup: Option<Finite>,
    /// Mean of median over history.
    pub(crate) avg_median_speedup: Option<Finite>,
    /// Mean of geomean over history.
    pub(crate) avg_geomean_speedup: Option<Finite>,
    /// Mean of representative over history.
    pub(crate) representative_speedup: Option<Finite>,
    /// Max of max over history (rejected evidence never counts).
    pub(crate) best_speedup_seen: Option<Finite>,
    /// Newest accepted or eligible run.
    pub latest_run_id: Option<String>,
    /// Newest run of any kind.
    pub(crate) latest_evidence_run_id: Option<String>,
    /// tier1 extension: in a compacted history, what the sealed segments hold (the counts above
    /// include them; the lists hold the live runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sealed: Option<SealedTrend>,
    /// tier1 extension: the lists hold at most the newest `limit` runs each (a snapshot's size does
    /// not grow with the history); absent when they hold every run the counts cover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) listed: Option<ListedTrend>,
}

/// How much of the history a bounded trend snapshot lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ListedTrend {
    /// The most runs each list holds.
    pub(crate) limit: u32,
    /// Accepted or eligible runs counted but not listed in `history`.
    pub(crate) history_unlisted: u32,
    /// Runs counted but not listed in `evidence_history`.
    pub(crate) evidence_history_unlisted: u32,
}

/// The sealed part of a compacted history's trend snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedTrend {
    /// Segments.
    pub(crate) segments: u32,
    /// Accepted or eligible sealed runs.
    pub(crate) run_count: u32,
    /// All sealed runs.
    pub(crate) evidence_run_count: u32,
}
