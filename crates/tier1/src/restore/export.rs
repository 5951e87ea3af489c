//! `tier1-restore --from-export FILE [--sha256 HEX]`: restore a history from a `tier1-export`
//! archive, offline, after the artifacts expired. The archive must have the expected SHA-256
//! (`--sha256`, else the `FILE.sha256` beside it); it is extracted under restore's policy, its
//! history validated and sanitized like a restored package, every segment opened and checked
//! (deep), and its header must describe the history it carries. Only then is the tree renamed
//! into the destination: any refusal leaves the destination absent or empty. The anchor's
//! evidence cannot be checked offline: the outcome says so, and the next run must be promoted
//! (docs/runbook.md).

use crate::archive::{self, ArchiveError, ExtractPolicy};
use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use crate::history::error::{HistoryError, HistoryErrorKind};
use crate::history::export_header::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, EXPORT_HEADER, ExportHeader,
};
use crate::history_check::{sanitize_restored, segments};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to restore from.
#[derive(Debug, Clone)]
pub struct ExportRestoreOptions {
    /// The export archive.
    pub export: PathBuf,
    /// Its expected SHA-256 (`sha256:<hex>` or bare hex); None: `<export>.sha256` when present.
    pub sha256: Option<String>,
    /// Destination directory: absent or empty.
    pub destination: PathBuf,
    /// The runner class whose history is recovered (None: the unnamed class): an export whose
    /// `index.json` names another class is refused (integrity, exit 4), as restore refuses such a
    /// package from the store.
    pub runner_class: Option<String>,
}

/// The JSON printed on success.
#[derive(Debug, Clone, Serialize)]
pub struct ExportRestoreOutcome {
    /// Always `restored`.
    pub(crate) status: &'static str,
    /// Always `export`.
    pub(crate) source: &'static str,
    /// Always true.
    pub(crate) history_restored: bool,
    /// The export archive.
    pub(crate) export: String,
    /// Its SHA-256 (`sha256:<hex>`).
    pub(crate) export_digest: String,
    /// Where the expected digest came from: `--sha256`, `digest file`, or `none` (then only the
    /// chain and the segments' digests vouch for the content).
    pub(crate) export_digest_checked_against: &'static str,
    /// The latest eligible anchor.
    pub(crate) anchor_run_id: Option<String>,
    /// Always false: the anchor's evidence artifact cannot be checked offline.
    pub(crate) anchor_evidence_checked: bool,
    /// Runs restored (live and sealed).
    pub(crate) run_count: usize,
    /// Of which sealed in segments.
    pub(crate) sealed_run_count: usize,
    /// Segments.
    pub(crate) segment_count: usize,
    /// Of which in the vault (their records restored; the next restore from the store checks
    /// them there).
    pub(crate) vaulted_segment_count: usize,
}

/// Why a restore from an export was refused; nothing was written to the destination.
#[derive(Debug, thiserror::Error)]
pub enum ExportRestoreError {
    /// The destination is unusable.
    #[error("--destination: {0}")]
    Destination(#[from] crate::fsx::OutputRootError),
    /// The options are unusable (a malformed digest).
    #[error("{0}")]
    Invalid(String),
    /// The export is not the one recorded, or its content fails an integrity rule.
    #[error("history export {export} failed integrity validation: {message}")]
    Integrity {
        /// The archive.
        export: String,
        /// What failed.
        message: String,
    },
    /// The export's history is malformed.
    #[error("history export {export} failed structural validation: {message}")]
    Structural {
        /// The archive.
        export: String,
        /// What failed.
        message: String,
    },
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing the restored history failed locally (the disk, never the export).
    #[error(transparent)]
    Local(crate::history::HistoryError),
}

impl Classify for ExportRestoreError {
    fn exit(&self) -> Exit {
        match self {
            ExportRestoreError::Destination(e) => e.exit(),
            ExportRestoreError::Invalid(_) | ExportRestoreError::Structural { .. } => Exit::Invalid,
            ExportRestoreError::Integrity { .. } => Exit::Integrity,
            ExportRestoreError::Io { source, .. } => crate::exit::of_io(source),
            ExportRestoreError::Local(e) => e.exit(),
        }
    }
}

/// Most bytes of `FILE.sha256` read (a digest line names the file after the digest).
const SIDECAR_MAX_BYTES: u64 = 4096;

/// The extraction policy of an export: restore's, with one more member (the header).
fn policy() -> ExtractPolicy {
    let mut p = ExtractPolicy::history();
    p.max_members += 1;
    p
}

/// The expected digest and where it came from.
fn expected_digest(
    opts: &ExportRestoreOptions,
) -> Result<(Option<Digest>, &'static str), ExportRestoreError> {
    let parse = |s: &str, from: &str| {
        Digest::parse_lenient(s.trim())
            .map_err(|e| ExportRestoreError::Invalid(format!("{from}: {e}")))
    };
    if let Some(s) = &opts.sha256 {
        return Ok((Some(parse(s, "--sha256")?), "--sha256"));
    }
    let sidecar = crate::export::digest_file(&opts.export);
    // One line of `sha256sum`: read no further than a digest line can be long.
    let read = std::fs::File::open(&sidecar).and_then(|f| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(f, SIDECAR_MAX_BYTES), &mut text)
            .map(|_| text)
    });
    match read {
        Ok(text) => {
            let first = text.split_whitespace().next().unwrap_or("");
            let shown = sidecar.display().to_string();
            Ok((Some(parse(first, &shown)?), "digest file"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, "none")),
        Err(source) => Err(ExportRestoreError::Io {
            path: sidecar.display().to_string(),
            source,
        }),
    }
}

