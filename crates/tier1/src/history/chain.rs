//! The index hash chain (tier1 extension): each row's `chain_sha256` is the SHA-256 hex of the previous
//! row's link (ASCII hex, empty for the first row of a chain) followed by the canonical JSON of the
//! row without `chain_sha256`. Computing, appending and verifying links over the raw stored rows.
//! In a compacted index the chain runs through the sealed segments: a segment record stands for
//! its rows (`chain_prev` is the link before its first row, `chain_head` its last row's link), and
//! the record itself carries a link over its own fields (`chain_prev` + canonical record).

use super::error::HistoryError;
use crate::json::{canonical, canonical_without};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// The row field holding the link.
pub const CHAIN_FIELD: &str = "chain_sha256";

/// Whether an index carries a hash chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainState {
    /// A legacy reference index: no `schema_version`, no chain fields.
    Unchained,
    /// Every row verified; `head` is the last row's link (None for an empty chained index).
    Chained {
        /// Link of the newest row.
        head: Option<String>,
    },
}

/// The link of a row whose JSON (without `chain_sha256`) is `row`, after `prev`.
pub(crate) fn link(prev: Option<&str>, row: &Value) -> String {
    match row {
        Value::Object(m) => link_object(prev, m),
        other => hash_link(prev, &canonical(other)),
    }
}

/// [`link`] of an object row, read in place.
fn link_object(prev: Option<&str>, row: &Map<String, Value>) -> String {
    hash_link(prev, &canonical_without(row, CHAIN_FIELD))
}

fn hash_link(prev: Option<&str>, body: &str) -> String {
    let mut h = Sha256::new();
    h.update(prev.unwrap_or("").as_bytes());
    h.update(body.as_bytes());
    hex::encode(h.finalize())
}

fn stored_link(row: &Value) -> Option<&Value> {
    row.as_object().and_then(|m| m.get(CHAIN_FIELD))
}

fn row_name(i: usize, row: &Value) -> String {
    match row.get("run_id").and_then(Value::as_str) {
        Some(id) => format!("runs[{i}] (run_id {id:?})"),
        None => format!("runs[{i}]"),
    }
}

/// Set `row`'s link after `prev` and return it (the row must be a JSON object).
pub fn seal(prev: Option<&str>, row: &mut Map<String, Value>) -> String {
    row.shift_remove(CHAIN_FIELD);
    let l = link_object(prev, row);
    row.insert(CHAIN_FIELD.into(), Value::String(l.clone()));
    l
}

/// The field of a segment record holding the link before its first row.
pub(crate) const SEGMENT_PREV_FIELD: &str = "chain_prev";
/// The field of a segment record holding its last row's link.
pub(crate) const SEGMENT_HEAD_FIELD: &str = "chain_head";

/// The `schema_version` from which a segment record is an item of the chain: the item after it
/// continues from the record's own link (which covers the archive's digest), not from its last
/// sealed row's link.
pub(crate) const RECORD_ITEM_SCHEMA_VERSION: u64 = 3;

/// One item of the chain: a live row or a sealed segment (indices into `runs` and `segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChainItem {
    /// `runs[i]`.
    Row(usize),
    /// `segments[i]`.
    Segment(usize),
}

/// How segment records join the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegmentRule {
    /// `schema_version` 2: a record is spliced where its `chain_prev` equals the current link,
    /// its own link is `chain_prev` followed by the record, and the next item continues from its
    /// `chain_head` (the record binds nothing after it).
    Head,
    /// `schema_version` 3: a record is an item: spliced where its own link verifies from the
    /// current link, and the next item continues from that link, so every later link depends on
    /// the archive's digest the record carries.
    Record,
}

impl SegmentRule {
    /// The rule of an index with this stored `schema_version`.
    pub(crate) fn of(index: &Map<String, Value>) -> SegmentRule {
        match index.get("schema_version").and_then(Value::as_u64) {
            Some(v) if v >= RECORD_ITEM_SCHEMA_VERSION => SegmentRule::Record,
            _ => SegmentRule::Head,
        }
    }
}

