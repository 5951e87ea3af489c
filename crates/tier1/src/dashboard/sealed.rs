//! The sealed runs of a compacted history as the dashboard sees them: one chart point per
//! segment, from its record's chart summary (the median of each charted value over its accepted
//! runs, at the time of its latest run), so the trends span the whole history while the package
//! holds no sealed run and the cards and tables show the live runs. A record written before chart
//! summaries existed (a schema_version 2 package) is summarized from its archive's manifest.

use crate::history::error::HistoryError;
use crate::history::model::{Index, IndexRow};
use crate::history::segment::{ChartSummary, SealedTarget, SegmentRecord};
use crate::history::segment_io::read_manifest;
use chrono::{DateTime, Utc};
use std::path::Path;

/// A segment: what its chart point and the run counts need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SealedPoint {
    /// The point's label: the segment's name and its run count.
    pub(crate) run_id: String,
    /// `generated_at` of its latest run, as stored.
    pub(crate) generated_at: String,
    /// Parsed `generated_at`.
    pub(crate) time: Option<DateTime<Utc>>,
    /// Runs sealed in it.
    pub(crate) runs: usize,
    /// Of which accepted or eligible.
    pub(crate) accepted_runs: usize,
    /// The median suite representative (geomean) speedup of its accepted runs.
    pub(crate) representative: Option<f64>,
    /// The best `max_speedup` of its accepted runs.
    pub(crate) max_speedup: Option<f64>,
    /// Per target, the median charted value of its accepted runs.
    pub(crate) targets: Vec<SealedTarget>,
}

fn point(s: &SegmentRecord, chart: &ChartSummary) -> SealedPoint {
    let targets = chart
        .targets
        .iter()
        .map(|t| {
            let v = Some(t.value.median);
            let goal = crate::suite::Goal::from_stored(t.optimization_goal.as_deref());
            SealedTarget {
                target: t.target.clone(),
                key: t.key.clone(),
                status: "succeeded".into(),
                optimization_goal: t.optimization_goal.clone(),
                best_speedup: v.filter(|_| goal == crate::suite::Goal::Speed),
                best_memory_savings_pct: v.filter(|_| goal == crate::suite::Goal::Memory),
                baseline_time_ms: v.filter(|_| goal == crate::suite::Goal::Time),
            }
        })
        .collect();
    SealedPoint {
        run_id: format!("{} ({} sealed runs, median)", s.name, s.run_count),
        time: crate::history::trend::parsed_time(&chart.to),
        generated_at: chart.to.clone(),
        runs: s.run_count as usize,
        accepted_runs: s.trend.run_count as usize,
        representative: chart.representative.map(|r| f64::from(r.median)),
        max_speedup: s.trend.best_speedup_seen.map(f64::from),
        targets,
    }
}

/// The chart summary of a record that has none, from its archive under `root` (None when the
/// archive is not in the package).
fn summarize_legacy(root: &Path, s: &SegmentRecord) -> Result<Option<ChartSummary>, HistoryError> {
    if !root.join(&s.path).is_file() {
        return Ok(None);
    }
    let m = read_manifest(root, &s.path)?;
    let rows = m
        .runs
        .iter()
        .map(|r| {
            serde_json::from_value::<IndexRow>(serde_json::Value::Object(r.row.clone()))
                .map_err(|e| HistoryError::integrity(&s.path, format!("sealed row: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(crate::history::segment_chart::chart_of(
        rows.iter().zip(m.runs.iter().map(|r| r.targets.as_slice())),
    )))
}

/// One point per segment of `index` under `root`, in chain order.
pub(crate) fn load(root: &Path, index: &Index) -> Result<Vec<SealedPoint>, HistoryError> {
    let mut out = Vec::with_capacity(index.segments.len());
    for s in &index.segments {
        let chart = match &s.chart {
            Some(c) => Some(c.clone()),
            None => summarize_legacy(root, s)?,
        };
        let chart = chart.unwrap_or_default();
        out.push(point(s, &chart));
    }
    Ok(out)
}
