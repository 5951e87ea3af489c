//! Writing and reading segment archives: sealing whole runs of a history root into a deterministic
//! `.tar.gz` (the manifest first, then every file of each run directory, runs in chain order,
//! files sorted), reading its manifest alone, or every member.

use super::error::HistoryError;
use super::model::{IndexRow, RegressionSummary, Summary};
use super::segment::{
    MANIFEST_MEMBER, SEGMENT_FORMAT, SEGMENT_FORMAT_VERSION, SEGMENT_FORMAT_VERSIONS, SealedFile,
    SealedRun, SealedTarget, SegmentManifest, SegmentRecord, segment_path,
};
use crate::archive::tgz::{self, ReadLimits};
use crate::archive::{MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::digest::Digest;
use serde_json::{Map, Value};
use std::path::Path;

/// Caps on reading a segment archive. A segment seals runs that were live together in one package,
/// within restore's caps ([`MAX_MEMBERS`] files, [`MAX_EXPANDED_BYTES`]): its members (and the
/// manifest that lists them) are held to twice those, so a hostile segment costs bounded memory.
pub(crate) const READ_LIMITS: ReadLimits = ReadLimits {
    max_members: 2 * MAX_MEMBERS + 1,
    max_bytes: 2 * MAX_EXPANDED_BYTES,
};

/// What to seal: runs of a history root, contiguous in the chain.
#[derive(Debug)]
pub(crate) struct SealRequest<'a> {
    /// The history root holding the run directories.
    pub(crate) root: &'a Path,
    /// The segment's name.
    pub(crate) name: String,
    /// Suite identity of the history.
    pub(crate) suite: (&'a str, u32),
    /// The chain link before the first row.
    pub(crate) chain_prev: String,
    /// The rows, as stored and as parsed, in chain order.
    pub(crate) rows: Vec<(&'a Map<String, Value>, &'a IndexRow)>,
}

/// A sealed segment: the archive's bytes and its record (not yet linked).
#[derive(Debug)]
pub(crate) struct Sealed {
    /// The `.tar.gz` bytes.
    pub(crate) bytes: Vec<u8>,
    /// The record for `index.json`.
    pub(crate) record: SegmentRecord,
}

fn io(rel: &str) -> impl Fn(std::io::Error) -> HistoryError + '_ {
    move |e| HistoryError::structural(rel, format!("cannot read: {e}"))
}

fn parse<T: serde::de::DeserializeOwned>(rel: &str, bytes: &[u8]) -> Result<T, HistoryError> {
    serde_json::from_slice(bytes)
        .map_err(|e| HistoryError::structural(rel, format!("invalid content: {e}")))
}

/// Seal the rows' run directories into one segment archive.
pub(crate) fn seal(req: &SealRequest<'_>) -> Result<Sealed, HistoryError> {
    // 1. Each run directory read whole, in chain order.
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let mut runs = Vec::with_capacity(req.rows.len());
    let mut initial_anchors = Vec::new();
    for (raw, row) in &req.rows {
        let run = seal_run(req.root, raw, row, &mut members)?;
        if row.is_eligible() && run.baseline_run_id.is_none() {
            initial_anchors.push(row.run_id.clone());
        }
        runs.push(run);
    }
    let Some((_, last)) = req.rows.last() else {
        return Err(HistoryError::structural(
            super::model::INDEX_FILE,
            format!("segment {}: nothing to seal", req.name),
        ));
    };
    // 2. The manifest first, then the files: the archive.
    let chain_head = last.chain_sha256.clone().unwrap_or_default();
    let manifest = SegmentManifest {
        format: SEGMENT_FORMAT.into(),
        format_version: SEGMENT_FORMAT_VERSION,
        name: req.name.clone(),
        suite_name: req.suite.0.to_string(),
        suite_version: req.suite.1,
        chain_prev: req.chain_prev.clone(),
        chain_head: chain_head.clone(),
        runs,
    };
    let path = segment_path(&req.name);
    let manifest_bytes = crate::json::to_pretty(&manifest, &path)
        .map_err(|e| HistoryError::structural(&path, format!("cannot write: {e}")))?;
    members.insert(0, (MANIFEST_MEMBER.to_string(), manifest_bytes));
    let bytes = tgz::write(Vec::new(), &members)
        .map_err(|e| HistoryError::structural(&path, format!("cannot write: {e}")))?;
    // 3. The index's record of the segment.
    let chart = super::segment_chart::chart_of(
        req.rows
            .iter()
            .map(|(_, r)| *r)
            .zip(manifest.runs.iter().map(|r| r.targets.as_slice())),
    );
    let record = SegmentRecord {
        name: req.name.clone(),
        path,
        format_version: SEGMENT_FORMAT_VERSION,
        digest: Digest::of_bytes(&bytes).to_string(),
        bytes: bytes.len() as u64,
        run_count: req.rows.len() as u32,
        run_ids: None,
        first_run_id: req.rows.first().map(|(_, r)| r.run_id.clone()),
        last_run_id: Some(last.run_id.clone()),
        chain_prev: req.chain_prev.clone(),
        chain_head,
        initial_anchors,
        trend: super::trend::totals(req.rows.iter().map(|(_, r)| *r)),
        chart: Some(chart),
        chain_sha256: None,
        extra: Map::new(),
    };
    Ok(Sealed { bytes, record })
}

