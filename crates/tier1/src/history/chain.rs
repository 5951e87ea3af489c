//! The index hash chain (tier1 extension): each row's `chain_sha256` is the SHA-256 hex of the previous
//! row's link (ASCII hex, empty for the first row of a chain) followed by the canonical JSON of the
//! row without `chain_sha256`. Computing, appending and verifying links over the raw stored rows.

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
pub fn link(prev: Option<&str>, row: &Value) -> String {
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

/// Verify the chain of a raw index object. `path` names the index file in errors.
/// An index with `schema_version` must link every row; one without must carry no link at all.
pub fn verify(index: &Map<String, Value>, path: &str) -> Result<ChainState, HistoryError> {
    let rows: &[Value] = index
        .get("runs")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
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
    for (i, row) in rows.iter().enumerate() {
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

    #[test]
    fn legacy_index_is_unchained() {
        let Value::Object(m) = json!({"runs": [{"run_id": "a"}]}) else {
            unreachable!()
        };
        assert_eq!(verify(&m, "i").unwrap(), ChainState::Unchained);
    }
}
