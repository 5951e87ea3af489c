//! The sealed runs of a compacted history as the dashboard sees them: one chart point per run,
//! read from the segments' manifests (only the manifest of each archive is decompressed), so the
//! trends span the whole history while the cards and tables show the live runs.

use crate::history::error::HistoryError;
use crate::history::model::Index;
use crate::history::segment::SealedTarget;
use crate::history::segment_io::read_manifest;
use chrono::{DateTime, Utc};
use std::path::Path;

/// A sealed run: what its charts need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SealedPoint {
    /// Run id.
    pub(crate) run_id: String,
    /// `generated_at` as stored.
    pub(crate) generated_at: String,
    /// Parsed `generated_at`.
    pub(crate) time: Option<DateTime<Utc>>,
    /// `baseline_eligible` (an anchor).
    pub(crate) eligible: bool,
    /// `run_accepted`.
    pub(crate) accepted: bool,
    /// The suite representative (geomean) speedup.
    pub(crate) representative: Option<f64>,
    /// `max_speedup` of the row.
    pub(crate) max_speedup: Option<f64>,
    /// The summary's targets.
    pub(crate) targets: Vec<SealedTarget>,
}

impl SealedPoint {
    /// Accepted or eligible (the trend `history` rule).
    pub(crate) fn counts_as_accepted(&self) -> bool {
        self.eligible || self.accepted
    }
}

fn number(row: &serde_json::Map<String, serde_json::Value>, key: &str) -> Option<f64> {
    row.get(key)
        .and_then(serde_json::Value::as_f64)
        .filter(|x| x.is_finite())
}

/// The sealed runs of every segment of `index` under `root`, in chain order.
pub(crate) fn load(root: &Path, index: &Index) -> Result<Vec<SealedPoint>, HistoryError> {
    let mut out = Vec::new();
    for s in &index.segments {
        let m = read_manifest(root, &s.path)?;
        for run in m.runs {
            let row = &run.row;
            let flag = |k: &str| row.get(k).and_then(serde_json::Value::as_bool) == Some(true);
            let text = |k: &str| {
                row.get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let generated_at = text("generated_at");
            out.push(SealedPoint {
                run_id: text("run_id"),
                time: crate::history::trend::parsed_time(&generated_at),
                generated_at,
                eligible: flag("baseline_eligible"),
                accepted: flag("run_accepted"),
                representative: number(row, "representative_speedup")
                    .or_else(|| number(row, "geomean_speedup")),
                max_speedup: number(row, "max_speedup"),
                targets: run.targets,
            });
        }
    }
    Ok(out)
}
