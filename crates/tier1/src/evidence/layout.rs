//! The layout under the evidence root: `<run_id>/` with its manifest, report and results, and the
//! recheck directories `<run_id>__recheck__<key>`.

use super::error::EvidenceError;
use std::path::Path;

/// Manifest file inside a run's evidence directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";
/// Markdown report inside a run's evidence directory.
pub(crate) const REPORT_FILE: &str = "report.md";
/// Separator of recheck evidence directories: `<run_id>__recheck__<key>`.
pub(crate) const RECHECK_INFIX: &str = "__recheck__";

/// `<run_id>/manifest.json`, relative to the evidence root.
pub(crate) fn manifest_rel(run_id: &str) -> String {
    format!("{run_id}/{MANIFEST_FILE}")
}

/// `<run_id>/report.md`, relative to the evidence root.
pub(crate) fn report_rel(run_id: &str) -> String {
    format!("{run_id}/{REPORT_FILE}")
}

/// `<run_id>/results/benchmark_test_results.json`, relative to the evidence root.
pub(crate) fn results_rel(run_id: &str) -> String {
    format!("{run_id}/{}", crate::bench::result::RESULTS_REL_PATH)
}

/// The evidence directories of a run: `<run_id>` and every `<run_id>__recheck__*`, sorted.
pub(crate) fn run_dirs(evidence_root: &Path, run_id: &str) -> Result<Vec<String>, EvidenceError> {
    let prefix = format!("{run_id}{RECHECK_INFIX}");
    let mut dirs = Vec::new();
    let entries =
        std::fs::read_dir(evidence_root).map_err(|e| EvidenceError::io(evidence_root, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| EvidenceError::io(evidence_root, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name == run_id || name.starts_with(&prefix)) && entry.path().is_dir() {
            dirs.push(name);
        }
    }
    dirs.sort();
    if !dirs.iter().any(|d| d == run_id) {
        return Err(EvidenceError::Invalid {
            path: evidence_root.join(run_id).display().to_string(),
            message: format!("evidence directory of run {run_id:?} does not exist"),
        });
    }
    Ok(dirs)
}
