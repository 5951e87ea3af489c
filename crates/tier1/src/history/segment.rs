//! Sealed segments of a compacted history (format extension, `schema_version` 2): the record each
//! segment has in `index.json` (`segments`), the manifest stored as the first member of its
//! archive (`segments/<name>.tar.gz`), and the names and versions of both. Writing and reading the
//! archives is `segment_io`; where the hash chain runs through a segment is `chain`.

use crate::json::Finite;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `schema_version` of an index that has sealed segments (3: each record is an item of the hash
/// chain; some archives may live in the vault, `vaulted`).
pub(crate) const SEGMENTED_SCHEMA_VERSION: u32 = 3;
/// `schema_version` of a compacted index written before version 3 (records beside the chain,
/// every archive in the package). Read, and rewritten as version 3 by the next publication.
pub(crate) const LEGACY_SEGMENTED_SCHEMA_VERSION: u32 = 2;
/// Directory of the segment archives, relative to the history root.
pub(crate) const SEGMENTS_DIR: &str = "segments";
/// File-name suffix of a segment archive.
pub(crate) const SEGMENT_SUFFIX: &str = ".tar.gz";
/// Name of the manifest, the first member of every segment archive.
pub(crate) const MANIFEST_MEMBER: &str = "segment.json";
/// `format` of a segment manifest.
pub(crate) const SEGMENT_FORMAT: &str = "tier1-history-segment";
/// Current `format_version` of segment archives and records (2: the record lists no run ids but
/// the first and last, and carries a chart summary; 1: schema_version 2 packages, every run id).
pub(crate) const SEGMENT_FORMAT_VERSION: u32 = 2;
/// The versions a reader accepts.
pub(crate) const SEGMENT_FORMAT_VERSIONS: [u32; 2] = [1, 2];
/// Most runs one segment holds.
pub(crate) const MAX_SEGMENT_RUNS: usize = 1_000;

/// A segment's entry in `index.json` `segments` (chain order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentRecord {
    /// `seg-<6 digits>`, unique in the index.
    pub(crate) name: String,
    /// `segments/<name>.tar.gz`.
    pub(crate) path: String,
    /// Format version of the archive (1).
    pub(crate) format_version: u32,
    /// `sha256:<64 lower hex>` of the archive file.
    pub(crate) digest: String,
    /// Size of the archive file.
    pub(crate) bytes: u64,
    /// Sealed runs.
    pub(crate) run_count: u32,
    /// Their run ids, in chain (publication) order (format version 1 only: a version 2 record
    /// names the first and last, the manifest all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_ids: Option<Vec<String>>,
    /// The first sealed run id in chain order (format version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_run_id: Option<String>,
    /// The last sealed run id in chain order (format version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_run_id: Option<String>,
    /// The chain link before the first sealed row (`""` at the start of a chain).
    pub(crate) chain_prev: String,
    /// The link of the last sealed row.
    pub(crate) chain_head: String,
    /// Sealed eligible runs that were compared with no anchor (at most one per history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) initial_anchors: Vec<String>,
    /// What the sealed runs add to a trend snapshot.
    pub(crate) trend: TrendTotals,
    /// What the dashboard draws of the sealed runs (format version 2; added to a version 1
    /// record when its index is rewritten as schema_version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chart: Option<ChartSummary>,
    /// The record's own link: SHA-256 hex of `chain_prev` followed by the canonical record
    /// without this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chain_sha256: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

impl SegmentRecord {
    /// The run ids the record itself names: every sealed run of a version 1 record; the first
    /// and last (and the initial anchors) of a version 2 record, whose manifest names the rest.
    pub(crate) fn named_run_ids(&self) -> Vec<&str> {
        let mut v: Vec<&str> = match &self.run_ids {
            Some(ids) => ids.iter().map(String::as_str).collect(),
            None => [&self.first_run_id, &self.last_run_id]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect(),
        };
        v.extend(self.initial_anchors.iter().map(String::as_str));
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The name of the vault object that holds this segment's archive:
    /// `<prefix>-segment-<64 hex of its SHA-256>` (content-addressed).
    pub(crate) fn vault_name(&self, prefix: &crate::artifacts::ArtifactPrefix) -> String {
        let hex = self.digest.strip_prefix("sha256:").unwrap_or(&self.digest);
        format!("{prefix}-segment-{hex}")
    }

    /// The archive's file name (`<name>.tar.gz`).
    pub(crate) fn file_name(&self) -> String {
        format!("{}{SEGMENT_SUFFIX}", self.name)
    }
}

/// What the dashboard draws of a segment's sealed runs: one point per segment (the median of each
/// charted value over its accepted runs, with the spread), so the trends span the whole history
/// while the package keeps no sealed run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ChartSummary {
    /// `generated_at` of the earliest sealed run (by time), as stored.
    pub(crate) from: String,
    /// `generated_at` of the latest sealed run (by time), as stored.
    pub(crate) to: String,
    /// The suite representative (geomean) speedup of the accepted or eligible runs.
    pub(crate) representative: Option<Spread>,
    /// Per target string, the charted value (speedup, memory savings or time, by goal) of the
    /// accepted or eligible runs where it succeeded, in the order first seen.
    pub(crate) targets: Vec<ChartTarget>,
}

/// Median, extremes and count of a charted value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spread {
    /// How many values.
    pub(crate) n: u32,
    /// Their median.
    pub(crate) median: Finite,
    /// The smallest.
    pub(crate) min: Finite,
    /// The largest.
    pub(crate) max: Finite,
}

