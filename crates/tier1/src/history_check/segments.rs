//! The sealed segments of a compacted history root, checked two ways. Shallow (every validation,
//! restore included): each record names its archive, the archive's size and SHA-256 equal the
//! record's, and the sealed run ids are safe and unique. Deep (`tier1-export` and a restore from
//! an export): every archive is opened, its manifest must agree with the record, its rows must
//! link from `chain_prev` to `chain_head`, every file must have the digest the manifest states,
//! and every sealed run must pass the same per-run rules as a live one.

use crate::digest::Digest;
use crate::history::chain;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, IndexRow, RegressionSummary, Summary};
use crate::history::package::{IndexDoc, RunFiles};
use crate::history::segment::{
    SEGMENT_FORMAT_VERSION, SEGMENTED_SCHEMA_VERSION, SEGMENTS_DIR, SegmentRecord, is_segment_path,
    segment_path,
};
use crate::history::segment_io::read_segment;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What the segments hold, for the checks of the live rows.
#[derive(Debug, Default)]
pub(crate) struct Sealed {
    /// Every sealed run id.
    pub(crate) run_ids: BTreeSet<String>,
    /// Sealed eligible runs compared with no anchor.
    pub(crate) initial_anchors: Vec<String>,
}

fn bad(rel: &str, name: &str, m: String) -> HistoryError {
    HistoryError::integrity(rel, format!("segment {name:?}: {m}"))
}

/// The shallow checks of every segment record of `doc` against the archives under `root`.
pub(crate) fn check_records(root: &Path, doc: &IndexDoc) -> Result<Sealed, HistoryError> {
    let segments = &doc.index.segments;
    let version = doc.index.schema_version;
    if !segments.is_empty() && version != Some(SEGMENTED_SCHEMA_VERSION) {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            format!(
                "the index has segments: expected schema_version {SEGMENTED_SCHEMA_VERSION}, found {version:?}"
            ),
        ));
    }
    if segments.is_empty() && version == Some(SEGMENTED_SCHEMA_VERSION) {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!(
                "schema_version {SEGMENTED_SCHEMA_VERSION} (a compacted index) needs `segments`, found none"
            ),
        ));
    }
    let mut sealed = Sealed::default();
    let mut names = BTreeSet::new();
    for s in segments {
        check_record(root, s)?;
        if !names.insert(s.name.as_str()) {
            return Err(bad(INDEX_FILE, &s.name, "appears more than once".into()));
        }
        for id in &s.run_ids {
            if !crate::fsx::is_safe_run_id(id) {
                return Err(bad(INDEX_FILE, &s.name, format!("unsafe run id {id:?}")));
            }
            if !sealed.run_ids.insert(id.clone()) {
                return Err(HistoryError::structural(
                    INDEX_FILE,
                    format!("run_id {id:?} appears more than once (sealed twice)"),
                ));
            }
        }
        sealed
            .initial_anchors
            .extend(s.initial_anchors.iter().cloned());
    }
    check_no_stray_archives(root, &names)?;
    Ok(sealed)
}

/// `segments/` holds exactly the recorded archives: an unrecorded file there is refused.
fn check_no_stray_archives(root: &Path, names: &BTreeSet<&str>) -> Result<(), HistoryError> {
    let dir = root.join(SEGMENTS_DIR);
    if !dir.exists() {
        return Ok(());
    }
    let files = crate::fsx::list_files(&dir)
        .map_err(|e| HistoryError::structural(SEGMENTS_DIR, format!("cannot list: {e}")))?;
    for f in files {
        let known = f
            .strip_suffix(crate::history::segment::SEGMENT_SUFFIX)
            .is_some_and(|n| names.contains(n));
        if !known {
            return Err(HistoryError::integrity(
                format!("{SEGMENTS_DIR}/{f}"),
                "a file under segments/ that index.json does not record (expected only the recorded segment archives)",
            ));
        }
    }
    Ok(())
}

