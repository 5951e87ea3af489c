//! One candidate tried (contract §5.5): download with its digest computed, safe extraction into the
//! staged tree, validation and sanitizing, its sealed segments against the vault (`vault`), the
//! anchor's evidence by metadata, renewal.

use super::discovery::Candidate;
use super::error::{CandidateError, RestoreError, io_err};
use super::evidence;
use super::options::RestoreOptions;
use crate::archive::{self, ArchiveError, ExtractPolicy};
use crate::digest::{Digest, Hasher};
use crate::fsx;
use crate::history::error::{HistoryError, HistoryErrorKind};
use crate::history_check::{self, AnchorRef};
use crate::store::{ArtifactMeta, ArtifactStore, StoreError};
use std::io::{self, Write};
use std::path::Path;

/// A sink that hashes what passes into a file (restore computes its own digest).
struct HashingFile<'a> {
    file: &'a mut std::fs::File,
    hasher: Hasher,
}

impl Write for HashingFile<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// What a successful candidate yields.
pub(crate) struct Restored {
    /// The anchor's evidence artifact.
    pub(crate) evidence: ArtifactMeta,
    /// The latest eligible anchor's run id.
    pub(crate) anchor_run_id: String,
    /// The evidence is old enough to need a renewal (allowed).
    pub(crate) renewal_required: bool,
    /// Where the sealed segments are.
    pub(crate) vault: super::vault::VaultReport,
}

/// Try one candidate into the empty `tree` (contract §5.5): its history downloaded with its
/// digest checked, extracted safely, validated and sanitized as the class's, its sealed segments
/// reconciled with the vault, then its anchor's evidence found and its age checked.
pub(crate) fn try_candidate(
    store: &dyn ArtifactStore,
    cand: &Candidate,
    opts: &RestoreOptions,
    tree: &Path,
) -> Result<Restored, CandidateError> {
    let h = &cand.history;
    let expected = expected_digest(h)?;
    let download = download(store, h, &expected, tree)?;
    archive::extract_safe(download.path(), tree, &ExtractPolicy::history())
        .map_err(|e| extract_failure(e, tree))?;
    drop(download);
    let mut validated = history_check::sanitize_restored(tree).map_err(history_failure)?;
    runner_class(
        h,
        validated.index.runner_class.as_deref(),
        opts.runner_class.as_deref(),
    )?;
    let vault = super::vault::reconcile(store, &opts.artifact_prefix, tree, &mut validated.doc)?;
    let anchor = validated.latest_anchor.ok_or_else(|| {
        CandidateError::Structural(
            "index.json: no eligible anchor (baseline_eligible: true)".into(),
        )
    })?;
    let (evidence, renewal_required) = anchor_evidence(store, opts, &anchor)?;
    Ok(Restored {
        evidence,
        anchor_run_id: anchor.run_id,
        renewal_required,
        vault,
    })
}

/// The digest the history artifact's metadata promises; without a valid one the candidate fails
/// integrity.
fn expected_digest(h: &ArtifactMeta) -> Result<Digest, CandidateError> {
    match h.digest.as_deref().map(Digest::parse) {
        Some(Ok(d)) => Ok(d),
        _ => Err(CandidateError::Integrity(format!(
            "no valid SHA-256 digest metadata (expected sha256:<64 hex>, found {:?})",
            h.digest
        ))),
    }
}

/// Download the history artifact beside `tree`, hashing what arrives; a digest other than
/// `expected` fails integrity. Returns the downloaded file (removed when dropped).
fn download(
    store: &dyn ArtifactStore,
    h: &ArtifactMeta,
    expected: &Digest,
    tree: &Path,
) -> Result<tempfile::NamedTempFile, CandidateError> {
    let parent = tree.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(&fsx::stale::temp_prefix("download"))
        .tempfile_in(parent)
        .map_err(|e| CandidateError::Fatal(io_err(parent)(e)))?;
    let download_path = tmp.path().to_path_buf();
    let mut sink = HashingFile {
        file: tmp.as_file_mut(),
        hasher: Hasher::new(),
    };
    store
        .download(h, &mut sink, archive::MAX_ARCHIVE_BYTES)
        .map_err(|e| match e {
            // The download's destination failed (a full disk): the disk's fault, not the artifact's.
            StoreError::Sink { source, .. } => CandidateError::Fatal(RestoreError::Io {
                path: download_path.display().to_string(),
                source,
            }),
            other => CandidateError::from_store(other),
        })?;
    sink.flush()
        .map_err(|e| CandidateError::Fatal(io_err(parent)(e)))?;
    let found = sink.hasher.finish();
    if found != *expected {
        return Err(CandidateError::Integrity(format!(
            "Tier-1 history artifact digest mismatch: expected {expected}, found {found}"
        )));
    }
    Ok(tmp)
}

