//! Sealing live runs into segments: which ranges of live rows to seal ([`plan`]) and sealing
//! them ([`seal_ranges`]), reporting what was sealed ([`Sealed`]).

use crate::history::chain::ChainItem;
use crate::history::error::HistoryError;
use crate::history::package::IndexDoc;
use crate::history::segment::{MAX_SEGMENT_RUNS, segment_name, segment_path};
use crate::history::segment_io::{SealRequest, seal};
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

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
