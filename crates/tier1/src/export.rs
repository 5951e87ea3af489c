//! `tier1-export`: the verified history package (live runs, segment records, the segments still in
//! the package) as one deterministic archive with its SHA-256, a record that outlives the 90-day
//! artifacts; the vaulted segments stay in the vault, which never expires. The history is validated
//! strictly and every segment is opened (deep check) before anything is written; the archive is the
//! history package plus a header (`history::export_header`), and `<archive>.sha256` holds its
//! digest. Both are staged beside the output (`.tier1-export-p<pid>-…`, collected by the next run
//! when a kill leaves it) and placed digest first, never replacing a file: an archive is never
//! visible without its digest, and a rerun of the same export after a kill between the two
//! completes the pair. `tier1-restore --from-export` verifies both offline (`restore::export`).

use crate::archive::{self, ArchiveError};
use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use crate::history::export_header::{EXPORT_HEADER, ExportHeader};
use crate::history_check::restorable::{PackageRefused, would_restore_accept};
use crate::history_check::{segments, validate_history_root};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    /// The history root (a restored or published history).
    pub history_root: PathBuf,
    /// The archive to write (must not exist); its digest goes to `<output>.sha256`.
    pub output: PathBuf,
}

/// The JSON `tier1-export` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ExportOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// The archive written.
    pub(crate) archive: String,
    /// The digest file written beside it (`sha256sum` format).
    pub(crate) digest_file: String,
    /// `sha256:<hex>` of the archive.
    pub(crate) digest: String,
    /// The archive's size.
    pub(crate) bytes: u64,
    /// Sealed runs whose files were checked against their segments' manifests.
    pub(crate) sealed_runs_checked: usize,
    /// Segments whose archive lives in the vault, not in the package: the export carries their
    /// records (checked against the vault by restore, opened by `tier1-vault --deep`).
    pub(crate) vaulted_segments: usize,
    /// What the archive holds (its header).
    #[serde(flatten)]
    pub(crate) header: ExportHeader,
}

/// Why an export was not written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The history fails validation (structural or integrity): nothing is exported.
    #[error("history {root}: {source}")]
    History {
        /// The history root.
        root: String,
        /// The failure.
        source: HistoryError,
    },
    /// The history holds something restore would refuse.
    #[error("history {root}: {source}")]
    Package {
        /// The history root.
        root: String,
        /// The failure.
        source: PackageRefused,
    },
    /// The output (or its digest file) already exists, or lies inside the history root.
    #[error("{0}")]
    Output(String),
    /// Writing the archive failed.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for ExportError {
    fn exit(&self) -> Exit {
        match self {
            ExportError::History { source, .. } => source.exit(),
            ExportError::Package { source, .. } => source.exit(),
            ExportError::Output(_) => Exit::Conflict,
            ExportError::Archive(e) => e.exit(),
            ExportError::Io { .. } => Exit::Io,
        }
    }
}

/// `<archive>.sha256`.
pub(crate) fn digest_file(archive: &Path) -> PathBuf {
    let mut name = archive.as_os_str().to_os_string();
    name.push(".sha256");
    PathBuf::from(name)
}

fn check_output(req: &ExportRequest) -> Result<(), ExportError> {
    let sidecar = digest_file(&req.output);
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if exists(&req.output) && exists(&sidecar) {
        return Err(ExportError::Output(format!(
            "{}: already exists (with {}); an export is never overwritten (choose another name)",
            req.output.display(),
            sidecar.display()
        )));
    }
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| ExportError::Io { path, source }
    };
    let out = crate::fsx::resolve_path(&req.output).map_err(io(&req.output))?;
    let root = crate::fsx::resolve_path(&req.history_root).map_err(io(&req.history_root))?;
    if out.starts_with(&root) {
        return Err(ExportError::Output(format!(
            "{}: the export must not be written inside the history root {}",
            req.output.display(),
            req.history_root.display()
        )));
    }
    Ok(())
}