fn check_record(root: &Path, s: &SegmentRecord) -> Result<(), HistoryError> {
    let name = &s.name;
    if s.path != segment_path(name) || !is_segment_path(&s.path) {
        return Err(bad(
            INDEX_FILE,
            name,
            format!(
                "path: expected {:?}, found {:?}",
                segment_path(name),
                s.path
            ),
        ));
    }
    if s.format_version != SEGMENT_FORMAT_VERSION {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!(
                "segment {name:?}: format_version: expected {SEGMENT_FORMAT_VERSION}, found {}",
                s.format_version
            ),
        ));
    }
    if s.run_ids.len() != s.run_count as usize || s.run_ids.is_empty() {
        return Err(bad(
            INDEX_FILE,
            name,
            format!("run_count {} but {} run ids", s.run_count, s.run_ids.len()),
        ));
    }
    let expected =
        Digest::parse(&s.digest).map_err(|e| bad(INDEX_FILE, name, format!("digest: {e}")))?;
    let rel = &s.path;
    let file = root.join(rel);
    let found_bytes = std::fs::metadata(&file)
        .map_err(|e| {
            HistoryError::structural(
                rel,
                format!("segment {name:?}: cannot read the archive: {e}"),
            )
        })?
        .len();
    if found_bytes != s.bytes {
        return Err(bad(
            rel,
            name,
            format!(
                "archive size: expected {} bytes (the record), found {found_bytes}",
                s.bytes
            ),
        ));
    }
    let found = Digest::of_file(&file)
        .map_err(|e| HistoryError::structural(rel, format!("cannot read: {e}")))?;
    if found != expected {
        return Err(bad(
            rel,
            name,
            format!(
                "archive digest mismatch: expected {expected} (recorded in index.json), found {found}: the sealed segment or its recorded digest was changed"
            ),
        ));
    }
    Ok(())
}

/// What a deep check read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DeepReport {
    /// Segments opened.
    pub(crate) segments: usize,
    /// Sealed runs checked.
    pub runs: usize,
    /// Files whose digests were checked.
    pub(crate) files: usize,
}

