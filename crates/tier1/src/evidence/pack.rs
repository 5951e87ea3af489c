//! Pack a run's evidence (`<run_id>/` and every `<run_id>__recheck__*/`) into one deterministic zip:
//! sorted entries, fixed timestamps and modes, so packing the same evidence twice gives the same bytes
//! and the same `sha256:` digest that the upload must reproduce. Evidence that promotion would
//! refuse is refused before anything is written: too large (`packable`, before it is copied) or
//! not what promotion extracts (`history_check::restorable::would_promote_accept_evidence`).

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
    // The one predicate of the evidence's reader: promotion extracts it under
    // `ExtractPolicy::evidence`, so evidence it would refuse is never packed.
    crate::history_check::restorable::would_promote_accept_evidence(stage.path()).map_err(|e| {
        EvidenceError::invalid(
            format!("evidence of run {run_id:?}"),
            e.message().to_string(),
        )
    })?;
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

    /// Evidence that promotion's extraction would refuse (a file type it does not take) is never
    /// packed: promotion of that night could only fail later, after the upload.
    #[test]
    fn evidence_promotion_would_refuse_is_not_packed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("runs");
        std::fs::create_dir_all(root.join("r1/results")).unwrap();
        std::fs::write(root.join("r1/manifest.json"), b"{}").unwrap();
        std::fs::write(root.join("r1/results/build.log"), b"compiler output").unwrap();
        let out = t.path().join("ev.zip");
        let e = pack(&root, "r1", &out).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("r1/results/build.log"), "{msg}");
        assert!(msg.contains("promotion"), "{msg}");
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
        assert!(!out.exists(), "nothing written");
        std::fs::remove_file(root.join("r1/results/build.log")).unwrap();
        pack(&root, "r1", &out).expect("json and markdown evidence packs");
    }

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
