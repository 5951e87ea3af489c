//! Which live runs compaction must leave live: the newest runs (the tail, at least the detection
//! window `thresholds.history_window`), any run whose files are not all under `<run_id>/`, the
//! latest eligible anchor (restore binds it to its
//! evidence), the latest anchor of every suite identity (promotion's prior anchor), the anchors the
//! tail was compared with, the latest accepted and latest evidence runs (trend snapshots), and every
//! run any later noise estimate can use: for each suite identity and environment key seen, and for
//! an environment not seen yet, the newest `history_window` accepted runs that
//! [`NoiseHistory::load`](crate::regress::noise::NoiseHistory::load) would select. A later query's
//! window is always among these runs and the runs published after them, so sealing the rest never
//! changes a comparison.

use crate::history::error::HistoryError;
use crate::history::model::IndexRow;
use crate::history::package::{load_run, read_json};
use crate::history::trend::parsed_time;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The facts of an accepted run that decide which noise windows take it.
struct NoiseFacts {
    suite: (String, u32),
    env: Option<String>,
    /// It belongs to a segment (an anchor, or compared with one): the noise history counts it.
    in_segment: bool,
}

/// The facts of an accepted run (its summary and regression summary are read; None for a run
/// that is not accepted).
fn noise_facts(root: &Path, row: &IndexRow) -> Result<Option<NoiseFacts>, HistoryError> {
    if !row.is_accepted() {
        return Ok(None);
    }
    let summary: crate::history::model::Summary = read_json(root, &row.summary_path)?;
    let regression: crate::history::model::RegressionSummary =
        read_json(root, &row.regression_json_path)?;
    Ok(Some(NoiseFacts {
        suite: (summary.suite_name, summary.suite_version),
        env: summary.environment.as_ref().map(|e| e.key()),
        in_segment: row.is_eligible() || regression.baseline_run_id.is_some(),
    }))
}

/// A later noise query: a suite identity and the environment key of the run being judged
/// (`Some(None)`: a run that records no environment; `None`: an environment not seen yet).
type Query = ((String, u32), Option<Option<String>>);

fn matches(q: &Query, f: &NoiseFacts) -> bool {
    if q.0 != f.suite || !f.in_segment {
        return false;
    }
    match (&q.1, &f.env) {
        (Some(Some(want)), Some(env)) => want == env,
        (None, Some(_)) => false,
        _ => true,
    }
}

/// Every run of any later noise window: indices into `rows` (publication order).
fn noise_windows(
    root: &Path,
    rows: &[IndexRow],
    window: usize,
) -> Result<BTreeSet<usize>, HistoryError> {
    let mut keep = BTreeSet::new();
    let mut counts: BTreeMap<Query, usize> = BTreeMap::new();
    let facts = crate::par::map(rows, |row| noise_facts(root, row));
    for (i, f) in facts.into_iter().enumerate().rev() {
        let Some(f) = f? else {
            continue;
        };
        // A query seen for the first time starts where the query of an unseen environment is:
        // the newer runs it takes are exactly the newer runs that record no environment.
        let mut fresh: Vec<Query> = vec![(f.suite.clone(), Some(None)), (f.suite.clone(), None)];
        if let Some(env) = &f.env {
            fresh.push((f.suite.clone(), Some(Some(env.clone()))));
        }
        for q in fresh {
            if !counts.contains_key(&q) {
                let start = counts.get(&(q.0.clone(), None)).copied().unwrap_or(0);
                counts.insert(q, start);
            }
        }
        for (q, n) in counts.iter_mut() {
            if *n < window && matches(q, &f) {
                *n += 1;
                keep.insert(i);
            }
        }
    }
    Ok(keep)
}

/// The live rows (indices into `rows`, publication order) that must stay live.
pub(crate) fn pinned_rows(
    root: &Path,
    rows: &[IndexRow],
    window: usize,
    tail: usize,
) -> Result<BTreeSet<usize>, HistoryError> {
    let n = rows.len();
    let mut keep: BTreeSet<usize> = (n.saturating_sub(tail.max(window))..n).collect();
    // A row whose files are not all under `<run_id>/` cannot be sealed as a whole run.
    keep.extend(rows.iter().enumerate().filter_map(|(i, r)| {
        let prefix = format!("{}/", r.run_id);
        crate::history::package::row_paths(r)
            .iter()
            .any(|(_, p)| !p.starts_with(&prefix))
            .then_some(i)
    }));
    if let Some(i) = rows.iter().rposition(IndexRow::is_eligible) {
        keep.insert(i);
    }
    if let Some(i) = rows.iter().rposition(IndexRow::is_accepted) {
        keep.insert(i);
    }
    let by_time = |pred: &dyn Fn(&IndexRow) -> bool| {
        rows.iter()
            .enumerate()
            .filter(|(_, r)| pred(r))
            .max_by(|(_, a), (_, b)| {
                (parsed_time(&a.generated_at), &a.run_id)
                    .cmp(&(parsed_time(&b.generated_at), &b.run_id))
            })
            .map(|(i, _)| i)
    };
    keep.extend(by_time(&|r| r.is_accepted() || r.is_eligible()));
    keep.extend(by_time(&|_| true));
    let mut suites = BTreeSet::new();
    for (i, row) in rows
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, r)| r.is_eligible())
    {
        let s = load_run(root, row)?.summary;
        if suites.insert((s.suite_name, s.suite_version)) {
            keep.insert(i);
        }
    }
    let tail_rows: Vec<usize> = keep.iter().copied().filter(|i| *i + tail >= n).collect();
    for i in tail_rows {
        let baseline = load_run(root, &rows[i])?.regression.baseline_run_id;
        if let Some(a) = baseline.and_then(|b| rows.iter().position(|r| r.run_id == b)) {
            keep.insert(a);
        }
    }
    keep.extend(noise_windows(root, rows, window)?);
    Ok(keep)
}
