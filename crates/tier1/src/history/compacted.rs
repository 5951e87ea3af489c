//! A compacted index document: the order of live rows and sealed segments along the hash chain,
//! the run ids it holds (live and sealed), replacing a contiguous range of live rows by the record
//! of the segment that seals them, and rewriting a schema_version 2 index as version 3 (its
//! records become items of the chain).

use super::chain::{self, ChainItem, RECORD_ITEM_SCHEMA_VERSION, Walk};
use super::error::HistoryError;
use super::model::INDEX_FILE;
use super::package::IndexDoc;
use super::segment::{SEGMENTED_SCHEMA_VERSION, SegmentRecord, segment_number};
use serde_json::{Map, Value};

fn raw_list<'a>(raw: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    raw.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

impl IndexDoc {
    /// True when `run_id` is a live row or a run a segment record names (every sealed run of a
    /// format 1 record; the first, last and initial anchors of a format 2 record, whose manifest
    /// in the archive names the others).
    pub fn contains_run(&self, run_id: &str) -> bool {
        self.row(run_id).is_some()
            || self
                .index
                .segments
                .iter()
                .any(|s| s.named_run_ids().contains(&run_id))
    }

    /// Runs sealed in segments.
    pub fn sealed_run_count(&self) -> usize {
        self.index
            .segments
            .iter()
            .map(|s| s.run_count as usize)
            .sum()
    }

    /// Live and sealed runs.
    pub fn total_run_count(&self) -> usize {
        self.index.runs.len() + self.sealed_run_count()
    }

    /// The verified chain: items in chain order and the link after each (empty for an unchained
    /// index).
    pub(crate) fn chain_walk(&self) -> Result<Walk, HistoryError> {
        Ok(chain::walk(&self.raw, INDEX_FILE)?.unwrap_or_default())
    }

    /// The items of the chain in chain order.
    pub(crate) fn chain_items(&self) -> Result<Vec<ChainItem>, HistoryError> {
        Ok(self.chain_walk()?.items)
    }

    /// The link before live row `i` in chain order (`""` at the start of the chain).
    pub(crate) fn link_before(&self, i: usize) -> Result<String, HistoryError> {
        let w = self.chain_walk()?;
        let at = w.items.iter().position(|it| *it == ChainItem::Row(i));
        Ok(at
            .and_then(|p| p.checked_sub(1))
            .map(|p| w.links[p].clone())
            .unwrap_or_default())
    }

    /// The link the next appended row continues from (None for an empty chain).
    pub(crate) fn chain_head(&self) -> Option<String> {
        self.chain_walk().ok()?.links.last().cloned()
    }

    /// Whether the index is a compacted one whose records are not yet items of the chain
    /// (`schema_version` 2).
    pub(crate) fn needs_record_items(&self) -> bool {
        !self.index.segments.is_empty()
            && self.index.schema_version.map(u64::from) < Some(RECORD_ITEM_SCHEMA_VERSION)
    }

    /// Rewrite the index as `schema_version` 3: each format 1 record whose archive is under
    /// `root` gains its chart summary ([`IndexDoc::chart_legacy_records`]), and every item after
    /// the first segment is relinked (the rows' content unchanged), so every later link depends on
    /// each record's own link and the archive digest it carries.
    pub(crate) fn make_records_items(
        &mut self,
        root: &std::path::Path,
    ) -> Result<(), HistoryError> {
        let items = self.chain_items()?;
        self.chart_legacy_records(root)?;
        self.relink(
            &items,
            self.raw_rows().to_vec(),
            raw_list(&self.raw, "segments").to_vec(),
        )
    }

    /// Give every format 1 record whose archive is under `root` the chart summary of its sealed
    /// runs (read from its manifest), as a format 2 record carries it, so the dashboard draws it
    /// once the archive has left the package. The records' links no longer verify until they are
    /// relinked ([`IndexDoc::make_records_items`] does both).
    fn chart_legacy_records(&mut self, root: &std::path::Path) -> Result<(), HistoryError> {
        let mut segs = raw_list(&self.raw, "segments").to_vec();
        for (record, raw) in self.index.segments.iter().zip(segs.iter_mut()) {
            if record.chart.is_some() || !root.join(&record.path).is_file() {
                continue;
            }
            let m = super::segment_io::read_manifest(root, &record.path)?;
            let rows = m
                .runs
                .iter()
                .map(|r| {
                    serde_json::from_value(Value::Object(r.row.clone())).map_err(|e| {
                        HistoryError::integrity(&record.path, format!("sealed row: {e}"))
                    })
                })
                .collect::<Result<Vec<super::model::IndexRow>, _>>()?;
            let chart = super::segment_chart::chart_of(
                rows.iter().zip(m.runs.iter().map(|r| r.targets.as_slice())),
            );
            if let (Some(obj), Ok(v)) = (raw.as_object_mut(), serde_json::to_value(&chart)) {
                obj.insert("chart".into(), v);
            }
        }
        self.raw.insert("segments".into(), Value::Array(segs));
        self.reparse_index()
    }

