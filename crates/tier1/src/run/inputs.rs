//! The run's inputs resolved before it starts: attestations, the checkout, the run id, the
//! backend and the profile.

use super::RunError;
use crate::bench::backend::Backend;
use crate::bench::harness::HarnessError;
use crate::evidence::git::GitInfo;
use crate::suite::Suite;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Read attestation JSON files into one object keyed by file stem (`attest`, `preflight`, ...).
pub(crate) fn read_attestations(files: &[PathBuf]) -> Result<Option<Value>, RunError> {
    if files.is_empty() {
        return Ok(None);
    }
    let mut map = serde_json::Map::new();
    for f in files {
        let v: Value = crate::json::read(f)?;
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "attestation".into());
        map.insert(stem, v);
    }
    Ok(Some(Value::Object(map)))
}

/// The checkout's identity; the job's own output directories (wherever they are inside the
/// checkout, given absolute or relative to the current directory) do not make it dirty.
pub fn detect_git(repo_root: &Path, outputs: &[&Path]) -> GitInfo {
    let mut git = crate::evidence::git::detect(repo_root, outputs);
    if let Some(sha) = crate::evidence::git::expected_commit(&git) {
        git.commit = Some(sha);
    }
    git
}

/// `default_run_id` at the current time.
pub fn default_run_id_now(commit: Option<&str>) -> String {
    default_run_id(chrono::Utc::now(), commit)
}

/// `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>` (sha8 `00000000` outside a git checkout).
pub(crate) fn default_run_id(now: chrono::DateTime<chrono::Utc>, commit: Option<&str>) -> String {
    let sha8 = commit.and_then(|c| c.get(..8)).unwrap_or("00000000");
    format!("{}_tier1_nightly_{sha8}", now.format("%Y%m%d_%H%M%S"))
}
/// The backend for a profile: the profile says which backend it is for; `cpu` is always built.
/// A `cuda` profile on a machine without a usable GPU is refused by the harness, never silently
/// measured on the CPU.
pub fn backend_for(suite: &Suite, profile: &str) -> Result<Arc<dyn Backend>, HarnessError> {
    let kind = suite.profile(profile).map(|p| p.backend);
    match kind {
        Some(crate::suite::BackendKind::Cuda) => {
            crate::bench::cuda_backend().map_err(|e| HarnessError::BackendMismatch {
                profile: profile.to_string(),
                expected: "cuda".into(),
                found: format!("cpu (no usable CUDA device: {e})"),
            })
        }
        _ => Ok(Arc::new(crate::bench::CpuBackend)),
    }
}

/// The profile to use when none is given: the suite's default when a CUDA device is usable, else
/// the first profile for the CPU backend (`cpu` in the canonical suite).
pub(crate) fn default_profile(suite: &Suite) -> String {
    if crate::bench::cuda_backend().is_ok() {
        return suite.default_profile.clone();
    }
    if suite.profile("cpu").is_some() {
        return "cpu".into();
    }
    suite
        .profiles
        .iter()
        .find(|(_, p)| p.backend == crate::suite::BackendKind::Cpu)
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| suite.default_profile.clone())
}
