//! Packing part of an evidence root into one deterministic zip (docs/sharding.md): a shard's
//! package (its own directory, its suspects' side-by-side comparisons and its rechecks) and the
//! combined evidence of a sharded night (its manifest, merged results, report and plan). The
//! same files always give the same bytes and digest.

use super::error::{ShardError, io};
use crate::digest::Digest;
use std::path::Path;

/// Zip the files and directories `rels` (relative to `evidence_root`, each kept at its relative
/// path) into `out`, written atomically; `out` must not exist. Returns its digest and size.
pub(crate) fn pack_paths(
    evidence_root: &Path,
    rels: &[String],
    out: &Path,
) -> Result<(Digest, u64), ShardError> {
    if out.exists() || out.is_symlink() {
        return Err(ShardError::Conflict(format!(
            "{}: the package already exists; refusing to overwrite it",
            out.display()
        )));
    }
    let stage = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("pack"))
        .tempdir()
        .map_err(io(Path::new("<tmp>")))?;
    for rel in rels {
        let from = evidence_root.join(rel);
        let to = stage.path().join(rel);
        if from.is_dir() {
            crate::fsx::copy_tree(&from, &to).map_err(io(&from))?;
        } else {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::copy(&from, &to).map_err(io(&from))?;
        }
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let digest = crate::archive::write_deterministic_zip(stage.path(), out)?;
    let bytes = std::fs::metadata(out).map_err(io(out))?.len();
    Ok((digest, bytes))
}