    /// Set `schema_version` 3 and relink `items` over `rows` and `segs`.
    fn relink(
        &mut self,
        items: &[ChainItem],
        mut rows: Vec<Value>,
        mut segs: Vec<Value>,
    ) -> Result<(), HistoryError> {
        chain::relink(items, &mut rows, &mut segs);
        self.raw.insert(
            "schema_version".into(),
            Value::from(SEGMENTED_SCHEMA_VERSION),
        );
        self.raw.insert("runs".into(), Value::Array(rows));
        self.raw.insert("segments".into(), Value::Array(segs));
        self.set_field("history_root", Value::from("."))
    }

    /// The number the next new segment is named with (one more than the highest in use).
    pub(crate) fn next_segment_number(&self) -> u32 {
        self.index
            .segments
            .iter()
            .filter_map(|s| segment_number(&s.name))
            .max()
            .unwrap_or(0)
            + 1
    }

    /// Replace each range of live rows (publication order, contiguous in the chain, disjoint) by
    /// the record of the segment that seals exactly those rows, in chain order, and make the index
    /// a `schema_version` 3 one: every item is relinked, each record an item of the chain.
    pub(crate) fn seal_rows(
        &mut self,
        sealed: &[(std::ops::Range<usize>, SegmentRecord)],
    ) -> Result<(), HistoryError> {
        let bad = |m: String| Err(HistoryError::structural(INDEX_FILE, m));
        let items = self.chain_items()?;
        let mut position = vec![usize::MAX; self.index.runs.len()];
        for (k, it) in items.iter().enumerate() {
            if let ChainItem::Row(i) = *it {
                position[i] = k;
            }
        }
        // For each chain item that starts a range, the record replacing the range.
        let mut starts = std::collections::BTreeMap::new();
        let mut dropped = vec![false; self.index.runs.len()];
        for (r, record) in sealed {
            let first = position.get(r.start).copied().unwrap_or(usize::MAX);
            let contiguous = !r.is_empty()
                && r.end <= self.index.runs.len()
                && r.clone().all(|i| position[i] == first + (i - r.start));
            if !contiguous {
                return bad(format!(
                    "cannot seal runs {}..{}: they are not contiguous in the chain",
                    r.start, r.end
                ));
            }
            let ids = self.index.runs[r.clone()].iter().map(|x| x.run_id.as_str());
            let (first_id, last_id) = (
                self.index.runs[r.start].run_id.as_str(),
                self.index.runs[r.end - 1].run_id.as_str(),
            );
            let names = match &record.run_ids {
                Some(v) => v.iter().map(String::as_str).eq(ids),
                None => {
                    record.first_run_id.as_deref() == Some(first_id)
                        && record.last_run_id.as_deref() == Some(last_id)
                        && record.run_count as usize == r.len()
                }
            };
            if !names {
                return bad(format!(
                    "segment {} does not seal runs {}..{}",
                    record.name, r.start, r.end
                ));
            }
            let Ok(new) = serde_json::to_value(record) else {
                return bad(format!("segment {} does not serialize", record.name));
            };
            for i in r.clone() {
                if std::mem::replace(&mut dropped[i], true) {
                    return bad(format!("run {i} is in two sealed ranges"));
                }
            }
            starts.insert(first, new);
        }
        let rows = self.raw_rows();
        let segs = raw_list(&self.raw, "segments");
        let mut out_rows = Vec::with_capacity(rows.len());
        let mut out_segs = Vec::with_capacity(segs.len() + sealed.len());
        let mut out_items = Vec::with_capacity(items.len());
        for (k, it) in items.iter().enumerate() {
            if let Some(record) = starts.remove(&k) {
                out_items.push(ChainItem::Segment(out_segs.len()));
                out_segs.push(record);
            }
            match *it {
                ChainItem::Row(i) if dropped[i] => {}
                ChainItem::Row(i) => {
                    out_items.push(ChainItem::Row(out_rows.len()));
                    out_rows.push(rows[i].clone());
                }
                ChainItem::Segment(j) => {
                    out_items.push(ChainItem::Segment(out_segs.len()));
                    out_segs.push(segs[j].clone());
                }
            }
        }
        self.relink(&out_items, out_rows, out_segs)
    }
}
