//! Compaction of a history package before it is written, in large batches with hysteresis: it is
//! due when the live runs outnumber three tails, or the live part of the package (the package
//! without the pending segment archives) passes half of a restore cap; it then seals every run no
//! rule needs live (`keep`), down to one tail plus the pinned runs, but only when at least one tail
//! of runs can be sealed at once (or the live part passed three quarters of a cap), so a segment
//! holds hundreds of runs and is sealed once every few hundred nights, never one run a night. The
//! runs are sealed into segments (`history::segment`), contiguous in the chain, at most
//! `MAX_SEGMENT_RUNS` each. Publication and promotion write their output through
//! [`write_package`], which compacts, rewrites a schema_version 2 index as version 3, writes the
//! trend snapshots and the index, and checks that restore would accept the package before it is
//! renamed into place.

pub(crate) mod keep;
pub(crate) mod package;

pub use package::{PackagePlan, write_package};

use crate::archive::{MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::history::chain::ChainItem;
use crate::history::error::HistoryError;
use crate::history::package::IndexDoc;
use crate::history::segment::{MAX_SEGMENT_RUNS, segment_name, segment_path};
use crate::history::segment_io::{SealRequest, seal};
use crate::history_check::restorable::Footprint;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

/// Runs always kept live at the end of the history when the detection window is smaller.
pub(crate) const MIN_TAIL_RUNS: usize = 100;

/// Compaction is due when the live runs outnumber this many tails.
pub(crate) const MAX_TAILS_LIVE: usize = 3;

/// When to compact and how much to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The detection window (`thresholds.history_window`).
    pub window: usize,
    /// The newest runs kept live: `max(window, min(5 × window, 100))`.
    pub tail: usize,
    /// Compaction is due when there are more live runs than this: `MAX_TAILS_LIVE` tails.
    pub max_live_runs: usize,
    /// Compaction is due when the live part has more members than this: half of restore's cap.
    pub max_members: usize,
    /// Compaction is due when the live part expands to more bytes than this: half of restore's cap.
    pub max_bytes: u64,
    /// A due compaction seals only when at least this many runs can be sealed at once (one tail)...
    pub min_batch: usize,
    /// ...or when the live part has more members than this (three quarters of restore's cap)...
    pub urgent_members: usize,
    /// ...or expands to more bytes than this (three quarters of restore's cap).
    pub urgent_bytes: u64,
}

impl Policy {
    /// The policy of a suite whose detection window is `window` runs.
    pub fn for_window(window: usize) -> Policy {
        let tail = window.max((5 * window).min(MIN_TAIL_RUNS));
        Policy {
            window,
            tail,
            max_live_runs: MAX_TAILS_LIVE * tail,
            max_members: MAX_MEMBERS / 2,
            max_bytes: MAX_EXPANDED_BYTES / 2,
            min_batch: tail,
            urgent_members: MAX_MEMBERS / 4 * 3,
            urgent_bytes: MAX_EXPANDED_BYTES / 4 * 3,
        }
    }

    /// Whether compaction is due for `live` live runs and the live part's footprint `f`.
    pub(crate) fn needs_compaction(&self, live: usize, f: Footprint) -> bool {
        live > self.max_live_runs
            || f.members > self.max_members
            || f.expanded_bytes > self.max_bytes
    }

    /// Whether a due compaction that could seal `sealable` runs does: a batch of at least
    /// `min_batch` runs, or any batch when the live part is past the urgent margins.
    pub(crate) fn seals(&self, sealable: usize, f: Footprint) -> bool {
        sealable > 0
            && (sealable >= self.min_batch
                || f.members > self.urgent_members
                || f.expanded_bytes > self.urgent_bytes)
    }
}

/// The ranges of live rows (publication order) to seal: maximal runs of rows that are not
/// pinned and are contiguous in the chain, cut into pieces of at most [`MAX_SEGMENT_RUNS`].
pub(crate) fn plan(
    doc: &IndexDoc,
    pinned: &BTreeSet<usize>,
) -> Result<Vec<Range<usize>>, HistoryError> {
    let mut out = Vec::new();
    let mut open: Option<Range<usize>> = None;
    let close = |r: Option<Range<usize>>, out: &mut Vec<Range<usize>>| {
        if let Some(r) = r {
            let mut s = r.start;
            while s < r.end {
                let e = (s + MAX_SEGMENT_RUNS).min(r.end);
                out.push(s..e);
                s = e;
            }
        }
    };
    for item in doc.chain_items()? {
        match item {
            ChainItem::Row(i) if !pinned.contains(&i) => match &mut open {
                Some(r) if r.end == i => r.end = i + 1,
                _ => close(open.replace(i..i + 1), &mut out),
            },
            _ => close(open.take(), &mut out),
        }
    }
    close(open, &mut out);
    Ok(out)
}

