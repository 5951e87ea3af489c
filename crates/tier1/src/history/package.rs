//! A history package on disk: the index document (parsed, with the raw stored JSON kept so existing
//! rows stay byte-identical when extended), a run's files, and writing an output tree staged.

use super::chain::{self, ChainState};
use super::error::HistoryError;
use super::model::{
    INDEX_FILE, Index, IndexRow, RegressionSummary, SCHEMA_VERSION, Summary, TrendSnapshot,
};
use crate::fsx;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// `index.json` as parsed (`index`) and as stored (`raw`, key order and unknown fields intact).
#[derive(Debug, Clone)]
pub struct IndexDoc {
    /// The stored JSON object.
    pub(crate) raw: Map<String, Value>,
    /// The typed view.
    pub index: Index,
}

/// Read and parse a JSON file of a history root; any failure is structural and names the file.
pub fn read_json<T: DeserializeOwned>(root: &Path, rel: &str) -> Result<T, HistoryError> {
    let path = root.join(rel);
    let bytes = std::fs::read(&path)
        .map_err(|e| HistoryError::structural(rel, format!("cannot read: {e}")))?;
    parse_json(rel, &bytes)
}

/// Parse the bytes of history file `rel`; a failure is structural and names the file.
fn parse_json<T: DeserializeOwned>(rel: &str, bytes: &[u8]) -> Result<T, HistoryError> {
    serde_json::from_slice(bytes)
        .map_err(|e| HistoryError::structural(rel, format!("invalid content: {e}")))
}

/// Write `value` as pretty JSON to `<root>/<rel>` atomically, unless the file already holds exactly
/// those bytes; failures are structural and name the file.
pub fn write_json<T: serde::Serialize>(
    root: &Path,
    rel: &str,
    value: &T,
) -> Result<(), HistoryError> {
    let bytes = crate::json::to_pretty(value, rel)
        .map_err(|e| HistoryError::structural(rel, format!("cannot write: {e}")))?;
    fsx::write_if_changed(&root.join(rel), &bytes)
        .map(|_| ())
        .map_err(|e| HistoryError::write(rel, &e))
}

/// [`write_json`] for a file of a staged tree whose stored bytes are `stored`: overwritten in
/// place (see [`fsx::overwrite_staged`]) when they differ, untouched otherwise.
pub(crate) fn write_json_staged<T: serde::Serialize>(
    root: &Path,
    rel: &str,
    value: &T,
    stored: &[u8],
) -> Result<(), HistoryError> {
    let bytes = crate::json::to_pretty(value, rel)
        .map_err(|e| HistoryError::structural(rel, format!("cannot write: {e}")))?;
    if bytes == stored {
        return Ok(());
    }
    fsx::overwrite_staged(&root.join(rel), &bytes, stored.len())
        .map_err(|e| HistoryError::write(rel, &e))
}

impl IndexDoc {
    /// Load `<root>/index.json`; `Ok(None)` when the file does not exist.
    pub fn load(root: &Path) -> Result<Option<IndexDoc>, HistoryError> {
        if !root.join(INDEX_FILE).is_file() {
            return Ok(None);
        }
        let v: Value = read_json(root, INDEX_FILE)?;
        IndexDoc::from_value(v).map(Some)
    }

    /// Build from a parsed JSON value (structural errors name `index.json`).
    pub(crate) fn from_value(v: Value) -> Result<IndexDoc, HistoryError> {
        let Value::Object(raw) = v else {
            return Err(HistoryError::structural(
                INDEX_FILE,
                format!("expected a JSON object, found {}", kind_of(&v)),
            ));
        };
        let index = parse_index(&raw)?;
        Ok(IndexDoc { raw, index })
    }