/// The deep check of every segment of `doc` under `root` (after `check_records`).
pub fn check_deep(root: &Path, doc: &IndexDoc) -> Result<DeepReport, HistoryError> {
    let mut report = DeepReport::default();
    for s in &doc.index.segments {
        let rel = &s.path;
        let file = std::fs::File::open(root.join(rel))
            .map_err(|e| HistoryError::structural(rel, format!("cannot read: {e}")))?;
        let (m, members) = read_segment(rel, std::io::BufReader::new(file))?;
        let agree = |what: &str, same: bool| {
            if same {
                Ok(())
            } else {
                Err(bad(
                    rel,
                    &s.name,
                    format!("manifest {what} differs from the index record"),
                ))
            }
        };
        agree("name", m.name == s.name)?;
        agree("chain_prev", m.chain_prev == s.chain_prev)?;
        agree("chain_head", m.chain_head == s.chain_head)?;
        agree(
            "suite",
            (m.suite_name.as_str(), m.suite_version)
                == (doc.index.suite_name.as_str(), doc.index.suite_version),
        )?;
        let ids: Vec<&str> = m
            .runs
            .iter()
            .map(|r| r.row.get("run_id").and_then(|v| v.as_str()).unwrap_or(""))
            .collect();
        agree(
            "run ids",
            ids.iter().copied().eq(s.run_ids.iter().map(String::as_str)),
        )?;
        let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (name, b) in members {
            if files.insert(name.clone(), b).is_some() {
                return Err(bad(rel, &s.name, format!("member {name:?} appears twice")));
            }
        }
        let mut prev = s.chain_prev.clone();
        let mut rows: Vec<IndexRow> = Vec::with_capacity(m.runs.len());
        for run in &m.runs {
            let row_value = serde_json::Value::Object(run.row.clone());
            let link = chain::link(Some(&prev), &row_value);
            let id = run.row.get("run_id").and_then(|v| v.as_str()).unwrap_or("");
            let stored = run.row.get(chain::CHAIN_FIELD).and_then(|v| v.as_str());
            if stored != Some(link.as_str()) {
                return Err(bad(
                    rel,
                    &s.name,
                    format!(
                        "sealed run {id:?}: hash chain mismatch: expected {link}, found {stored:?}"
                    ),
                ));
            }
            prev = link;
            let row: IndexRow = serde_json::from_value(row_value).map_err(|e| {
                HistoryError::structural(rel, format!("sealed run {id:?}: invalid row: {e}"))
            })?;
            for f in &run.files {
                let body = files.get(&f.path).ok_or_else(|| {
                    bad(
                        rel,
                        &s.name,
                        format!("file {:?} is listed but not archived", f.path),
                    )
                })?;
                let d = Digest::of_bytes(body).to_string();
                if d != f.digest || body.len() as u64 != f.bytes {
                    return Err(bad(
                        rel,
                        &s.name,
                        format!(
                            "file {:?}: expected {} ({} bytes), found {d} ({} bytes)",
                            f.path,
                            f.digest,
                            f.bytes,
                            body.len()
                        ),
                    ));
                }
                report.files += 1;
            }
            check_sealed_run(rel, &row, &files)?;
            rows.push(row);
        }
        if prev != s.chain_head {
            return Err(bad(
                rel,
                &s.name,
                format!(
                    "the sealed rows end at link {prev}, the record says {}",
                    s.chain_head
                ),
            ));
        }
        let listed: BTreeSet<&str> = m
            .runs
            .iter()
            .flat_map(|r| r.files.iter().map(|f| f.path.as_str()))
            .collect();
        if let Some(extra) = files.keys().find(|k| !listed.contains(k.as_str())) {
            return Err(bad(
                rel,
                &s.name,
                format!("member {extra:?} is not in the manifest"),
            ));
        }
        if crate::history::trend::totals(rows.iter()) != s.trend {
            return Err(bad(
                rel,
                &s.name,
                "trend totals differ from the sealed rows".into(),
            ));
        }
        report.segments += 1;
        report.runs += rows.len();
    }
    Ok(report)
}

/// The per-run rules of a live run, applied to a sealed run's files.
fn check_sealed_run(
    rel: &str,
    row: &IndexRow,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), HistoryError> {
    super::runs::check_row_fields(row)?;
    let read = |path: &str| {
        files.get(path).ok_or_else(|| {
            HistoryError::structural(
                rel,
                format!("sealed run {:?}: {path:?} is missing", row.run_id),
            )
        })
    };
    read(&row.regression_summary_path)?;
    let parse_err = |path: &str, e: serde_json::Error| {
        HistoryError::structural(rel, format!("sealed {path}: invalid content: {e}"))
    };
    let summary_bytes = read(&row.summary_path)?.clone();
    let regression_bytes = read(&row.regression_json_path)?.clone();
    let summary: Summary =
        serde_json::from_slice(&summary_bytes).map_err(|e| parse_err(&row.summary_path, e))?;
    let regression: RegressionSummary = serde_json::from_slice(&regression_bytes)
        .map_err(|e| parse_err(&row.regression_json_path, e))?;
    let trend = read(&row.trend_snapshot_path)?;
    if !matches!(
        serde_json::from_slice(trend),
        Ok(serde_json::Value::Object(_))
    ) {
        return Err(HistoryError::structural(
            rel,
            format!("sealed {}: expected a JSON object", row.trend_snapshot_path),
        ));
    }
    super::runs::check_summary(row, &summary)?;
    super::runs::check_regression(row, &regression)?;
    let files = RunFiles {
        summary,
        regression,
        summary_bytes,
        regression_bytes,
    };
    super::runs::check_acceptance(row, &files)
}