/// Whether `dest` already holds exactly `staged`'s bytes (the half of this same export that an
/// interrupted run placed); `false` when it is absent.
fn holds_same(dest: &Path, staged: &Path) -> Result<bool, ExportError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| ExportError::Io { path, source }
    };
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(dest)(e)),
        Ok(m) if m.is_file() => {
            let same = crate::digest::Digest::of_file(dest).map_err(io(dest))?
                == crate::digest::Digest::of_file(staged).map_err(io(staged))?;
            if same {
                tracing::info!(file = %dest.display(), "already written by an interrupted run of this same export: kept");
                Ok(true)
            } else {
                Err(ExportError::Output(format!(
                    "{}: already exists and differs from this export; an export is never overwritten (choose another name)",
                    dest.display()
                )))
            }
        }
        Ok(_) => Err(ExportError::Output(format!(
            "{}: already exists and is not a regular file; an export is never overwritten (choose another name)",
            dest.display()
        ))),
    }
}

/// Place `staged` at `dest` without replacing anything (a hard link, else a rename).
fn place(staged: &Path, dest: &Path) -> Result<(), ExportError> {
    let io = |source| ExportError::Io {
        path: dest.display().to_string(),
        source,
    };
    crate::fsx::fault::hit(crate::fsx::fault::Point::Rename, dest).map_err(io)?;
    match std::fs::hard_link(staged, dest) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(ExportError::Output(format!(
                "{}: appeared while exporting; an export is never overwritten (choose another name)",
                dest.display()
            )))
        }
        Err(_) => std::fs::rename(staged, dest).map_err(io),
    }
}

/// Verify the whole history at `req.history_root` and write it as one archive with its digest.
pub fn export(req: &ExportRequest) -> Result<ExportOutcome, ExportError> {
    check_output(req)?;
    let root = &req.history_root;
    let shown = root.display().to_string();
    let history = |source| ExportError::History {
        root: shown.clone(),
        source,
    };
    let validated = validate_history_root(root).map_err(history)?;
    let deep = segments::check_deep(root, &validated.doc).map_err(history)?;
    would_restore_accept(root).map_err(|source| ExportError::Package {
        root: shown.clone(),
        source,
    })?;
    let header = ExportHeader::of(
        &validated.doc,
        validated.latest_anchor.as_ref().map(|a| a.run_id.clone()),
    );
    let parent = crate::fsx::stale::beside(&req.output);
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| ExportError::Io { path, source }
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    crate::fsx::stale::tidy_beside(&[&req.output]);
    let stage = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("export"))
        .tempdir_in(&parent)
        .map_err(io(&parent))?;
    let tree = stage.path().join("tree");
    crate::fsx::link_tree(root, &tree).map_err(io(root))?;
    let header_bytes = crate::json::to_pretty(&header, EXPORT_HEADER)
        .map_err(|e| io(&tree)(std::io::Error::other(e.to_string())))?;
    crate::fsx::write_atomic(&tree.join(EXPORT_HEADER), &header_bytes).map_err(io(&tree))?;
    let archive_tmp = stage.path().join("export.zip");
    let digest = archive::write_deterministic_zip(&tree, &archive_tmp)?;
    let bytes = std::fs::metadata(&archive_tmp)
        .map_err(io(&archive_tmp))?
        .len();
    let name = req
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sidecar = digest_file(&req.output);
    let sidecar_tmp = stage.path().join("export.zip.sha256");
    crate::fsx::write_atomic(
        &sidecar_tmp,
        format!("{}  {name}\n", digest.hex()).as_bytes(),
    )
    .map_err(io(&sidecar))?;
    // The digest file first, then the archive: an archive is never visible without its digest,
    // and a rerun after a kill between the two finds its own half and completes the pair.
    let sidecar_there = holds_same(&sidecar, &sidecar_tmp)?;
    let archive_there = holds_same(&req.output, &archive_tmp)?;
    if !sidecar_there {
        place(&sidecar_tmp, &sidecar)?;
    }
    if !archive_there {
        place(&archive_tmp, &req.output)?;
    }
    tracing::info!(archive = %req.output.display(), %digest, runs = header.run_count, "exported the history");
    Ok(ExportOutcome {
        success: true,
        archive: req.output.display().to_string(),
        digest_file: sidecar.display().to_string(),
        digest: digest.to_string(),
        bytes,
        sealed_runs_checked: deep.runs,
        vaulted_segments: deep.vaulted_unchecked,
        header,
    })
}