/// One target of a [`ChartSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ChartTarget {
    /// Target string.
    pub(crate) target: String,
    /// Target key.
    pub(crate) key: String,
    /// `optimization_goal`, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimization_goal: Option<String>,
    /// The charted value's spread.
    pub(crate) value: Spread,
}

/// The manifest of a segment archive (its first member, `segment.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SegmentManifest {
    /// Always [`SEGMENT_FORMAT`].
    pub(crate) format: String,
    /// [`SEGMENT_FORMAT_VERSION`].
    pub(crate) format_version: u32,
    /// The segment's name.
    pub(crate) name: String,
    /// Suite identity of the history.
    pub(crate) suite_name: String,
    /// Suite version of the history.
    pub(crate) suite_version: u32,
    /// As in the record.
    pub(crate) chain_prev: String,
    /// As in the record.
    pub(crate) chain_head: String,
    /// The sealed runs, in chain order.
    pub(crate) runs: Vec<SealedRun>,
}

impl SegmentManifest {
    /// The sealed run ids, in chain order.
    pub(crate) fn run_ids(&self) -> Vec<&str> {
        self.runs
            .iter()
            .map(|r| r.row.get("run_id").and_then(Value::as_str).unwrap_or(""))
            .collect()
    }
}

/// One sealed run of a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedRun {
    /// The `index.json` row exactly as it was stored (its `chain_sha256` included).
    pub(crate) row: Map<String, Value>,
    /// The anchor its comparison used (`regression_summary.json` `baseline_run_id`).
    pub(crate) baseline_run_id: Option<String>,
    /// Every file of the run directory in the archive, sorted by path.
    pub(crate) files: Vec<SealedFile>,
    /// The summary's targets, as the dashboard charts them.
    pub(crate) targets: Vec<SealedTarget>,
}

/// A file of a sealed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SealedFile {
    /// `<run_id>/<file>`.
    pub(crate) path: String,
    /// `sha256:<hex>` of its bytes.
    pub(crate) digest: String,
    /// Its size.
    pub(crate) bytes: u64,
}

/// The chart facts of a sealed run's target (copied from its summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedTarget {
    /// Target string.
    pub(crate) target: String,
    /// Target key.
    pub(crate) key: String,
    /// Status.
    pub(crate) status: String,
    /// `optimization_goal`, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimization_goal: Option<String>,
    /// Best speedup.
    #[serde(default)]
    pub(crate) best_speedup: Option<Finite>,
    /// Best memory savings (percent).
    #[serde(default)]
    pub(crate) best_memory_savings_pct: Option<Finite>,
    /// Baseline time in ms (what a `time`-goal target charts); absent when not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_time_ms: Option<Finite>,
}

/// What a set of sealed runs adds to a trend snapshot (`history::trend::totals`): counts, sums for
/// the means, the best speedup and the latest runs, so a snapshot stays exact for the whole history
/// while it lists only the live runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrendTotals {
    /// Accepted or eligible runs.
    pub(crate) run_count: u32,
    /// All runs.
    pub(crate) evidence_run_count: u32,
    /// Sum and count of the finite `avg_speedup` of accepted or eligible runs.
    pub(crate) avg_speedup: SumCount,
    /// Same for `median_speedup`.
    pub(crate) median_speedup: SumCount,
    /// Same for `geomean_speedup`.
    pub(crate) geomean_speedup: SumCount,
    /// Same for `representative_speedup` (falling back to geomean).
    pub(crate) representative_speedup: SumCount,
    /// Max `max_speedup` of accepted or eligible runs.
    #[serde(default)]
    pub(crate) best_speedup_seen: Option<Finite>,
    /// Newest accepted or eligible run by time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) latest: Option<RunAt>,
    /// Newest run of any kind by time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) latest_evidence: Option<RunAt>,
}

/// A sum of finite values and how many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SumCount {
    /// The sum.
    pub(crate) sum: Finite,
    /// The count.
    pub(crate) n: u32,
}

/// A run and its stored `generated_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunAt {
    /// Run id.
    pub(crate) run_id: String,
    /// As stored.
    pub(crate) generated_at: String,
}

/// The name of the `n`-th segment (1-based).
pub(crate) fn segment_name(n: u32) -> String {
    format!("seg-{n:06}")
}

/// The number in a segment name, when it is one.
pub(crate) fn segment_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("seg-")?;
    (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// `segments/<name>.tar.gz`.
pub(crate) fn segment_path(name: &str) -> String {
    format!("{SEGMENTS_DIR}/{name}{SEGMENT_SUFFIX}")
}

/// True for a stored path of a segment archive (`segments/<safe name>.tar.gz`, no deeper).
pub(crate) fn is_segment_path(rel: &str) -> bool {
    rel.strip_prefix(SEGMENTS_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.strip_suffix(SEGMENT_SUFFIX))
        .is_some_and(|name| !name.contains('/') && crate::fsx::is_safe_run_id(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert_eq!(segment_name(7), "seg-000007");
        assert_eq!(segment_number("seg-000007"), Some(7));
        assert_eq!(segment_number("seg-7"), None);
        assert_eq!(segment_path("seg-000007"), "segments/seg-000007.tar.gz");
        assert!(is_segment_path("segments/seg-000007.tar.gz"));
        for bad in [
            "segments/a/b.tar.gz",
            "segments/.tar.gz",
            "x/seg.tar.gz",
            "segments/seg.zip",
        ] {
            assert!(!is_segment_path(bad), "{bad}");
        }
    }
}
