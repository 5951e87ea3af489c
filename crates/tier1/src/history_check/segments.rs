//! The sealed segments of a compacted history root, checked two ways. Shallow (every validation,
//! restore included): each record names its archive, the archive is in the package with the
//! record's size and SHA-256, or the index records it as vaulted (restore then checks the vault's
//! metadata, `restore::vault`); the sealed run ids the records name are safe and unique. Every
//! failure is an integrity error: a missing, duplicated or re-sealed segment is tampering, never a
//! malformed package. Deep (`tier1-export` and a restore from an export): every archive is opened,
//! its manifest must agree with the record, its rows must link from `chain_prev` to `chain_head`,
//! every file must have the digest the manifest states, and every sealed run must pass the same
//! per-run rules as a live one.

use crate::digest::Digest;
use crate::history::chain;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, IndexRow, RegressionSummary, Summary};
use crate::history::package::{IndexDoc, RunFiles};
use crate::history::segment::{
    LEGACY_SEGMENTED_SCHEMA_VERSION, SEGMENT_FORMAT_VERSION, SEGMENTED_SCHEMA_VERSION,
    SEGMENTS_DIR, SealedFile, SegmentManifest, SegmentRecord, is_segment_path, segment_path,
};
use crate::history::segment_io::read_segment;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What the segments hold, for the checks of the live rows.
#[derive(Debug, Default)]
pub(crate) struct Sealed {
    /// Every sealed run id the records name.
    pub(crate) run_ids: BTreeSet<String>,
    /// Sealed eligible runs compared with no anchor.
    pub(crate) initial_anchors: Vec<String>,
    /// The segments whose archive is not in the package (recorded as vaulted).
    pub(crate) vaulted: BTreeSet<String>,
}

fn bad(rel: &str, name: &str, m: String) -> HistoryError {
    HistoryError::integrity(rel, format!("segment {name:?}: {m}"))
}

/// The schema versions and record format versions that go together.
fn check_versions(doc: &IndexDoc) -> Result<(), HistoryError> {
    let segments = &doc.index.segments;
    let version = doc.index.schema_version;
    let compacted = [LEGACY_SEGMENTED_SCHEMA_VERSION, SEGMENTED_SCHEMA_VERSION];
    if !segments.is_empty() && !version.is_some_and(|v| compacted.contains(&v)) {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            format!(
                "the index has segments: expected schema_version {compacted:?}, found {version:?}"
            ),
        ));
    }
    if segments.is_empty() && version.is_some_and(|v| compacted.contains(&v)) {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!("schema_version {version:?} (a compacted index) needs `segments`, found none"),
        ));
    }
    if !doc.index.vaulted.is_empty() && version != Some(SEGMENTED_SCHEMA_VERSION) {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            format!("`vaulted` needs schema_version {SEGMENTED_SCHEMA_VERSION}, found {version:?}"),
        ));
    }
    let allowed: &[u32] = if version == Some(LEGACY_SEGMENTED_SCHEMA_VERSION) {
        &[1]
    } else {
        &[1, SEGMENT_FORMAT_VERSION]
    };
    for s in segments {
        if !allowed.contains(&s.format_version) {
            return Err(bad(
                INDEX_FILE,
                &s.name,
                format!(
                    "format_version: expected one of {allowed:?} in a schema_version {} index, found {}",
                    version.unwrap_or(0),
                    s.format_version
                ),
            ));
        }
    }
    Ok(())
}

