//! The trend snapshot (contract §2.4), built from an index: `history` holds accepted or eligible
//! runs only, so rejected evidence never changes `run_count`, `best_speedup_seen` or `latest_run_id`.
//! Each list holds at most the newest [`TREND_LIST_RUNS`] runs (every run's snapshot listed every
//! live run twice, so a package grew with the square of the window); the counts, means, best
//! speedup and latest runs cover every run. In a compacted index the sealed segments'
//! [`TrendTotals`] keep them those of the whole history.

use super::model::{Index, IndexRow, ListedTrend, SealedTrend, TrendRow, TrendSnapshot};
use super::segment::{RunAt, SumCount, TrendTotals};
use crate::json::Finite;
use chrono::{DateTime, Utc};

/// The most runs each list of a trend snapshot holds (the newest, by time).
pub(crate) const TREND_LIST_RUNS: usize = 20;

/// Keep the newest [`TREND_LIST_RUNS`] of `rows` (sorted by time); how many were left out.
fn newest(mut rows: Vec<TrendRow>) -> (Vec<TrendRow>, u32) {
    let cut = rows.len().saturating_sub(TREND_LIST_RUNS);
    (rows.split_off(cut), cut as u32)
}

/// The `listed` extension: None when both lists hold every run.
fn listed(history_unlisted: u32, evidence_history_unlisted: u32) -> Option<ListedTrend> {
    (history_unlisted + evidence_history_unlisted > 0).then_some(ListedTrend {
        limit: TREND_LIST_RUNS as u32,
        history_unlisted,
        evidence_history_unlisted,
    })
}

/// Parsed UTC time of a stored `generated_at`; an unparsable value counts as the earliest time.
pub(crate) fn parsed_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Rows sorted for display: by parsed time (unparsable first), then run id.
pub(crate) fn sorted_by_time(runs: &[IndexRow]) -> Vec<&IndexRow> {
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

fn mean(xs: impl Iterator<Item = Option<Finite>>) -> Option<Finite> {
    let v: Vec<f64> = xs
        .flatten()
        .filter(|x| x.is_finite())
        .map(f64::from)
        .collect();
    crate::stats::mean(&v).and_then(Finite::checked)
}

/// Build the snapshot of an index.
pub(crate) fn build(index: &Index) -> TrendSnapshot {
    if !index.segments.is_empty() {
        return build_compacted(index);
    }
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
        .fold(None, |m: Option<Finite>, x| Some(m.map_or(x, |m| m.max(x))));
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
        listed: listed(
            history.len().saturating_sub(TREND_LIST_RUNS) as u32,
            all.len().saturating_sub(TREND_LIST_RUNS) as u32,
        ),
        history: newest(history).0,
        evidence_history: newest(all).0,
        sealed: None,
    }
}

/// The snapshot of a compacted index: the live rows listed, the whole history counted.
fn build_compacted(index: &Index) -> TrendSnapshot {
    let all: Vec<TrendRow> = sorted_by_time(&index.runs).into_iter().map(row).collect();
    let history: Vec<TrendRow> = sorted_by_time(&index.runs)
        .into_iter()
        .filter(|r| r.is_accepted() || r.is_eligible())
        .map(row)
        .collect();
    let (history, history_unlisted) = newest(history);
    let (all, all_unlisted) = newest(all);
    let sealed = index
        .segments
        .iter()
        .fold(TrendTotals::default(), |acc, s| merge(acc, &s.trend));
    let t = merge(sealed.clone(), &totals(index.runs.iter()));
    let mean = |s: SumCount| {
        (s.n > 0)
            .then(|| s.sum.get() / f64::from(s.n))
            .and_then(Finite::checked)
    };
    TrendSnapshot {
        suite_name: index.suite_name.clone(),
        run_count: t.run_count,
        evidence_run_count: t.evidence_run_count,
        avg_speedup: mean(t.avg_speedup),
        avg_median_speedup: mean(t.median_speedup),
        avg_geomean_speedup: mean(t.geomean_speedup),
        representative_speedup: mean(t.representative_speedup),
        best_speedup_seen: t.best_speedup_seen,
        latest_run_id: t.latest.map(|r| r.run_id),
        latest_evidence_run_id: t.latest_evidence.map(|r| r.run_id),
        listed: listed(history_unlisted, all_unlisted),
        history,
        evidence_history: all,
        sealed: Some(SealedTrend {
            segments: index.segments.len() as u32,
            run_count: sealed.run_count,
            evidence_run_count: sealed.evidence_run_count,
        }),
    }
}

/// What `rows` add to a trend snapshot (sealed into a segment record at compaction).
pub(crate) fn totals<'a>(rows: impl Iterator<Item = &'a IndexRow>) -> TrendTotals {
    let mut t = TrendTotals::default();
    let add = |s: &mut SumCount, x: Option<Finite>| {
        if let Some(x) = x.filter(|x| x.is_finite()) {
            s.sum = (s.sum.get() + x.get()).into();
            s.n += 1;
        }
    };
    for r in rows {
        let at = RunAt {
            run_id: r.run_id.clone(),
            generated_at: r.generated_at.clone(),
        };
        t.evidence_run_count += 1;
        t.latest_evidence = Some(newer(t.latest_evidence.take(), at.clone()));
        if !(r.is_accepted() || r.is_eligible()) {
            continue;
        }
        t.run_count += 1;
        add(&mut t.avg_speedup, r.avg_speedup);
        add(&mut t.median_speedup, r.median_speedup);
        add(&mut t.geomean_speedup, r.geomean_speedup);
        add(
            &mut t.representative_speedup,
            r.representative_speedup.or(r.geomean_speedup),
        );
        if let Some(m) = r.max_speedup.filter(|x| x.is_finite()) {
            t.best_speedup_seen = Some(t.best_speedup_seen.map_or(m, |b| b.max(m)));
        }
        t.latest = Some(newer(t.latest.take(), at));
    }
    t
}

