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

/// The link of a segment record (`chain_prev` hex followed by its canonical JSON without
/// `chain_sha256`).
pub(crate) fn record_link(record: &Map<String, Value>) -> String {
    let prev = record
        .get(SEGMENT_PREV_FIELD)
        .and_then(Value::as_str)
        .unwrap_or("");
    hash_link(Some(prev), &canonical_without(record, CHAIN_FIELD))
}

/// Set a segment record's own link and return it.
pub(crate) fn seal_record(record: &mut Map<String, Value>) -> String {
    record.shift_remove(CHAIN_FIELD);
    let l = record_link(record);
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

/// Splice every segment that continues the chain at `prev` (in list order), verifying each
/// record's own link; `prev` becomes the last spliced segment's head.
fn splice(
    segs: &[Value],
    next: &mut usize,
    prev: &mut Option<String>,
    path: &str,
) -> Result<(), HistoryError> {
    while let Some(seg) = segs.get(*next) {
        let at = prev.as_deref().unwrap_or("");
        if seg.get(SEGMENT_PREV_FIELD).and_then(Value::as_str) != Some(at) {
            return Ok(());
        }
        let name = segment_name(*next, seg);
        let Some(record) = seg.as_object() else {
            return Err(HistoryError::integrity(
                path,
                format!("{name}: expected an object"),
            ));
        };
        let expected = record_link(record);
        let found = record.get(CHAIN_FIELD).and_then(Value::as_str);
        if found != Some(expected.as_str()) {
            return Err(HistoryError::integrity(
                path,
                format!(
                    "{name}: segment record link mismatch: expected `{CHAIN_FIELD}` {expected}, found {} (the record was edited: its digest, runs or counts no longer match what was sealed)",
                    found.map_or("none".to_string(), str::to_string)
                ),
            ));
        }
        let head = record
            .get(SEGMENT_HEAD_FIELD)
            .and_then(Value::as_str)
            .filter(|h| is_link(h))
            .ok_or_else(|| {
                HistoryError::integrity(
                    path,
                    format!("{name}: `{SEGMENT_HEAD_FIELD}` must be a 64-hex link"),
                )
            })?;
        *prev = Some(head.to_string());
        *next += 1;
    }
    Ok(())
}

/// Verify the chain of a raw index object. `path` names the index file in errors.
/// An index with `schema_version` must link every row; one without must carry no link at all.
/// Segments (`segments`, chain order) are spliced in where their `chain_prev` continues the chain;
/// one that continues no link is an integrity error.
pub(crate) fn verify(index: &Map<String, Value>, path: &str) -> Result<ChainState, HistoryError> {
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
            "the index has `segments` but no `schema_version`: expected a compacted index (schema_version 2)",
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
        return Ok(ChainState::Unchained);
    }
    let mut prev: Option<String> = None;
    let mut next_segment = 0;
    for (i, row) in rows.iter().enumerate() {
        splice(segs, &mut next_segment, &mut prev, path)?;
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
        let expected = link(prev.as_deref(), row);
        if found != expected {
            return Err(HistoryError::integrity(
                path,
                format!(
                    "{}: hash chain mismatch: expected `{CHAIN_FIELD}` {expected}, found {found} (row edited, removed or reordered)",
                    row_name(i, row)
                ),
            ));
        }
        prev = Some(expected);
    }
    splice(segs, &mut next_segment, &mut prev, path)?;
    if let Some(seg) = segs.get(next_segment) {
        return Err(HistoryError::integrity(
            path,
            format!(
                "{}: its `{SEGMENT_PREV_FIELD}` {} continues no link of the chain (a segment or row removed, reordered or edited)",
                segment_name(next_segment, seg),
                seg.get(SEGMENT_PREV_FIELD).unwrap_or(&Value::Null)
            ),
        ));
    }
    Ok(ChainState::Chained { head: prev })
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
            seal_record(s.as_object_mut().unwrap());
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
        seal_record(orphan["segments"][1].as_object_mut().unwrap());
        let e = verify(&orphan, "i").unwrap_err();
        assert!(e.message.contains("continues no link"), "{e}");
        let mut stripped = idx;
        stripped.remove("schema_version");
        assert!(verify(&stripped, "i").is_err());
    }

    #[test]
    fn legacy_index_is_unchained() {
        let Value::Object(m) = json!({"runs": [{"run_id": "a"}]}) else {
            unreachable!()
        };
        assert_eq!(verify(&m, "i").unwrap(), ChainState::Unchained);
    }
}