/// One run sealed: its row's paths must lie in its directory, every file of which is read into
/// `members` (with its digest in the sealed run), its summary and regression summary among them.
fn seal_run(
    root: &Path,
    raw: &Map<String, Value>,
    row: &IndexRow,
    members: &mut Vec<(String, Vec<u8>)>,
) -> Result<SealedRun, HistoryError> {
    let id = &row.run_id;
    let prefix = format!("{id}/");
    for (field, rel) in super::package::row_paths(row) {
        if !rel.starts_with(&prefix) {
            return Err(HistoryError::structural(
                rel,
                format!("cannot seal run {id:?}: `{field}` is not under {prefix:?}"),
            ));
        }
    }
    let dir = root.join(id);
    let files = crate::fsx::list_files(&dir).map_err(io(id))?;
    let mut sealed_files = Vec::with_capacity(files.len());
    let (mut summary, mut regression) = (None, None);
    for f in files {
        let rel = format!("{prefix}{f}");
        let bytes = std::fs::read(dir.join(&f)).map_err(io(&rel))?;
        if rel == row.summary_path {
            summary = Some(parse::<Summary>(&rel, &bytes)?);
        } else if rel == row.regression_json_path {
            regression = Some(parse::<RegressionSummary>(&rel, &bytes)?);
        }
        sealed_files.push(SealedFile {
            path: rel.clone(),
            digest: Digest::of_bytes(&bytes).to_string(),
            bytes: bytes.len() as u64,
        });
        members.push((rel, bytes));
    }
    let missing = |rel: &str| {
        HistoryError::structural(rel, format!("cannot seal run {id:?}: the file is missing"))
    };
    let summary = summary.ok_or_else(|| missing(&row.summary_path))?;
    let regression = regression.ok_or_else(|| missing(&row.regression_json_path))?;
    Ok(SealedRun {
        row: raw.clone(),
        baseline_run_id: regression.baseline_run_id,
        files: sealed_files,
        targets: summary
            .targets
            .iter()
            .map(|t| SealedTarget {
                target: t.target.clone(),
                key: t.key.clone(),
                status: t.status.clone(),
                optimization_goal: t.optimization_goal.clone(),
                best_speedup: t.best_speedup,
                best_memory_savings_pct: t.best_memory_savings_pct,
                baseline_time_ms: t.baseline_time_ms,
            })
            .collect(),
    })
}

fn refused(rel: &str, e: tgz::TgzError) -> HistoryError {
    HistoryError::integrity(rel, format!("unreadable segment archive: {e}"))
}

fn manifest_of(rel: &str, name: &str, bytes: &[u8]) -> Result<SegmentManifest, HistoryError> {
    if name != MANIFEST_MEMBER {
        return Err(HistoryError::integrity(
            rel,
            format!("first member: expected {MANIFEST_MEMBER:?}, found {name:?}"),
        ));
    }
    let m: SegmentManifest = serde_json::from_slice(bytes).map_err(|e| {
        HistoryError::integrity(rel, format!("{MANIFEST_MEMBER}: invalid content: {e}"))
    })?;
    if m.format != SEGMENT_FORMAT || !SEGMENT_FORMAT_VERSIONS.contains(&m.format_version) {
        return Err(HistoryError::integrity(
            rel,
            format!(
                "{MANIFEST_MEMBER}: expected format {SEGMENT_FORMAT:?} version {SEGMENT_FORMAT_VERSIONS:?}, found {:?} version {}",
                m.format, m.format_version
            ),
        ));
    }
    Ok(m)
}

/// The manifest of the segment archive at `<root>/<rel>` (only its first member is decompressed).
pub(crate) fn read_manifest(root: &Path, rel: &str) -> Result<SegmentManifest, HistoryError> {
    let f = std::fs::File::open(root.join(rel)).map_err(io(rel))?;
    let mut m = tgz::members(std::io::BufReader::new(f), READ_LIMITS);
    match m.next_member().map_err(|e| refused(rel, e))? {
        Some((name, bytes)) => manifest_of(rel, &name, &bytes),
        None => Err(HistoryError::integrity(rel, "empty segment archive")),
    }
}

/// The members of an archive after its manifest: (name, bytes).
pub type Members = Vec<(String, Vec<u8>)>;

/// The manifest and every other member of the segment archive read from `src` (stored at `rel`),
/// streamed: only the members are held, within [`READ_LIMITS`].
pub(crate) fn read_segment(
    rel: &str,
    src: impl std::io::Read,
) -> Result<(SegmentManifest, Members), HistoryError> {
    let mut all = tgz::read(src, READ_LIMITS).map_err(|e| refused(rel, e))?;
    if all.is_empty() {
        return Err(HistoryError::integrity(rel, "empty segment archive"));
    }
    let (name, first) = all.remove(0);
    Ok((manifest_of(rel, &name, &first)?, all))
}

/// Every member of a segment archive, the manifest first: (name, bytes). For tools and tests that
/// inspect (or forge) a sealed segment; readers of a history use the checks of `history_check`.
pub fn archive_members(bytes: &[u8]) -> Result<Members, HistoryError> {
    tgz::read(bytes, READ_LIMITS).map_err(|e| refused("segment archive", e))
}

/// A segment archive of `members` (in the order given, the manifest first), written as sealing
/// writes one: for tools and tests.
pub fn archive_bytes(members: &[(String, Vec<u8>)]) -> Result<Vec<u8>, HistoryError> {
    tgz::write(Vec::new(), members)
        .map_err(|e| HistoryError::structural("segment archive", format!("cannot write: {e}")))
}
