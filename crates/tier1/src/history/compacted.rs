//! A compacted index document: the order of live rows and sealed segments along the hash chain,
//! the run ids it holds (live and sealed), and replacing a contiguous range of live rows by the
//! record of the segment that seals them.

use super::chain::{self, CHAIN_FIELD};
use super::error::HistoryError;
use super::model::INDEX_FILE;
use super::package::IndexDoc;
use super::segment::{SEGMENTED_SCHEMA_VERSION, SegmentRecord, segment_number};
use serde_json::{Map, Value};

/// One item of the chain: a live row or a sealed segment (indices into `runs` and `segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChainItem {
    /// `runs[i]`.
    Row(usize),
    /// `segments[i]`.
    Segment(usize),
}

fn raw_list<'a>(raw: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    raw.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl IndexDoc {
    /// True when `run_id` is a live row or a sealed run.
    pub fn contains_run(&self, run_id: &str) -> bool {
        self.row(run_id).is_some()
            || self
                .index
                .segments
                .iter()
                .any(|s| s.run_ids.iter().any(|id| id == run_id))
    }

    /// Runs sealed in segments.
    pub fn sealed_run_count(&self) -> usize {
        self.index.segments.iter().map(|s| s.run_ids.len()).sum()
    }

    /// Live and sealed runs.
    pub fn total_run_count(&self) -> usize {
        self.index.runs.len() + self.sealed_run_count()
    }

    /// The items of a verified chain in chain order (a segment comes where its `chain_prev`
    /// continues the chain, as `chain::verify` splices it).
    pub(crate) fn chain_items(&self) -> Vec<ChainItem> {
        let rows = raw_list(&self.raw, "runs");
        let segs = raw_list(&self.raw, "segments");
        let mut items = Vec::with_capacity(rows.len() + segs.len());
        let mut prev = String::new();
        let mut next = 0;
        let splice = |prev: &mut String, next: &mut usize, items: &mut Vec<ChainItem>| {
            while let Some(seg) = segs.get(*next) {
                if field(seg, chain::SEGMENT_PREV_FIELD) != prev.as_str() {
                    break;
                }
                items.push(ChainItem::Segment(*next));
                *prev = field(seg, chain::SEGMENT_HEAD_FIELD).to_string();
                *next += 1;
            }
        };
        for (i, row) in rows.iter().enumerate() {
            splice(&mut prev, &mut next, &mut items);
            items.push(ChainItem::Row(i));
            prev = field(row, CHAIN_FIELD).to_string();
        }
        splice(&mut prev, &mut next, &mut items);
        items.extend((next..segs.len()).map(ChainItem::Segment));
        items
    }

    /// The link before live row `i` in chain order (`""` at the start of the chain).
    pub(crate) fn link_before(&self, i: usize) -> String {
        let rows = raw_list(&self.raw, "runs");
        let segs = raw_list(&self.raw, "segments");
        let items = self.chain_items();
        let at = items.iter().position(|it| *it == ChainItem::Row(i));
        match at.and_then(|p| p.checked_sub(1)).map(|p| items[p]) {
            Some(ChainItem::Row(j)) => field(&rows[j], CHAIN_FIELD).to_string(),
            Some(ChainItem::Segment(j)) => field(&segs[j], chain::SEGMENT_HEAD_FIELD).to_string(),
            None => String::new(),
        }
    }

    /// The link of the last item of the chain (None for an empty chain).
    pub(crate) fn chain_head(&self) -> Option<String> {
        let rows = raw_list(&self.raw, "runs");
        let segs = raw_list(&self.raw, "segments");
        let link = match self.chain_items().last() {
            Some(ChainItem::Row(i)) => field(&rows[*i], CHAIN_FIELD),
            Some(ChainItem::Segment(j)) => field(&segs[*j], chain::SEGMENT_HEAD_FIELD),
            None => return None,
        };
        Some(link.to_string())
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
    /// the record of the segment that seals exactly those rows: each record is linked
    /// (`chain_sha256`) and placed in chain order, and the index becomes a compacted one
    /// (`schema_version` 2).
    pub(crate) fn seal_rows(
        &mut self,
        sealed: &[(std::ops::Range<usize>, SegmentRecord)],
    ) -> Result<(), HistoryError> {
        let bad = |m: String| Err(HistoryError::structural(INDEX_FILE, m));
        let items = self.chain_items();
        let mut position = vec![usize::MAX; self.index.runs.len()];
        for (k, it) in items.iter().enumerate() {
            if let ChainItem::Row(i) = *it {
                position[i] = k;
            }
        }
        // For each chain item that starts a range, the linked record replacing the range.
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
            if record.run_ids.iter().map(String::as_str).ne(ids) {
                return bad(format!(
                    "segment {} does not seal runs {}..{}",
                    record.name, r.start, r.end
                ));
            }
            let Ok(Value::Object(mut new)) = serde_json::to_value(record) else {
                return bad(format!("segment {} does not serialize", record.name));
            };
            chain::seal_record(&mut new);
            for i in r.clone() {
                if std::mem::replace(&mut dropped[i], true) {
                    return bad(format!("run {i} is in two sealed ranges"));
                }
            }
            starts.insert(first, Value::Object(new));
        }
        let rows = raw_list(&self.raw, "runs");
        let segs = raw_list(&self.raw, "segments");
        let mut out_rows = Vec::with_capacity(rows.len());
        let mut out_segs = Vec::with_capacity(segs.len() + sealed.len());
        for (k, it) in items.iter().enumerate() {
            if let Some(record) = starts.remove(&k) {
                out_segs.push(record);
            }
            match *it {
                ChainItem::Row(i) if dropped[i] => {}
                ChainItem::Row(i) => out_rows.push(rows[i].clone()),
                ChainItem::Segment(j) => out_segs.push(segs[j].clone()),
            }
        }
        self.raw.insert(
            "schema_version".into(),
            Value::from(SEGMENTED_SCHEMA_VERSION),
        );
        self.raw.insert("runs".into(), Value::Array(out_rows));
        self.raw.insert("segments".into(), Value::Array(out_segs));
        self.set_field("history_root", Value::from("."))
    }
}