/// A verified chain: its items in chain order and the link after each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Walk {
    /// The items in chain order.
    pub(crate) items: Vec<ChainItem>,
    /// The link the next item continues from, after each item.
    pub(crate) links: Vec<String>,
}

/// The link of a segment record after `prev`: SHA-256 hex of `prev` followed by its canonical
/// JSON without `chain_sha256`. (Under [`SegmentRule::Head`] `prev` is always its `chain_prev`.)
pub(crate) fn record_link(prev: &str, record: &Map<String, Value>) -> String {
    hash_link(Some(prev), &canonical_without(record, CHAIN_FIELD))
}

/// Set a segment record's own link after `prev` and return it.
pub(crate) fn seal_record(prev: &str, record: &mut Map<String, Value>) -> String {
    record.shift_remove(CHAIN_FIELD);
    let l = record_link(prev, record);
    record.insert(CHAIN_FIELD.into(), Value::String(l.clone()));
    l
}

fn is_link(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn segment_name(i: usize, seg: &Value) -> String {
    match seg.get("name").and_then(Value::as_str) {
        Some(n) => format!("segments[{i}] (name {n:?})"),
        None => format!("segments[{i}]"),
    }
}

/// The walk through `runs` and `segments` (see [`verify`]).
struct Walker<'a> {
    segs: &'a [Value],
    rule: SegmentRule,
    path: &'a str,
    next: usize,
    prev: Option<String>,
    walk: Walk,
}

impl Walker<'_> {
    /// Splice every segment that continues the chain at the current link (in list order),
    /// verifying each record's own link.
    fn splice(&mut self) -> Result<(), HistoryError> {
        while let Some(seg) = self.segs.get(self.next) {
            let at = self.prev.clone().unwrap_or_default();
            let name = segment_name(self.next, seg);
            let Some(record) = seg.as_object() else {
                return Err(HistoryError::integrity(
                    self.path,
                    format!("{name}: expected an object"),
                ));
            };
            let found = record.get(CHAIN_FIELD).and_then(Value::as_str);
            let expected = record_link(&at, record);
            let claims_here = record.get(SEGMENT_PREV_FIELD).and_then(Value::as_str) == Some(&at);
            let spliced = match self.rule {
                SegmentRule::Head => claims_here,
                SegmentRule::Record => found == Some(expected.as_str()),
            };
            if !spliced {
                if claims_here && self.rule == SegmentRule::Record {
                    return Err(self.record_mismatch(&name, &expected, found));
                }
                return Ok(());
            }
            if found != Some(expected.as_str()) {
                return Err(self.record_mismatch(&name, &expected, found));
            }
            let head = record
                .get(SEGMENT_HEAD_FIELD)
                .and_then(Value::as_str)
                .filter(|h| is_link(h))
                .ok_or_else(|| {
                    HistoryError::integrity(
                        self.path,
                        format!("{name}: `{SEGMENT_HEAD_FIELD}` must be a 64-hex link"),
                    )
                })?;
            let after = match self.rule {
                SegmentRule::Head => head.to_string(),
                SegmentRule::Record => expected,
            };
            self.walk.items.push(ChainItem::Segment(self.next));
            self.walk.links.push(after.clone());
            self.prev = Some(after);
            self.next += 1;
        }
        Ok(())
    }

    fn record_mismatch(&self, name: &str, expected: &str, found: Option<&str>) -> HistoryError {
        HistoryError::integrity(
            self.path,
            format!(
                "{name}: segment record link mismatch: expected `{CHAIN_FIELD}` {expected}, found {} (the record was edited: its digest, runs or counts no longer match what was sealed)",
                found.unwrap_or("none")
            ),
        )
    }

    /// What to add to a row's mismatch: the segment it should continue from, or the segment that
    /// does not continue the chain before it.
    fn row_context(&self) -> String {
        let last_segment = match self.walk.items.last() {
            Some(ChainItem::Segment(j)) => self.segs.get(*j).map(|s| segment_name(*j, s)),
            _ => None,
        };
        let waiting = self.segs.get(self.next).map(|s| segment_name(self.next, s));
        match (last_segment, waiting) {
            (Some(seg), _) => format!(
                "; it must continue from {seg}: that segment's record, or the archive it records, was changed after sealing (a re-sealed segment)"
            ),
            (None, Some(seg)) => format!("; {seg} does not continue the chain here either"),
            (None, None) => String::new(),
        }
    }
}