/// The shallow checks of every segment record of `doc` against the archives under `root`.
pub(crate) fn check_records(root: &Path, doc: &IndexDoc) -> Result<Sealed, HistoryError> {
    check_versions(doc)?;
    let mut sealed = Sealed::default();
    let mut names = BTreeSet::new();
    let vaulted: BTreeSet<&str> = doc.index.vaulted.iter().map(String::as_str).collect();
    if vaulted.len() != doc.index.vaulted.len() {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            "vaulted: a segment is listed twice",
        ));
    }
    for s in &doc.index.segments {
        if !names.insert(s.name.as_str()) {
            return Err(bad(INDEX_FILE, &s.name, "appears more than once".into()));
        }
        if check_record(root, s, vaulted.contains(s.name.as_str()))? {
            sealed.vaulted.insert(s.name.clone());
        }
        for id in s.named_run_ids() {
            if !crate::fsx::is_safe_run_id(id) {
                return Err(bad(INDEX_FILE, &s.name, format!("unsafe run id {id:?}")));
            }
            if !sealed.run_ids.insert(id.to_string()) {
                return Err(bad(
                    INDEX_FILE,
                    &s.name,
                    format!("run_id {id:?} is sealed twice (in two segments)"),
                ));
            }
        }
        sealed
            .initial_anchors
            .extend(s.initial_anchors.iter().cloned());
    }
    if let Some(stray) = vaulted.iter().find(|n| !names.contains(*n)) {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            format!(
                "vaulted: {stray:?} is not a segment of this index (expected the names of recorded segments)"
            ),
        ));
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

/// One record against the package: its path and counts, and its archive (true when the archive
/// is not in the package but recorded as vaulted).
fn check_record(root: &Path, s: &SegmentRecord, vaulted: bool) -> Result<bool, HistoryError> {
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
    let counts_ok = match (&s.run_ids, s.format_version) {
        (Some(ids), 1) => ids.len() == s.run_count as usize && !ids.is_empty(),
        (None, v) if v >= 2 => {
            s.run_count >= 1 && s.first_run_id.is_some() && s.last_run_id.is_some()
        }
        _ => false,
    };
    if !counts_ok {
        return Err(bad(
            INDEX_FILE,
            name,
            format!(
                "run_count {} does not agree with the run ids it names (format version {}: {})",
                s.run_count,
                s.format_version,
                if s.format_version == 1 {
                    "every run id, `run_ids`"
                } else {
                    "`first_run_id` and `last_run_id`, no `run_ids`"
                }
            ),
        ));
    }
    let expected =
        Digest::parse(&s.digest).map_err(|e| bad(INDEX_FILE, name, format!("digest: {e}")))?;
    let rel = &s.path;
    let file = root.join(rel);
    let found_bytes = match std::fs::symlink_metadata(&file) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && vaulted => return Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(
                rel,
                name,
                format!(
                    "its archive {rel} is missing and index.json does not record it as vaulted: a removed segment (expected the archive in the package, or the segment's name in `vaulted`)"
                ),
            ));
        }
        Err(e) => {
            return Err(HistoryError::structural(
                rel,
                format!("segment {name:?}: cannot read the archive: {e}"),
            ));
        }
    };
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
    Ok(false)
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
    /// Segments recorded as vaulted that were not opened (their archive is not in the package and
    /// no vault was asked).
    pub vaulted_unchecked: usize,
}

/// Where the deep check gets the archive of a segment whose archive is not in the package: its
/// bytes (checked against the record's size and SHA-256 here), or None to leave it unchecked.
pub type FetchVaulted<'a> = &'a dyn Fn(&SegmentRecord) -> Result<Option<Vec<u8>>, HistoryError>;

/// The deep check of every segment of `doc` under `root` (after `check_records`); segments
/// recorded as vaulted are left unchecked (see [`check_deep_with`]).
pub fn check_deep(root: &Path, doc: &IndexDoc) -> Result<DeepReport, HistoryError> {
    check_deep_with(root, doc, &|_| Ok(None))
}