/// Two sets of totals as one.
pub(crate) fn merge(mut a: TrendTotals, b: &TrendTotals) -> TrendTotals {
    let sum = |x: SumCount, y: SumCount| SumCount {
        sum: (x.sum.get() + y.sum.get()).into(),
        n: x.n + y.n,
    };
    a.run_count += b.run_count;
    a.evidence_run_count += b.evidence_run_count;
    a.avg_speedup = sum(a.avg_speedup, b.avg_speedup);
    a.median_speedup = sum(a.median_speedup, b.median_speedup);
    a.geomean_speedup = sum(a.geomean_speedup, b.geomean_speedup);
    a.representative_speedup = sum(a.representative_speedup, b.representative_speedup);
    a.best_speedup_seen = match (a.best_speedup_seen, b.best_speedup_seen) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    if let Some(l) = &b.latest {
        a.latest = Some(newer(a.latest.take(), l.clone()));
    }
    if let Some(l) = &b.latest_evidence {
        a.latest_evidence = Some(newer(a.latest_evidence.take(), l.clone()));
    }
    a
}

/// The later of two runs in display order (parsed time, unparsable first, then run id).
fn newer(a: Option<RunAt>, b: RunAt) -> RunAt {
    let key = |r: &RunAt| (parsed_time(&r.generated_at), r.run_id.clone());
    match a {
        Some(a) if key(&a) > key(&b) => a,
        _ => b,
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
        assert_eq!(t.best_speedup_seen, Some(2.0.into()));
        assert_eq!(t.latest_run_id.as_deref(), Some("anchor"));
        assert_eq!(t.latest_evidence_run_id.as_deref(), Some("external"));
        assert_eq!(
            t.history[0].representative_speedup,
            Some(2.0.into()),
            "falls back to geomean"
        );
    }

    #[test]
    fn a_compacted_snapshot_counts_the_sealed_runs() {
        let rows = json!([
            r("a", "2026-08-16T00:00:00Z", 2.0, true),
            r("b", "2026-08-17T00:00:00Z", 3.0, true),
            r("c", "2026-08-18T00:00:00Z", 900.0, false),
            r("d", "2026-08-19T00:00:00Z", 4.0, true),
        ]);
        let whole = build(&index(rows.clone()));
        let all = index(rows);
        let mut compacted = all.clone();
        let sealed = compacted.runs.drain(..3).collect::<Vec<_>>();
        let seg: crate::history::segment::SegmentRecord = serde_json::from_value(json!({
            "name": "seg-000001", "path": "segments/seg-000001.tar.gz", "format_version": 1,
            "digest": "sha256:00", "bytes": 1, "run_count": 3, "run_ids": ["a", "b", "c"],
            "chain_prev": "", "chain_head": "x",
            "trend": serde_json::to_value(totals(sealed.iter())).unwrap()
        }))
        .unwrap();
        compacted.segments = vec![seg];
        let t = build(&compacted);
        assert_eq!(t.run_count, whole.run_count);
        assert_eq!(t.evidence_run_count, whole.evidence_run_count);
        assert_eq!(t.best_speedup_seen, Some(4.0.into()));
        assert_eq!(t.avg_speedup, whole.avg_speedup);
        assert_eq!(t.latest_run_id.as_deref(), Some("d"));
        assert_eq!(t.latest_evidence_run_id.as_deref(), Some("d"));
        assert_eq!(t.evidence_history.len(), 1, "lists only the live runs");
        let s = t.sealed.expect("sealed counts");
        assert_eq!((s.segments, s.run_count, s.evidence_run_count), (1, 2, 3));
        assert!(whole.sealed.is_none());
    }

    #[test]
    fn a_snapshot_lists_the_newest_runs_and_counts_them_all() {
        let rows: Vec<serde_json::Value> = (0..50)
            .map(|i| {
                r(
                    &format!("r{i:02}"),
                    &format!("2026-08-16T00:{i:02}:00Z"),
                    1.0 + f64::from(i),
                    i % 5 != 0,
                )
            })
            .collect();
        let t = build(&index(serde_json::Value::Array(rows)));
        assert_eq!(t.evidence_history.len(), TREND_LIST_RUNS);
        assert_eq!(t.history.len(), TREND_LIST_RUNS);
        assert_eq!(
            t.evidence_history[0].run_id, "r30",
            "the newest 20, by time"
        );
        assert_eq!(
            (t.run_count, t.evidence_run_count),
            (40, 50),
            "every run counted"
        );
        assert_eq!(t.best_speedup_seen, Some(50.0.into()));
        assert_eq!(t.latest_evidence_run_id.as_deref(), Some("r49"));
        let l = t.listed.expect("listed");
        assert_eq!((l.history_unlisted, l.evidence_history_unlisted), (20, 30));
        let small = build(&index(json!([r("a", "2026-08-16T00:00:00Z", 2.0, true)])));
        assert!(
            small.listed.is_none(),
            "a short history gets the reference snapshot"
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
