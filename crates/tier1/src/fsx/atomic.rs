//! File writes: atomic (a temporary sibling, fsync, rename), skipped when the content is already
//! there, and the in-place overwrite of the files a staged tree created itself.

use super::fault::{self, Point};
use super::stale;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary sibling, fsync, then rename (which replaces a
/// symbolic link at `path` itself, never what it points to).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    fault::hit(Point::Write, path)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&stale::temp_prefix("tmp"))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    fault::hit(Point::Rename, path)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`write_atomic`] unless `path` already holds exactly `bytes`; returns whether it wrote.
/// Rewriting identical content would only cost an fsync per file (thousands in a large history).
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    match fs::read(path) {
        Ok(old) if old == bytes => Ok(false),
        Ok(_) => write_atomic(path, bytes).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_atomic(path, bytes).map(|()| true),
        Err(e) => Err(e),
    }
}

/// Overwrite `path` in place with `bytes` unless it already holds exactly those bytes; returns
/// whether it wrote. Only for files a staged tree created itself (see [`StagedDir`](super::StagedDir); never a file
/// shared through [`link_tree`](super::link_tree)): the tree becomes visible by one directory rename, so a per-file
/// temporary, fsync and rename would only cost an inode and a disk flush per file (a thousand-run
/// restore rewrites thousands of files).
pub(crate) fn overwrite_staged_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    match fs::read(path) {
        Ok(old) if old == bytes => Ok(false),
        Ok(old) => overwrite_staged(path, bytes, old.len()).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            overwrite_staged(path, bytes, 0).map(|()| true)
        }
        Err(e) => Err(e),
    }
}

/// Write `bytes` over the file of a staged tree at `path` whose current length is `old_len`
/// (created when absent). The file is overwritten and cut only when it shrinks, never opened with
/// `O_TRUNC`: ext4 flushes a file truncated to zero when it is closed, so each rewrite cost a disk
/// write.
pub(crate) fn overwrite_staged(path: &Path, bytes: &[u8], old_len: usize) -> io::Result<()> {
    fault::hit(Point::Write, path)?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    f.write_all(bytes)?;
    if bytes.len() < old_len {
        f.set_len(bytes.len() as u64)?;
    }
    Ok(())
}

pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_if_changed_skips_identical_content() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        assert!(write_if_changed(&p, b"a").unwrap());
        assert!(!write_if_changed(&p, b"a").unwrap());
        assert!(write_if_changed(&p, b"b").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"b");
    }

    #[test]
    fn staged_overwrites_grow_shrink_and_skip_identical_content() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        assert!(overwrite_staged_if_changed(&p, b"hello world").unwrap());
        assert!(!overwrite_staged_if_changed(&p, b"hello world").unwrap());
        assert!(overwrite_staged_if_changed(&p, b"bye").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"bye");
        assert!(overwrite_staged_if_changed(&p, b"a longer text").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"a longer text");
        overwrite_staged(&p, b"", 13).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"");
    }
}