/// Restore the history in `opts.export` into `opts.destination` (see the module documentation).
pub fn restore_from_export(
    opts: &ExportRestoreOptions,
) -> Result<ExportRestoreOutcome, ExportRestoreError> {
    let dest = &opts.destination;
    crate::fsx::check_output_root(dest, &[])?;
    crate::fsx::stale::tidy_beside(&[dest]);
    let shown = opts.export.display().to_string();
    let integrity = |message: String| ExportRestoreError::Integrity {
        export: shown.clone(),
        message,
    };
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| ExportRestoreError::Io { path, source }
    };
    let (expected, from) = expected_digest(opts)?;
    let found = Digest::of_file(&opts.export).map_err(io(&opts.export))?;
    if let Some(expected) = &expected
        && *expected != found
    {
        return Err(integrity(format!(
            "SHA-256 mismatch: expected {expected} ({from}), found {found}: the export is not the one recorded (changed or truncated)"
        )));
    }
    if expected.is_none() {
        tracing::warn!(export = %shown, "no expected digest (--sha256 or a .sha256 file): only the hash chain and the segments' digests vouch for this export");
    }
    let staged = crate::fsx::StagedDir::new(dest).map_err(io(dest))?;
    archive::extract_safe(&opts.export, staged.path(), &policy()).map_err(|e| match e {
        ArchiveError::Io { path, source } => ExportRestoreError::Io { path, source },
        other => integrity(other.to_string()),
    })?;
    let header_path = staged.path().join(EXPORT_HEADER);
    let header: ExportHeader = match std::fs::read(&header_path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| integrity(format!("{EXPORT_HEADER}: invalid content: {e}")))?,
        Err(_) => {
            return Err(integrity(format!(
                "not a tier1 history export: no {EXPORT_HEADER} at its root"
            )));
        }
    };
    if header.format != EXPORT_FORMAT || header.format_version != EXPORT_FORMAT_VERSION {
        return Err(ExportRestoreError::Structural {
            export: shown.clone(),
            message: format!(
                "{EXPORT_HEADER}: expected format {EXPORT_FORMAT:?} version {EXPORT_FORMAT_VERSION}, found {:?} version {}",
                header.format, header.format_version
            ),
        });
    }
    std::fs::remove_file(&header_path).map_err(io(&header_path))?;
    let history = |e: HistoryError| match e.kind {
        HistoryErrorKind::Integrity => integrity(e.to_string()),
        HistoryErrorKind::Structural => ExportRestoreError::Structural {
            export: shown.clone(),
            message: e.to_string(),
        },
        HistoryErrorKind::Io | HistoryErrorKind::DiskFull => ExportRestoreError::Local(e),
    };
    let validated = sanitize_restored(staged.path()).map_err(history)?;
    // A class's recovery restores the class's history only (docs/sharding.md): an export of another
    // class would make that class's anchor this one's.
    if validated.index.runner_class != opts.runner_class {
        return Err(integrity(format!(
            "index.json runner_class: expected {:?} (the runner class restored), found {:?}: an export of another runner class's history",
            opts.runner_class, validated.index.runner_class
        )));
    }
    let deep = segments::check_deep(staged.path(), &validated.doc).map_err(history)?;
    let anchor = validated.latest_anchor.as_ref().map(|a| a.run_id.clone());
    let carried = ExportHeader::of(&validated.doc, anchor.clone());
    let differences = header.differences(&carried);
    if !differences.is_empty() {
        return Err(integrity(format!(
            "{EXPORT_HEADER} does not describe the history it carries: {}",
            differences.join("; ")
        )));
    }
    staged.commit().map_err(io(dest))?;
    Ok(ExportRestoreOutcome {
        status: "restored",
        source: "export",
        history_restored: true,
        export: shown,
        export_digest: found.to_string(),
        export_digest_checked_against: from,
        anchor_run_id: anchor,
        anchor_evidence_checked: false,
        run_count: carried.run_count,
        sealed_run_count: carried.sealed_run_count,
        segment_count: carried.segment_count,
        vaulted_segment_count: deep.vaulted_unchecked,
    })
}
