//! `tier1-export`: the verified history package (live runs, segment records, the segments still in
//! the package) as one deterministic archive with its SHA-256, a record that outlives the 90-day
//! artifacts; the vaulted segments stay in the vault, which never expires. The history is validated
//! strictly and every segment is opened (deep check) before anything is written; the archive is the
//! history package plus a header (`history::export_header`), and `<archive>.sha256` holds its
//! digest. `tier1-restore --from-export` verifies both offline (`restore::export`).

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
    for p in [req.output.clone(), digest_file(&req.output)] {
        if std::fs::symlink_metadata(&p).is_ok() {
            return Err(ExportError::Output(format!(
                "{}: already exists; an export is never overwritten (choose another name)",
                p.display()
            )));
        }
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
    let parent = match req.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| ExportError::Io { path, source }
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let stage = tempfile::Builder::new()
        .prefix(".tier1-export-")
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
    std::fs::rename(&archive_tmp, &req.output).map_err(io(&req.output))?;
    if let Err(e) =
        crate::fsx::write_atomic(&sidecar, format!("{}  {name}\n", digest.hex()).as_bytes())
    {
        let _ = std::fs::remove_file(&req.output);
        return Err(io(&sidecar)(e));
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
