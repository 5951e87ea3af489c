//! Pack a run's evidence (`<run_id>/` and every `<run_id>__recheck__*/`) into one deterministic zip:
//! sorted entries, fixed timestamps and modes, so packing the same evidence twice gives the same bytes
//! and the same `sha256:` digest that the upload must reproduce. Evidence that promotion would
//! refuse (too large, a file it does not extract) is refused before anything is written
//! (`packable`).

use super::{EvidenceError, run_dirs};
use crate::digest::Digest;
use serde::Serialize;
use std::path::Path;

/// The packed file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packed {
    /// The run id.
    pub(crate) run_id: String,
    /// Where the zip was written (as given).
    pub(crate) path: String,
    /// `sha256:` of the zip.
    pub digest: Digest,
    /// Its size.
    pub(crate) bytes: u64,
    /// The evidence directories packed.
    pub(crate) dirs: Vec<String>,
}

/// Pack the evidence of `run_id` under `evidence_root` into `out` (written atomically).
pub fn pack(evidence_root: &Path, run_id: &str, out: &Path) -> Result<Packed, EvidenceError> {
    let dirs = run_dirs(evidence_root, run_id)?;
    super::packable::check(evidence_root, &dirs)?;
    crate::fsx::stale::tidy_beside(&[out]);
    let stage = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("pack"))
        .tempdir()
        .map_err(|e| EvidenceError::io(Path::new("<tmp>"), e))?;
    for d in &dirs {
        crate::fsx::copy_tree(&evidence_root.join(d), &stage.path().join(d))
            .map_err(|e| EvidenceError::io(&evidence_root.join(d), e))?;
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| EvidenceError::io(parent, e))?;
    }
    let digest = crate::archive::write_deterministic_zip(stage.path(), out)?;
    let bytes = std::fs::metadata(out)
        .map_err(|e| EvidenceError::io(out, e))?
        .len();
    Ok(Packed {
        run_id: run_id.to_string(),
        path: out.display().to_string(),
        digest,
        bytes,
        dirs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_twice_gives_identical_bytes_and_includes_rechecks() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("runs");
        for (d, f) in [
            ("r1", "manifest.json"),
            ("r1/results", "x.json"),
            ("r1__recheck__a", "manifest.json"),
            ("r2", "manifest.json"),
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            std::fs::write(root.join(d).join(f), format!("{{\"d\":\"{d}\"}}")).unwrap();
        }
        let a = pack(&root, "r1", &t.path().join("a.zip")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let b = pack(&root, "r1", &t.path().join("b.zip")).unwrap();
        assert_eq!(a.digest, b.digest);
        assert_eq!(
            std::fs::read(t.path().join("a.zip")).unwrap(),
            std::fs::read(t.path().join("b.zip")).unwrap()
        );
        assert_eq!(a.dirs, ["r1", "r1__recheck__a"]);
        let e = pack(&root, "nope", &t.path().join("c.zip"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("evidence directory of run \"nope\" does not exist"),
            "{e}"
        );
    }
}
