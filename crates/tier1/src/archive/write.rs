//! Deterministic zip writing: sorted entries, fixed timestamps and modes, deflate level 6.

use super::error::{ArchiveError, io_err, zip_err};
use super::limits::{DEFLATE_LEVEL, MEMBER_MODE};
use crate::digest::Digest;
use crate::fsx;
use std::fs;
use std::io;
use std::path::Path;
use zip::write::SimpleFileOptions;

/// Write every regular file under `src_dir` into a zip at `out_path` (atomically), byte-identical
/// for identical input: entries sorted by relative `/` path, timestamps 1980-01-01 00:00:00, mode
/// 0644, deflate level 6 (`*.gz` members stored as they are), no directory entries. Symlinks and special files are refused.
/// Returns the SHA-256 of the written archive.
pub fn write_deterministic_zip(src_dir: &Path, out_path: &Path) -> Result<Digest, ArchiveError> {
    let files = fsx::list_files(src_dir).map_err(io_err(src_dir))?;
    fsx::fault::hit(fsx::fault::Point::Write, out_path).map_err(io_err(out_path))?;
    let parent = match out_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(&fsx::stale::temp_prefix("zip"))
        .suffix(".tmp")
        .tempfile_in(parent)
        .map_err(io_err(parent))?;
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(DEFLATE_LEVEL))
        .last_modified_time(zip::DateTime::DEFAULT)
        .unix_permissions(MEMBER_MODE)
        .large_file(false);
    // The writer's `Drop` finishes an unfinished archive and prints its failure on stderr, in front
    // of the real error: after a failed write (a full disk) it is never dropped (leaked: its entry
    // list and buffers; the file belongs to `tmp`), and its `finish` writes through `Quiet`.
    let (quiet, first_error) = super::quiet::Quiet::new(tmp.as_file());
    let mut zw = std::mem::ManuallyDrop::new(zip::ZipWriter::new(quiet));

    for rel in &files {
        let path = src_dir.join(rel);
        let meta = fs::symlink_metadata(&path).map_err(io_err(&path))?;
        if !meta.file_type().is_file() {
            return Err(ArchiveError::Source {
                path: path.display().to_string(),
                message: "not a regular file (symlinks and special files are refused)".into(),
            });
        }
        // Already-compressed members (segment archives) are stored, not deflated again.
        let member_options = if rel.ends_with(".gz") {
            options
                .compression_method(zip::CompressionMethod::Stored)
                .compression_level(None)
        } else {
            options
        };
        if let Err(e) = zw.start_file(rel.as_str(), member_options) {
            return Err(match first_error.take() {
                Some(first) => io_err(out_path)(first),
                None => zip_err(&path, e),
            });
        }
        let mut f = fs::File::open(&path).map_err(io_err(&path))?;
        if let Err(e) = io::copy(&mut f, &mut *zw) {
            // The archive's own write failed (a full disk), or reading the member did.
            return Err(match first_error.take() {
                Some(first) => io_err(out_path)(first),
                None => io_err(&path)(e),
            });
        }
    }
    let finishing = std::mem::ManuallyDrop::into_inner(zw);
    let first = first_error.take();
    if let Some(e) = first {
        return Err(io_err(out_path)(e));
    }
    finishing.finish().map_err(|e| zip_err(out_path, e))?;
    tmp.as_file().sync_all().map_err(io_err(out_path))?;
    fsx::fault::hit(fsx::fault::Point::Rename, out_path).map_err(io_err(out_path))?;
    tmp.persist(out_path).map_err(|e| ArchiveError::Io {
        path: out_path.display().to_string(),
        source: e.error,
    })?;
    Digest::of_file(out_path).map_err(io_err(out_path))
}
