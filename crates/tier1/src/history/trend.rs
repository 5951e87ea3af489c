//! The trend snapshot (contract §2.4), built from an index: `history` holds accepted or eligible
//! runs only, so rejected evidence never changes `run_count`, `best_speedup_seen` or `latest_run_id`.

use super::model::{Index, IndexRow, TrendRow, TrendSnapshot};
use chrono::{DateTime, Utc};

/// Parsed UTC time of a stored `generated_at`; an unparsable value counts as the earliest time.
pub fn parsed_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Rows sorted for display: by parsed time (unparsable first), then run id.
pub fn sorted_by_time(runs: &[IndexRow]) -> Vec<&IndexRow> {
    let mut v: Vec<&IndexRow> = runs.iter().collect();
    v.sort_by(|a, b| {
        parsed_time(&a.generated_at)
            .cmp(&parsed_time(&b.generated_at))
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    v
}

fn row(r: &IndexRow) -> TrendRow {
    TrendRow {
        run_id: r.run_id.clone(),
        generated_at: r.generated_at.clone(),
        avg_speedup: r.avg_speedup,
        median_speedup: r.median_speedup,
        geomean_speedup: r.geomean_speedup,
        representative_speedup: r.representative_speedup.or(r.geomean_speedup),
        max_speedup: r.max_speedup,
        succeeded: r.succeeded,
        failed: r.failed,
        skipped: r.skipped,
        missing: r.missing,
    }
}

fn mean(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().filter(|x| x.is_finite()).collect();
    crate::stats::mean(&v).filter(|m| m.is_finite())
}

/// Build the snapshot of an index.
pub fn build(index: &Index) -> TrendSnapshot {
    let all: Vec<TrendRow> = sorted_by_time(&index.runs).into_iter().map(row).collect();
    let history: Vec<TrendRow> = sorted_by_time(&index.runs)
        .into_iter()
        .filter(|r| r.is_accepted() || r.is_eligible())
        .map(row)
        .collect();
    let best = history
        .iter()
        .filter_map(|r| r.max_speedup)
        .filter(|x| x.is_finite())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    TrendSnapshot {
        suite_name: index.suite_name.clone(),
        run_count: history.len() as u32,
        evidence_run_count: all.len() as u32,
        avg_speedup: mean(history.iter().map(|r| r.avg_speedup)),
        avg_median_speedup: mean(history.iter().map(|r| r.median_speedup)),
        avg_geomean_speedup: mean(history.iter().map(|r| r.geomean_speedup)),
        representative_speedup: mean(history.iter().map(|r| r.representative_speedup)),
        best_speedup_seen: best,
        latest_run_id: history.last().map(|r| r.run_id.clone()),
        latest_evidence_run_id: all.last().map(|r| r.run_id.clone()),
        history,
        evidence_history: all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(rows: serde_json::Value) -> Index {
        serde_json::from_value(json!({"suite_name": "tier1", "suite_version": 1, "runs": rows}))
            .unwrap()
    }

    fn r(id: &str, at: &str, max: f64, accepted: bool) -> serde_json::Value {
        json!({"run_id": id, "generated_at": at, "summary_path": "x", "regression_summary_path": "x",
               "regression_json_path": "x", "trend_snapshot_path": "x", "avg_speedup": max,
               "geomean_speedup": max, "max_speedup": max, "run_accepted": accepted})
    }

    #[test]
    fn rejected_evidence_does_not_contaminate() {
        let idx = index(json!([
            r("anchor", "2026-08-16T00:00:00Z", 2.0, true),
            r("external", "2026-08-17T00:00:00Z", 2000.0, false),
        ]));
        let t = build(&idx);
        assert_eq!(t.run_count, 1);
        assert_eq!(t.evidence_run_count, 2);
        assert_eq!(t.best_speedup_seen, Some(2.0));
        assert_eq!(t.latest_run_id.as_deref(), Some("anchor"));
        assert_eq!(t.latest_evidence_run_id.as_deref(), Some("external"));
        assert_eq!(
            t.history[0].representative_speedup,
            Some(2.0),
            "falls back to geomean"
        );
    }

    #[test]
    fn sorted_by_parsed_time_then_id() {
        let idx = index(json!([
            r("b", "2026-08-16T02:00:00+02:00", 1.0, true),
            r("a", "2026-08-16T00:00:00Z", 1.0, true),
            r("c", "garbage", 1.0, true),
        ]));
        let ids: Vec<_> = build(&idx).history.into_iter().map(|r| r.run_id).collect();
        assert_eq!(ids, ["c", "a", "b"]);
    }
}