/// Verify the chain of a raw index object. `path` names the index file in errors.
/// An index with `schema_version` must link every row; one without must carry no link at all.
/// Segments (`segments`, chain order) are spliced in by the index's [`SegmentRule`]; one that
/// continues no link is an integrity error.
pub(crate) fn verify(index: &Map<String, Value>, path: &str) -> Result<ChainState, HistoryError> {
    Ok(match walk(index, path)? {
        None => ChainState::Unchained,
        Some(w) => ChainState::Chained {
            head: w.links.last().cloned(),
        },
    })
}

/// The verified chain of a raw index object: its items and links (None for a legacy, unchained
/// index).
pub(crate) fn walk(index: &Map<String, Value>, path: &str) -> Result<Option<Walk>, HistoryError> {
    let rows: &[Value] = index
        .get("runs")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let segs: &[Value] = index
        .get("segments")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if !index.contains_key("schema_version") && !segs.is_empty() {
        return Err(HistoryError::integrity(
            path,
            "the index has `segments` but no `schema_version`: expected a compacted index (schema_version 2 or 3)",
        ));
    }
    if !index.contains_key("schema_version") {
        if let Some((i, row)) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| stored_link(r).is_some())
        {
            return Err(HistoryError::integrity(
                path,
                format!(
                    "{} carries `{CHAIN_FIELD}` but the index has no `schema_version`: expected a chained index or no chain fields at all",
                    row_name(i, row)
                ),
            ));
        }
        return Ok(None);
    }
    let mut w = Walker {
        segs,
        rule: SegmentRule::of(index),
        path,
        next: 0,
        prev: None,
        walk: Walk::default(),
    };
    for (i, row) in rows.iter().enumerate() {
        w.splice()?;
        let found = match stored_link(row) {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(HistoryError::integrity(
                    path,
                    format!(
                        "{}: `{CHAIN_FIELD}` must be a hex string, found {other}",
                        row_name(i, row)
                    ),
                ));
            }
            None => {
                return Err(HistoryError::integrity(
                    path,
                    format!(
                        "{}: missing `{CHAIN_FIELD}` in a chained index (schema_version present): the chain is broken",
                        row_name(i, row)
                    ),
                ));
            }
        };
        let expected = link(w.prev.as_deref(), row);
        if found != expected {
            return Err(HistoryError::integrity(
                path,
                format!(
                    "{}: hash chain mismatch: expected `{CHAIN_FIELD}` {expected}, found {found} (row edited, removed or reordered){}",
                    row_name(i, row),
                    w.row_context()
                ),
            ));
        }
        w.walk.items.push(ChainItem::Row(i));
        w.walk.links.push(expected.clone());
        w.prev = Some(expected);
    }
    w.splice()?;
    if let Some(seg) = segs.get(w.next) {
        return Err(HistoryError::integrity(
            path,
            format!(
                "{}: it continues no link of the chain (its `{SEGMENT_PREV_FIELD}` {}; a segment or row removed, reordered or edited)",
                segment_name(w.next, seg),
                seg.get(SEGMENT_PREV_FIELD).unwrap_or(&Value::Null)
            ),
        ));
    }
    Ok(Some(w.walk))
}

/// Relink every item of a chain in order under [`SegmentRule::Record`]: each row's link after the
/// previous item's, each record's own link after the previous item's (their content unchanged).
/// `items` are the chain's items in order over `rows` and `segs`.
pub(crate) fn relink(items: &[ChainItem], rows: &mut [Value], segs: &mut [Value]) {
    let mut prev = String::new();
    for item in items {
        match *item {
            ChainItem::Row(i) => {
                if let Some(Value::Object(m)) = rows.get_mut(i) {
                    prev = seal(Some(prev.as_str()), m);
                }
            }
            ChainItem::Segment(j) => {
                if let Some(Value::Object(m)) = segs.get_mut(j) {
                    prev = seal_record(&prev, m);
                }
            }
        }
    }
}