/// A failed extraction into `tree`: a failed write (a full disk) or a destination that is not
/// empty is the destination's failure, anything else the archive's (never tampering of the disk).
fn extract_failure(e: ArchiveError, tree: &Path) -> CandidateError {
    match e {
        ArchiveError::Io { path, source } => {
            CandidateError::Fatal(RestoreError::Io { path, source })
        }
        ArchiveError::DestinationNotEmpty { .. } => CandidateError::Fatal(RestoreError::Io {
            path: tree.display().to_string(),
            source: io::Error::new(io::ErrorKind::AlreadyExists, e.to_string()),
        }),
        other => CandidateError::Integrity(other.to_string()),
    }
}

/// A failed validation of the restored tree by its kind: the package's structure or integrity,
/// or the local disk's failure.
fn history_failure(e: HistoryError) -> CandidateError {
    match e.kind {
        HistoryErrorKind::Structural => CandidateError::Structural(e.to_string()),
        HistoryErrorKind::Integrity => CandidateError::Integrity(e.to_string()),
        HistoryErrorKind::Io | HistoryErrorKind::DiskFull => {
            CandidateError::Fatal(RestoreError::Local(e))
        }
    }
}

/// The class's artifact names hold the class's history only (docs/sharding.md): a package of
/// another class (`found`) under them is a provenance mismatch, never a history to fall back on.
fn runner_class(
    h: &ArtifactMeta,
    found: Option<&str>,
    want: Option<&str>,
) -> Result<(), CandidateError> {
    if found != want {
        return Err(CandidateError::Integrity(format!(
            "history artifact {} (id {}): index.json runner_class: expected {:?} (the runner class restored), found {:?}: a history of another runner class",
            h.name, h.id, want, found
        )));
    }
    Ok(())
}

/// The anchor's evidence artifact by metadata, and whether it needs a renewal (refused unless
/// allowed).
fn anchor_evidence(
    store: &dyn ArtifactStore,
    opts: &RestoreOptions,
    anchor: &AnchorRef,
) -> Result<(ArtifactMeta, bool), CandidateError> {
    let canon = evidence::Canon {
        repository: &opts.repository,
        workflow: &opts.workflow,
        branch: &opts.branch,
    };
    let ev = evidence::find_evidence(store, anchor, &canon)?;
    let renewal_required = evidence::requires_renewal(&ev, store.now())?;
    if renewal_required && !opts.allow_anchor_renewal {
        return Err(CandidateError::Renewal(format!(
            "evidence artifact {} (id {}) of anchor {} was created {}, now {}",
            ev.name,
            ev.id,
            anchor.run_id,
            ev.created_at.to_rfc3339(),
            store.now().to_rfc3339()
        )));
    }
    Ok((ev, renewal_required))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(digest: Option<&str>) -> ArtifactMeta {
        serde_json::from_value(serde_json::json!({
            "id": 5, "name": "tier1-history-7-1", "size_in_bytes": 1, "expired": false,
            "created_at": "2026-01-01T00:00:00Z", "workflow_run_id": 7, "digest": digest,
        }))
        .unwrap()
    }

    fn integrity<T: std::fmt::Debug>(r: Result<T, CandidateError>) -> String {
        match r {
            Err(CandidateError::Integrity(m)) => m,
            other => panic!("expected an integrity failure, found {other:?}"),
        }
    }

    #[test]
    fn expected_digest_and_runner_class_rows() {
        let good = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            expected_digest(&meta(Some(&good))).unwrap().to_string(),
            good
        );
        for digest in [None, Some("sha256:zz"), Some("md5:00")] {
            assert!(
                integrity(expected_digest(&meta(digest))).starts_with("no valid SHA-256 digest"),
                "{digest:?}"
            );
        }
        let h = meta(None);
        for (found, want, ok) in [
            (None, None, true),
            (Some("b200"), Some("b200"), true),
            (None, Some("b200"), false),
            (Some("b200"), None, false),
            (Some("h100"), Some("b200"), false),
        ] {
            let r = runner_class(&h, found, want);
            assert_eq!(r.is_ok(), ok, "{found:?} {want:?}");
            if !ok {
                assert!(integrity(r).ends_with("a history of another runner class"));
            }
        }
    }

    #[test]
    fn extract_failure_rows() {
        let tree = Path::new("/t");
        let fatal = |e: CandidateError| matches!(e, CandidateError::Fatal(RestoreError::Io { .. }));
        assert!(fatal(extract_failure(
            ArchiveError::Io {
                path: "/t/x".into(),
                source: io::Error::other("full"),
            },
            tree
        )));
        assert!(fatal(extract_failure(
            ArchiveError::DestinationNotEmpty { path: "/t".into() },
            tree
        )));
        let member = ArchiveError::Member {
            member: "../x".into(),
            message: "unsafe path".into(),
        };
        assert!(matches!(
            extract_failure(member, tree),
            CandidateError::Integrity(m) if m == "archive member \"../x\": unsafe path"
        ));
    }
}
