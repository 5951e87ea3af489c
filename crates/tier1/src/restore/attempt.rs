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
use crate::history::error::HistoryErrorKind;
use crate::history_check;
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
    pub(crate) evidence: ArtifactMeta,
    pub(crate) anchor_run_id: String,
    pub(crate) renewal_required: bool,
    pub(crate) vault: super::vault::VaultReport,
}

pub(crate) fn try_candidate(
    store: &dyn ArtifactStore,
    cand: &Candidate,
    opts: &RestoreOptions,
    tree: &Path,
) -> Result<Restored, CandidateError> {
    let h = &cand.history;
    let expected = match h.digest.as_deref().map(Digest::parse) {
        Some(Ok(d)) => d,
        _ => {
            return Err(CandidateError::Integrity(format!(
                "no valid SHA-256 digest metadata (expected sha256:<64 hex>, found {:?})",
                h.digest
            )));
        }
    };
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
    if found != expected {
        return Err(CandidateError::Integrity(format!(
            "Tier-1 history artifact digest mismatch: expected {expected}, found {found}"
        )));
    }
    archive::extract_safe(tmp.path(), tree, &ExtractPolicy::history()).map_err(|e| match e {
        // A failed write (a full disk) is the destination's failure, never tampering.
        ArchiveError::Io { path, source } => {
            CandidateError::Fatal(RestoreError::Io { path, source })
        }
        ArchiveError::DestinationNotEmpty { .. } => CandidateError::Fatal(RestoreError::Io {
            path: tree.display().to_string(),
            source: io::Error::new(io::ErrorKind::AlreadyExists, e.to_string()),
        }),
        other => CandidateError::Integrity(other.to_string()),
    })?;
    drop(tmp);
    let mut validated = history_check::sanitize_restored(tree).map_err(|e| match e.kind {
        HistoryErrorKind::Structural => CandidateError::Structural(e.to_string()),
        HistoryErrorKind::Integrity => CandidateError::Integrity(e.to_string()),
        HistoryErrorKind::Io | HistoryErrorKind::DiskFull => {
            CandidateError::Fatal(RestoreError::Local(e))
        }
    })?;
    // The class's artifact names hold the class's history only (docs/sharding.md): a package of
    // another class under them is a provenance mismatch, never a history to fall back on.
    if validated.index.runner_class != opts.runner_class {
        return Err(CandidateError::Integrity(format!(
            "history artifact {} (id {}): index.json runner_class: expected {:?} (the runner class restored), found {:?}: a history of another runner class",
            h.name, h.id, opts.runner_class, validated.index.runner_class
        )));
    }
    let vault = super::vault::reconcile(store, &opts.artifact_prefix, tree, &mut validated.doc)?;
    let anchor = validated.latest_anchor.ok_or_else(|| {
        CandidateError::Structural(
            "index.json: no eligible anchor (baseline_eligible: true)".into(),
        )
    })?;
    let canon = evidence::Canon {
        repository: &opts.repository,
        workflow: &opts.workflow,
        branch: &opts.branch,
    };
    let ev = evidence::find_evidence(store, &anchor, &canon)?;
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
    Ok(Restored {
        evidence: ev,
        anchor_run_id: anchor.run_id,
        renewal_required,
        vault,
    })
}