/// Link every row of `rows` from the start of a chain (used to adopt a legacy index; the rows'
/// content other than the link is unchanged).
pub fn seal_all(rows: &mut [Value]) {
    let mut prev: Option<String> = None;
    for row in rows.iter_mut() {
        if let Value::Object(m) = row {
            prev = Some(seal(prev.as_deref(), m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chained(rows: Vec<Value>) -> Map<String, Value> {
        let mut rows = rows;
        seal_all(&mut rows);
        let Value::Object(m) = json!({"schema_version": 1, "runs": rows}) else {
            unreachable!()
        };
        m
    }

    #[test]
    fn link_is_prev_hex_then_canonical_row() {
        let row = json!({"run_id": "a", "b": 1});
        let mut h = Sha256::new();
        h.update(b"");
        h.update(br#"{"b":1,"run_id":"a"}"#);
        assert_eq!(link(None, &row), hex::encode(h.finalize()));
        let first = link(None, &row);
        let mut h = Sha256::new();
        h.update(first.as_bytes());
        h.update(br#"{"b":1,"run_id":"a"}"#);
        assert_eq!(link(Some(&first), &row), hex::encode(h.finalize()));
    }

    #[test]
    fn edits_removals_and_reorders_are_caught() {
        let idx = chained(vec![
            json!({"run_id": "a"}),
            json!({"run_id": "b"}),
            json!({"run_id": "c"}),
        ]);
        assert!(matches!(
            verify(&idx, "i"),
            Ok(ChainState::Chained { head: Some(_) })
        ));
        let mut edited = idx.clone();
        edited["runs"][1]["x"] = json!(1);
        let e = verify(&edited, "i").unwrap_err();
        assert!(e.message.contains("run_id \"b\""), "{e}");
        let mut removed = idx.clone();
        removed["runs"].as_array_mut().unwrap().remove(1);
        assert!(verify(&removed, "i").unwrap_err().message.contains("\"c\""));
        let mut reordered = idx.clone();
        reordered["runs"].as_array_mut().unwrap().swap(0, 1);
        assert!(verify(&reordered, "i").is_err());
        let mut unlinked = idx.clone();
        unlinked["runs"][2]
            .as_object_mut()
            .unwrap()
            .remove(CHAIN_FIELD);
        assert!(
            verify(&unlinked, "i")
                .unwrap_err()
                .message
                .contains("missing")
        );
        let mut stripped = idx;
        stripped.remove("schema_version");
        assert!(verify(&stripped, "i").is_err());
    }

    /// Rows `a`..`e` chained; `b`..`c` and `e` sealed into segments.
    fn compacted() -> Map<String, Value> {
        let mut rows: Vec<Value> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|id| json!({ "run_id": id }))
            .collect();
        seal_all(&mut rows);
        let link = |i: usize| rows[i][CHAIN_FIELD].as_str().unwrap().to_string();
        let mut segs = vec![
            json!({"name": "seg-000001", "chain_prev": link(0), "chain_head": link(2), "digest": "sha256:1"}),
            json!({"name": "seg-000002", "chain_prev": link(3), "chain_head": link(4), "digest": "sha256:2"}),
        ];
        for s in &mut segs {
            let m = s.as_object_mut().unwrap();
            let prev = m[SEGMENT_PREV_FIELD].as_str().unwrap().to_string();
            seal_record(&prev, m);
        }
        let live = vec![rows[0].clone(), rows[3].clone()];
        let Value::Object(m) = json!({"schema_version": 2, "runs": live, "segments": segs}) else {
            unreachable!()
        };
        m
    }

    #[test]
    fn the_chain_runs_through_segments() {
        let idx = compacted();
        let Ok(ChainState::Chained { head: Some(head) }) = verify(&idx, "i") else {
            panic!("{:?}", verify(&idx, "i"))
        };
        assert_eq!(head, idx["segments"][1]["chain_head"].as_str().unwrap());
        let mut digest = idx.clone();
        digest["segments"][0]["digest"] = json!("sha256:9");
        let e = verify(&digest, "i").unwrap_err();
        assert!(
            e.message.contains("seg-000001") && e.message.contains("record link"),
            "{e}"
        );
        let mut dropped = idx.clone();
        dropped["segments"].as_array_mut().unwrap().remove(0);
        assert!(
            verify(&dropped, "i").is_err(),
            "a removed segment breaks the chain"
        );
        let mut swapped = idx.clone();
        swapped["segments"].as_array_mut().unwrap().swap(0, 1);
        assert!(
            verify(&swapped, "i").is_err(),
            "reordered segments break the chain"
        );
        let mut tail = idx.clone();
        tail["runs"].as_array_mut().unwrap().remove(1);
        tail["segments"].as_array_mut().unwrap().remove(1);
        assert!(verify(&tail, "i").is_ok(), "a chain may end in a live row");
        let mut orphan = idx.clone();
        orphan["segments"][1]["chain_prev"] = json!("f".repeat(64));
        seal_record(
            &"f".repeat(64),
            orphan["segments"][1].as_object_mut().unwrap(),
        );
        let e = verify(&orphan, "i").unwrap_err();
        assert!(e.message.contains("continues no link"), "{e}");
        let mut stripped = idx;
        stripped.remove("schema_version");
        assert!(verify(&stripped, "i").is_err());
    }

    /// [`compacted`] as schema_version 3: every item relinked, records as items.
    fn compacted_v3() -> Map<String, Value> {
        let mut idx = compacted();
        let items = walk(&idx, "i").unwrap().unwrap().items;
        idx["schema_version"] = json!(3);
        let mut rows = idx["runs"].as_array().unwrap().clone();
        let mut segs = idx["segments"].as_array().unwrap().clone();
        relink(&items, &mut rows, &mut segs);
        idx["runs"] = Value::Array(rows);
        idx["segments"] = Value::Array(segs);
        idx
    }

    #[test]
    fn a_record_is_an_item_of_a_schema_3_chain() {
        let idx = compacted_v3();
        let w = walk(&idx, "i").unwrap().unwrap();
        assert_eq!(
            w.items,
            [
                ChainItem::Row(0),
                ChainItem::Segment(0),
                ChainItem::Row(1),
                ChainItem::Segment(1)
            ]
        );
        assert_eq!(
            w.links.last().unwrap(),
            idx["segments"][1][CHAIN_FIELD].as_str().unwrap(),
            "the head is the last record's own link"
        );
        // A re-sealed segment: its digest changed and its own link recomputed from the same
        // predecessor. Under schema 2 that went unnoticed; here the next row no longer links.
        let mut resealed = idx.clone();
        resealed["segments"][0]["digest"] = json!("sha256:9");
        let prev = idx["runs"][0][CHAIN_FIELD].as_str().unwrap().to_string();
        seal_record(&prev, resealed["segments"][0].as_object_mut().unwrap());
        let e = verify(&resealed, "i").unwrap_err();
        assert!(
            e.message.contains("hash chain mismatch") && e.message.contains("seg-000001"),
            "{e}"
        );
        // The same forgery of the schema 2 index goes unnoticed by the chain (only the deep check
        // sees it): what schema 3 fixes.
        let mut old = compacted();
        old["segments"][0]["digest"] = json!("sha256:9");
        let p = old["segments"][0]["chain_prev"]
            .as_str()
            .unwrap()
            .to_string();
        seal_record(&p, old["segments"][0].as_object_mut().unwrap());
        assert!(verify(&old, "i").is_ok());
        // An edited record whose link was not recomputed.
        let mut edited = idx.clone();
        edited["segments"][0]["digest"] = json!("sha256:9");
        let e = verify(&edited, "i").unwrap_err();
        assert!(e.message.contains("seg-000001"), "{e}");
        let mut dropped = idx.clone();
        dropped["segments"].as_array_mut().unwrap().remove(0);
        assert!(verify(&dropped, "i").is_err());
        let mut swapped = idx;
        swapped["segments"].as_array_mut().unwrap().swap(0, 1);
        assert!(verify(&swapped, "i").is_err());
    }

    #[test]
    fn legacy_index_is_unchained() {
        let Value::Object(m) = json!({"runs": [{"run_id": "a"}]}) else {
            unreachable!()
        };
        assert_eq!(verify(&m, "i").unwrap(), ChainState::Unchained);
    }
}
