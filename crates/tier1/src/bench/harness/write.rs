//! The results file written once: `<run_dir>/results/benchmark_test_results.json`, never
//! overwritten, within the size an evidence package may hold.

use super::HarnessError;
use crate::bench::limits;
use crate::bench::result::{self, ResultsFile};
use std::path::{Path, PathBuf};

/// Write `results` to `<run_dir>/results/benchmark_test_results.json`, refusing to overwrite. When
/// the write fails, a `run_dir` this call created is removed again (a rerun is not refused over an
/// empty directory).
pub fn write_results(run_dir: &Path, results: &ResultsFile) -> Result<PathBuf, HarnessError> {
    let path = run_dir.join(result::RESULTS_REL_PATH);
    if path.exists() {
        return Err(HarnessError::Exists(path.display().to_string()));
    }
    let bytes = crate::json::to_pretty(results, &path.display().to_string()).map_err(|e| {
        HarnessError::Write {
            path: path.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        }
    })?;
    if bytes.len() as u64 > limits::RESULTS_MAX_BYTES {
        return Err(HarnessError::TooLarge(format!(
            "{}: the results would take {} bytes, over the {} a results file may take (a quarter of the {} bytes promotion extracts from the evidence package): record fewer samples or variants; nothing was written",
            path.display(),
            bytes.len(),
            limits::RESULTS_MAX_BYTES,
            limits::EVIDENCE_MAX_BYTES
        )));
    }
    let created = !run_dir.exists();
    let write = || -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::fsx::write_atomic(&path, &bytes)
    };
    write().map_err(|source| {
        if created {
            let _ = std::fs::remove_dir_all(run_dir);
        }
        HarnessError::Write {
            path: path.display().to_string(),
            source,
        }
    })?;
    Ok(path)
}
