//! The header of a history export (`tier1-export`): one JSON member, `_tier1-export.json`, at the
//! root of the export archive beside the history package it carries (`index.json`, the live runs,
//! `segments/`). Its name cannot be a run id (run ids start with a letter or digit).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The header's member name.
pub const EXPORT_HEADER: &str = "_tier1-export.json";
/// `format` of the header.
pub(crate) const EXPORT_FORMAT: &str = "tier1-history-export";
/// Current `format_version`.
pub(crate) const EXPORT_FORMAT_VERSION: u32 = 1;

/// What an export says about the history it carries (checked again on restore).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExportHeader {
    /// Always [`EXPORT_FORMAT`].
    pub(crate) format: String,
    /// [`EXPORT_FORMAT_VERSION`].
    pub(crate) format_version: u32,
    /// Suite identity.
    pub(crate) suite_name: String,
    /// Suite version.
    pub(crate) suite_version: u32,
    /// Runs in the history (live and sealed).
    pub(crate) run_count: usize,
    /// Runs sealed in segments.
    pub(crate) sealed_run_count: usize,
    /// Segments.
    pub(crate) segment_count: usize,
    /// The last link of the hash chain.
    pub(crate) chain_head: Option<String>,
    /// The latest eligible anchor.
    pub(crate) anchor_run_id: Option<String>,
    /// The newest run (publication order).
    pub(crate) latest_run_id: Option<String>,
    /// Its `generated_at`.
    pub(crate) latest_generated_at: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

impl ExportHeader {
    /// The header of the (validated) history whose index is `doc`, anchored at `anchor_run_id`.
    pub(crate) fn of(
        doc: &super::package::IndexDoc,
        anchor_run_id: Option<String>,
    ) -> ExportHeader {
        let latest = doc.index.runs.last();
        ExportHeader {
            format: EXPORT_FORMAT.into(),
            format_version: EXPORT_FORMAT_VERSION,
            suite_name: doc.index.suite_name.clone(),
            suite_version: doc.index.suite_version,
            run_count: doc.total_run_count(),
            sealed_run_count: doc.sealed_run_count(),
            segment_count: doc.index.segments.len(),
            chain_head: doc.chain_head(),
            anchor_run_id,
            latest_run_id: latest.map(|r| r.run_id.clone()),
            latest_generated_at: latest.map(|r| r.generated_at.clone()),
            extra: Map::new(),
        }
    }

    /// The fields that differ between this header and `found` (the history actually carried).
    pub(crate) fn differences(&self, found: &ExportHeader) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |name: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{name}: the header says {a}, the history has {b}"));
            }
        };
        check(
            "suite",
            format!("{}/v{}", self.suite_name, self.suite_version),
            format!("{}/v{}", found.suite_name, found.suite_version),
        );
        check(
            "run_count",
            self.run_count.to_string(),
            found.run_count.to_string(),
        );
        check(
            "sealed_run_count",
            self.sealed_run_count.to_string(),
            found.sealed_run_count.to_string(),
        );
        check(
            "segment_count",
            self.segment_count.to_string(),
            found.segment_count.to_string(),
        );
        check(
            "chain_head",
            format!("{:?}", self.chain_head),
            format!("{:?}", found.chain_head),
        );
        check(
            "anchor_run_id",
            format!("{:?}", self.anchor_run_id),
            format!("{:?}", found.anchor_run_id),
        );
        check(
            "latest_run_id",
            format!("{:?}", self.latest_run_id),
            format!("{:?}", found.latest_run_id),
        );
        out
    }
}