/// [`check_deep`], with the archives that are not in the package taken from `fetch` (a vault).
pub fn check_deep_with(
    root: &Path,
    doc: &IndexDoc,
    fetch: FetchVaulted<'_>,
) -> Result<DeepReport, HistoryError> {
    let mut report = DeepReport::default();
    let mut sealed_ids: BTreeSet<String> = BTreeSet::new();
    for s in &doc.index.segments {
        let rel = &s.path;
        // The package's archive is streamed from its file (never read whole: a padded segment
        // must not exhaust memory); a vaulted one comes from the vault, checked by its record.
        let source = match std::fs::File::open(root.join(rel)) {
            Ok(file) => Archive::Package(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match fetch(s)? {
                Some(b) => {
                    let found = Digest::of_bytes(&b);
                    if found.as_str() != s.digest || b.len() as u64 != s.bytes {
                        return Err(bad(
                            rel,
                            &s.name,
                            format!(
                                "the vault's copy is {} bytes {found}, the record {} bytes {}",
                                b.len(),
                                s.bytes,
                                s.digest
                            ),
                        ));
                    }
                    Archive::Vault(b)
                }
                None => {
                    report.vaulted_unchecked += 1;
                    continue;
                }
            },
            Err(e) => {
                return Err(HistoryError::structural(rel, format!("cannot read: {e}")));
            }
        };
        let (runs, files) = match source {
            Archive::Package(file) => check_segment(doc, s, std::io::BufReader::new(file))?,
            Archive::Vault(bytes) => check_segment(doc, s, bytes.as_slice())?,
        };
        for id in runs.iter().map(|r| r.run_id.as_str()) {
            if doc.row(id).is_some() || !sealed_ids.insert(id.to_string()) {
                return Err(bad(
                    rel,
                    &s.name,
                    format!("sealed run {id:?} is also live or sealed in another segment"),
                ));
            }
        }
        report.segments += 1;
        report.runs += runs.len();
        report.files += files;
    }
    Ok(report)
}

/// One segment archive (`bytes`) against its record: the manifest agrees with the record, its
/// rows link from `chain_prev` to `chain_head`, every file has its digest and no other member
/// exists, the totals and the chart are those of the rows, and every run passes the per-run
/// rules. Returns the sealed rows and the number of files checked.
/// Where a segment's archive is read from.
enum Archive {
    /// Its file in the package, streamed.
    Package(std::fs::File),
    /// The vault's copy, already checked against the record.
    Vault(Vec<u8>),
}

/// One sealed segment checked deep against its record `s` (the module docs): returns its rows
/// and the number of files whose digests were checked.
fn check_segment(
    doc: &IndexDoc,
    s: &SegmentRecord,
    src: impl std::io::Read,
) -> Result<(Vec<IndexRow>, usize), HistoryError> {
    let rel = &s.path;
    let (m, members) = read_segment(rel, src)?;
    // 1. The manifest is the record's.
    check_manifest(doc, s, &m)?;
    // 2. The members, each once; the rows linked from `chain_prev` to `chain_head`, each run's
    // files with their digests, and nothing archived the manifest does not list.
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (name, b) in members {
        if files.insert(name.clone(), b).is_some() {
            return Err(bad(rel, &s.name, format!("member {name:?} appears twice")));
        }
    }
    let (rows, checked) = check_sealed_rows(s, &m, &files)?;
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
    // 3. The record's trend totals and chart summary are the rows'.
    agree(
        s,
        "trend totals",
        crate::history::trend::totals(rows.iter()) == s.trend,
    )?;
    if let Some(chart) = &s.chart {
        let computed = crate::history::segment_chart::chart_of(
            rows.iter().zip(m.runs.iter().map(|r| r.targets.as_slice())),
        );
        agree(s, "chart summary", computed == *chart)?;
    }
    Ok((rows, checked))
}

/// `same`, or the manifest's `what` differs from the index record.
fn agree(s: &SegmentRecord, what: &str, same: bool) -> Result<(), HistoryError> {
    if same {
        Ok(())
    } else {
        Err(bad(
            &s.path,
            &s.name,
            format!("manifest {what} differs from the index record"),
        ))
    }
}

/// The manifest's name, format version, chain ends, suite and run ids are the record's.
fn check_manifest(
    doc: &IndexDoc,
    s: &SegmentRecord,
    m: &SegmentManifest,
) -> Result<(), HistoryError> {
    agree(s, "name", m.name == s.name)?;
    agree(s, "format_version", m.format_version == s.format_version)?;
    agree(s, "chain_prev", m.chain_prev == s.chain_prev)?;
    agree(s, "chain_head", m.chain_head == s.chain_head)?;
    agree(
        s,
        "suite",
        (m.suite_name.as_str(), m.suite_version)
            == (doc.index.suite_name.as_str(), doc.index.suite_version),
    )?;
    agree(s, "run ids", names_runs(&m.run_ids(), s))
}

/// The record names exactly the manifest's run ids `ids`: all of them when it lists them, else
/// its first and last, and their count.
fn names_runs(ids: &[&str], s: &SegmentRecord) -> bool {
    let named = match &s.run_ids {
        Some(v) => ids.iter().copied().eq(v.iter().map(String::as_str)),
        None => {
            ids.first().copied() == s.first_run_id.as_deref()
                && ids.last().copied() == s.last_run_id.as_deref()
        }
    };
    named && ids.len() == s.run_count as usize
}

/// The sealed rows in chain order: each row's link follows the one before (from `chain_prev`,
/// ending at `chain_head`), each listed file is archived with its digest and size, and each run
/// passes the per-run rules. Returns the rows and the number of files checked.
fn check_sealed_rows(
    s: &SegmentRecord,
    m: &SegmentManifest,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(Vec<IndexRow>, usize), HistoryError> {
    let rel = &s.path;
    let mut prev = s.chain_prev.clone();
    let mut rows: Vec<IndexRow> = Vec::with_capacity(m.runs.len());
    let mut checked = 0;
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
            HistoryError::integrity(rel, format!("sealed run {id:?}: invalid row: {e}"))
        })?;
        for f in &run.files {
            check_file(s, f, files)?;
            checked += 1;
        }
        check_sealed_run(rel, &row, files)?;
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
    Ok((rows, checked))
}