/// What one compaction sealed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sealed {
    /// The new segments' names.
    pub(crate) segments: Vec<String>,
    /// The run ids sealed.
    pub(crate) run_ids: Vec<String>,
}

/// Seal `ranges` of `doc`'s live rows, whose run directories are under `root` (a staged tree):
/// each segment archive is written to `root/segments/`, its rows replaced by its record, and the
/// sealed run directories removed from `root`.
pub(crate) fn seal_ranges(
    root: &Path,
    doc: &mut IndexDoc,
    ranges: &[Range<usize>],
) -> Result<Sealed, HistoryError> {
    let io = |what: &str, e: std::io::Error| HistoryError::write(what, &e);
    let mut out = Sealed::default();
    let first = doc.next_segment_number();
    let rows = doc.raw_rows();
    let jobs: Vec<(u32, Range<usize>, String)> = ranges
        .iter()
        .zip(first..)
        .map(|(r, n)| Ok((n, r.clone(), doc.link_before(r.start)?)))
        .collect::<Result<_, HistoryError>>()?;
    // Segments are sealed (read, compressed, written) on a few threads, each archive written as
    // soon as it is built.
    let sealed = crate::par::map(&jobs, |(n, r, chain_prev)| {
        let name = segment_name(*n);
        let rows = r
            .clone()
            .map(|i| {
                let raw = rows[i].as_object().ok_or_else(|| {
                    HistoryError::structural(
                        crate::history::INDEX_FILE,
                        format!("runs[{i}]: expected an object"),
                    )
                })?;
                Ok((raw, &doc.index.runs[i]))
            })
            .collect::<Result<_, HistoryError>>()?;
        let sealed = seal(&SealRequest {
            root,
            name: name.clone(),
            suite: (&doc.index.suite_name, doc.index.suite_version),
            chain_prev: chain_prev.clone(),
            rows,
        })?;
        let path = root.join(segment_path(&name));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(&sealed.record.path, e))?;
        }
        crate::fsx::write_atomic(&path, &sealed.bytes).map_err(|e| io(&sealed.record.path, e))?;
        Ok((r.clone(), sealed.record))
    });
    let records = sealed
        .into_iter()
        .collect::<Result<Vec<_>, HistoryError>>()?;
    for (range, record) in &records {
        out.segments.push(record.name.clone());
        out.run_ids.extend(
            doc.index.runs[range.clone()]
                .iter()
                .map(|r| r.run_id.clone()),
        );
    }
    doc.seal_rows(&records)?;
    for id in &out.run_ids {
        std::fs::remove_dir_all(root.join(id)).map_err(|e| io(id, e))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(members: usize, mib: u64) -> Footprint {
        Footprint {
            members,
            expanded_bytes: mib * 1024 * 1024,
            archive_bytes_bound: 0,
        }
    }

    /// Hysteresis: due past three tails or half a cap of the live part; seals a batch of at least
    /// a tail, or anything past three quarters of a cap; never a segment a night.
    #[test]
    fn compaction_is_due_late_and_seals_whole_batches() {
        let p = Policy::for_window(20);
        assert_eq!((p.tail, p.max_live_runs, p.min_batch), (100, 300, 100));
        assert!(!p.needs_compaction(300, f(1500, 20)));
        assert!(p.needs_compaction(301, f(1500, 20)));
        assert!(p.needs_compaction(150, f(5001, 20)), "members");
        assert!(p.needs_compaction(150, f(700, 33)), "bytes");
        assert!(p.seals(100, f(1500, 20)));
        assert!(!p.seals(99, f(1500, 20)), "a small batch waits");
        assert!(
            !p.seals(1, f(700, 40)),
            "one run a night never, under the urgent margin"
        );
        assert!(
            p.seals(1, f(700, 49)),
            "past three quarters of the byte cap"
        );
        assert!(
            p.seals(1, f(7501, 20)),
            "past three quarters of the member cap"
        );
        assert!(!p.seals(0, f(9999, 63)), "nothing to seal");
    }
}