    /// A new, empty, chained index for a suite.
    pub fn new_chained(suite_name: &str, suite_version: u32) -> IndexDoc {
        let index = Index {
            schema_version: Some(SCHEMA_VERSION),
            suite_name: suite_name.into(),
            suite_version,
            history_root: ".".into(),
            chain_reset: None,
            runs: vec![],
            segments: vec![],
            vaulted: vec![],
            runner_class: None,
            extra: Map::new(),
        };
        let Ok(Value::Object(raw)) = serde_json::to_value(&index) else {
            unreachable!("an Index always serializes to an object")
        };
        IndexDoc { raw, index }
    }

    /// The stored rows.
    pub fn raw_rows(&self) -> &[Value] {
        self.raw
            .get("runs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Verify the hash chain.
    pub(crate) fn chain_state(&self) -> Result<ChainState, HistoryError> {
        chain::verify(&self.raw, INDEX_FILE)
    }

    /// Make this index a chained one: set `schema_version` and, for a legacy index, link the
    /// existing rows (their content is unchanged). A chained index is left as it is.
    pub fn adopt_chain(&mut self) -> Result<(), HistoryError> {
        if self.chain_state()? == ChainState::Unchained {
            self.raw
                .insert("schema_version".into(), Value::from(SCHEMA_VERSION));
            if let Some(Value::Array(rows)) = self.raw.get_mut("runs") {
                chain::seal_all(rows);
            }
            self.reparse()?;
        }
        Ok(())
    }

    /// Append a row at the end (publication order), linked to the current head: the last item of
    /// the chain (its links are verified by validation, not again on every append).
    pub fn push_row(&mut self, row: &IndexRow) -> Result<(), HistoryError> {
        if !self.raw.contains_key("schema_version") {
            return Err(HistoryError::structural(
                INDEX_FILE,
                "refusing to append to an unchained index (adopt the chain first)",
            ));
        }
        let head = self.chain_head();
        let Ok(Value::Object(mut m)) = serde_json::to_value(row) else {
            return Err(HistoryError::structural(
                INDEX_FILE,
                format!(
                    "run {:?}: row does not serialize (non-finite metric?)",
                    row.run_id
                ),
            ));
        };
        chain::seal(head.as_deref(), &mut m);
        match self.raw.get_mut("runs") {
            Some(Value::Array(rows)) => rows.push(Value::Object(m)),
            _ => {
                self.raw
                    .insert("runs".into(), Value::Array(vec![Value::Object(m)]));
            }
        }
        self.reparse()
    }

    /// Set a top-level field of the stored index (for `history_root`, `chain_reset`, ...).
    pub fn set_field(&mut self, key: &str, value: Value) -> Result<(), HistoryError> {
        self.raw.insert(key.into(), value);
        self.reparse()
    }

    /// Record the runner class of the history (docs/sharding.md); `None` leaves an index without
    /// one as it is.
    pub(crate) fn set_runner_class(&mut self, class: Option<&str>) -> Result<(), HistoryError> {
        match class {
            Some(c) => self.set_field("runner_class", Value::String(c.to_string())),
            None if self.raw.contains_key("runner_class") => {
                self.raw.remove("runner_class");
                self.reparse()
            }
            None => Ok(()),
        }
    }

    fn reparse(&mut self) -> Result<(), HistoryError> {
        self.index = parse_index(&self.raw)?;
        Ok(())
    }

    /// Parse the typed view again after `raw` changed.
    pub(crate) fn reparse_index(&mut self) -> Result<(), HistoryError> {
        self.reparse()
    }

    /// Pretty JSON bytes of the stored form.
    pub fn to_bytes(&self) -> Result<Vec<u8>, HistoryError> {
        crate::json::to_pretty(&self.raw, INDEX_FILE)
            .map_err(|e| HistoryError::structural(INDEX_FILE, e.to_string()))
    }

    /// The row of a run id.
    pub fn row(&self, run_id: &str) -> Option<&IndexRow> {
        self.index.runs.iter().find(|r| r.run_id == run_id)
    }
}

/// The typed view of a stored index object, read in place (no copy of the stored rows).
fn parse_index(raw: &Map<String, Value>) -> Result<Index, HistoryError> {
    Index::deserialize(raw)
        .map_err(|e| HistoryError::structural(INDEX_FILE, format!("invalid index: {e}")))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A run's files, as referenced by its index row.
#[derive(Debug, Clone)]
pub(crate) struct RunFiles {
    /// `summary.json`.
    pub(crate) summary: Summary,
    /// `regression_summary.json`.
    pub(crate) regression: RegressionSummary,
    /// `summary.json` as stored.
    pub(crate) summary_bytes: Vec<u8>,
    /// `regression_summary.json` as stored.
    pub(crate) regression_bytes: Vec<u8>,
}

/// Check that a stored path is a safe relative path under the root; returns the joined path.
pub(crate) fn resolve(
    root: &Path,
    rel: &str,
    field: &str,
    run_id: &str,
) -> Result<PathBuf, HistoryError> {
    fsx::join_safe(root, rel).ok_or_else(|| {
        HistoryError::integrity(
            INDEX_FILE,
            format!(
                "run {run_id:?}: `{field}` {rel:?} is not a safe relative path under the history root"
            ),
        )
    })
}

/// The four stored paths of a row, by field name.
pub(crate) fn row_paths(row: &IndexRow) -> [(&'static str, &str); 4] {
    [
        ("summary_path", row.summary_path.as_str()),
        (
            "regression_summary_path",
            row.regression_summary_path.as_str(),
        ),
        ("regression_json_path", row.regression_json_path.as_str()),
        ("trend_snapshot_path", row.trend_snapshot_path.as_str()),
    ]
}

/// Load the summary, regression JSON and trend snapshot a row points at (all four files, the
/// Markdown summary included, must exist). Files that are read are not also checked with a `stat`.
pub(crate) fn load_run(root: &Path, row: &IndexRow) -> Result<RunFiles, HistoryError> {
    let missing = |field: &str, rel: &str| {
        HistoryError::structural(
            rel,
            format!("run {:?}: `{field}` file does not exist", row.run_id),
        )
    };
    for (field, rel) in row_paths(row) {
        let p = resolve(root, rel, field, &row.run_id)?;
        if field == "regression_summary_path" && !p.is_file() {
            return Err(missing(field, rel));
        }
    }
    let read = |field: &str, rel: &str| -> Result<Vec<u8>, HistoryError> {
        std::fs::read(root.join(rel)).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => missing(field, rel),
            _ => HistoryError::structural(rel, format!("cannot read: {e}")),
        })
    };
    let summary_bytes = read("summary_path", &row.summary_path)?;
    let regression_bytes = read("regression_json_path", &row.regression_json_path)?;
    let trend_bytes = read("trend_snapshot_path", &row.trend_snapshot_path)?;
    let summary: Summary = parse_json(&row.summary_path, &summary_bytes)?;
    let regression: RegressionSummary = parse_json(&row.regression_json_path, &regression_bytes)?;
    // The snapshot must be an object; its content is rebuilt on publication, so it is not kept.
    let trend: Value = parse_json(&row.trend_snapshot_path, &trend_bytes)?;
    if !trend.is_object() {
        return Err(HistoryError::structural(
            &row.trend_snapshot_path,
            format!("expected a JSON object, found {}", kind_of(&trend)),
        ));
    }
    Ok(RunFiles {
        summary,
        regression,
        summary_bytes,
        regression_bytes,
    })
}

/// The standard path of a run's file: `<run_id>/<file>`.
pub fn run_path(run_id: &str, file: &str) -> String {
    format!("{run_id}/{file}")
}

/// A history tree for `dest` (absent or empty), staged in a temporary sibling: the base tree
/// (the live history) hard-linked where possible ([`fsx::link_tree`]) and the runs copied from
/// their roots. [`finish_tree`] then writes the trend snapshots and the index, and committing the
/// stage renames it into place, so a failure leaves no output.
pub(crate) fn stage_tree(
    dest: &Path,
    base: Option<&Path>,
    runs: &[(&Path, &str)],
) -> Result<fsx::StagedDir, std::io::Error> {
    let stage = fsx::StagedDir::new(dest)?;
    if let Some(base) = base {
        fsx::link_tree(base, stage.path())?;
    }
    for (src_root, run_id) in runs {
        let to = stage.path().join(run_id);
        if to.exists() {
            std::fs::remove_dir_all(&to)?;
        }
        fsx::copy_tree(&src_root.join(run_id), &to)?;
    }
    Ok(stage)
}

/// The second half of a tree write ([`stage_tree`] is the first): write the trend snapshots, then
/// the index, into the staged tree at `root` (each replacing its link atomically).
pub(crate) fn finish_tree(
    root: &Path,
    trends: &[(String, TrendSnapshot)],
    index: &IndexDoc,
) -> Result<(), std::io::Error> {
    for (rel, trend) in trends {
        let path = fsx::join_safe(root, rel)
            .ok_or_else(|| std::io::Error::other(format!("unsafe trend snapshot path {rel:?}")))?;
        let bytes = crate::json::to_pretty(trend, rel).map_err(std::io::Error::other)?;
        fsx::write_atomic(&path, &bytes)?;
    }
    let bytes = index.to_bytes().map_err(std::io::Error::other)?;
    fsx::write_atomic(&root.join(INDEX_FILE), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pushed_row_verifies_after_a_round_trip_through_text() {
        let mut doc = IndexDoc::new_chained("tier1", 1);
        let row: IndexRow = serde_json::from_value(serde_json::json!({
            "run_id": "r0", "generated_at": "2026-08-16T00:00:00Z",
            "summary_path": "r0/summary.json", "regression_summary_path": "r0/regression_summary.md",
            "regression_json_path": "r0/regression_summary.json",
            "trend_snapshot_path": "r0/trend_snapshot.json",
            "avg_speedup": 3.6943196974735475, "max_speedup": 0.1 + 0.2,
        }))
        .unwrap();
        doc.push_row(&row).unwrap();
        doc.push_row(&IndexRow {
            run_id: "r1".into(),
            ..row
        })
        .unwrap();
        let back: Value = serde_json::from_slice(&doc.to_bytes().unwrap()).unwrap();
        let back = IndexDoc::from_value(back).unwrap();
        assert!(matches!(
            back.chain_state(),
            Ok(ChainState::Chained { head: Some(_) })
        ));
        assert_eq!(back.raw_rows(), doc.raw_rows());
    }

    #[test]
    fn writing_a_tree_over_a_linked_base_never_changes_the_base() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("live");
        std::fs::create_dir_all(base.join("r0")).unwrap();
        std::fs::write(base.join("r0/trend_snapshot.json"), b"{\"old\": true}\n").unwrap();
        std::fs::write(base.join("r0/summary.json"), b"{}\n").unwrap();
        std::fs::write(base.join(INDEX_FILE), b"{\"runs\": []}\n").unwrap();
        let doc = IndexDoc::new_chained("tier1", 1);
        let trends = vec![(
            "r0/trend_snapshot.json".to_string(),
            super::super::trend::build(&doc.index),
        )];
        let out = t.path().join("out");
        let stage = stage_tree(&out, Some(&base), &[]).unwrap();
        finish_tree(stage.path(), &trends, &doc).unwrap();
        stage.commit().unwrap();
        assert_eq!(
            std::fs::read(base.join("r0/trend_snapshot.json")).unwrap(),
            b"{\"old\": true}\n"
        );
        assert_eq!(
            std::fs::read(base.join(INDEX_FILE)).unwrap(),
            b"{\"runs\": []}\n"
        );
        assert_ne!(
            std::fs::read(out.join("r0/trend_snapshot.json")).unwrap(),
            b"{\"old\": true}\n"
        );
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_eq!(
            ino(&out.join("r0/summary.json")),
            ino(&base.join("r0/summary.json")),
            "an unchanged file is shared, not copied"
        );
    }
}