/// A listed file is archived with the digest and size the manifest states.
fn check_file(
    s: &SegmentRecord,
    f: &SealedFile,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), HistoryError> {
    let body = files.get(&f.path).ok_or_else(|| {
        bad(
            &s.path,
            &s.name,
            format!("file {:?} is listed but not archived", f.path),
        )
    })?;
    let d = Digest::of_bytes(body).to_string();
    if d != f.digest || body.len() as u64 != f.bytes {
        return Err(bad(
            &s.path,
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
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        run_ids: Option<&[&str]>,
        first: Option<&str>,
        last: Option<&str>,
        count: u32,
    ) -> SegmentRecord {
        serde_json::from_value(serde_json::json!({
            "name": "seg-000001", "path": "segments/seg-000001.tar.gz", "format_version": 2,
            "digest": format!("sha256:{}", "0".repeat(64)), "bytes": 1, "run_count": count,
            "run_ids": run_ids, "first_run_id": first, "last_run_id": last,
            "chain_prev": "", "chain_head": "", "initial_anchors": [],
            "trend": crate::history::trend::totals(std::iter::empty()),
        }))
        .unwrap()
    }

    #[test]
    fn names_runs_rows() {
        let ids = ["a", "b", "c"];
        let rows: [(SegmentRecord, &[&str], bool); 8] = [
            (record(Some(&["a", "b", "c"]), None, None, 3), &ids, true),
            (record(Some(&["a", "c", "b"]), None, None, 3), &ids, false),
            (record(Some(&["a", "b"]), None, None, 3), &ids, false),
            (record(Some(&["a", "b", "c"]), None, None, 2), &ids, false),
            (record(None, Some("a"), Some("c"), 3), &ids, true),
            (record(None, Some("a"), Some("b"), 3), &ids, false),
            (record(None, Some("a"), Some("c"), 4), &ids, false),
            (record(None, None, None, 0), &[], true),
        ];
        for (s, ids, want) in rows {
            assert_eq!(names_runs(ids, &s), want, "{ids:?} {:?}", s.run_ids);
        }
    }
}
