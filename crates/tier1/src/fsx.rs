//! Filesystem discipline: atomic file writes, staged output trees renamed into place, empty-destination
//! checks, and the safe-name rules for run ids and relative paths.

use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// True when `s` matches `^[A-Za-z0-9][A-Za-z0-9_.-]*$` (the reference safe run-id pattern).
pub fn is_safe_run_id(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// True when `s` is one safe path component: `^[A-Za-z0-9_.-]+$`, not `.` or `..`.
pub fn is_safe_component(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Check that `rel` is a relative, `/`-separated path of safe components (no absolute path, no `..`,
/// no empty component). Returns the components.
pub fn safe_relative_parts(rel: &str) -> Option<Vec<&str>> {
    if rel.is_empty() || rel.starts_with('/') || rel.contains('\\') {
        return None;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    parts.iter().all(|p| is_safe_component(p)).then_some(parts)
}

/// Join a checked relative path under `root`; `None` when it is not safe.
pub fn join_safe(root: &Path, rel: &str) -> Option<PathBuf> {
    let parts = safe_relative_parts(rel)?;
    let mut p = root.to_path_buf();
    for c in parts {
        p.push(c);
    }
    Some(p)
}

/// True when a filesystem path has only normal components (no root, `..`, or prefix).
pub fn is_plain_relative(p: &Path) -> bool {
    p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Write `bytes` to `path` atomically: a temporary sibling, fsync, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".tier1-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`write_atomic`] unless `path` already holds exactly `bytes`; returns whether it wrote.
/// Rewriting identical content would only cost an fsync per file (thousands in a large history).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    match fs::read(path) {
        Ok(old) if old == bytes => Ok(false),
        Ok(_) => write_atomic(path, bytes).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_atomic(path, bytes).map(|()| true),
        Err(e) => Err(e),
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// True when `dir` does not exist or is an empty directory.
pub fn is_absent_or_empty(dir: &Path) -> io::Result<bool> {
    match fs::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e),
    }
}

/// A temporary directory beside a destination. Build the output inside [`StagedDir::path`], then
/// [`StagedDir::commit`] renames it into place; dropping it without commit removes it, so a refused
/// operation leaves no partial output.
#[derive(Debug)]
pub struct StagedDir {
    tmp: Option<tempfile::TempDir>,
    dest: PathBuf,
}

impl StagedDir {
    /// Stage for `dest`, which must be absent or an empty directory.
    pub fn new(dest: &Path) -> io::Result<Self> {
        if !is_absent_or_empty(dest)? {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("destination {} is not empty", dest.display()),
            ));
        }
        let parent = parent_dir(dest);
        fs::create_dir_all(parent)?;
        let tmp = tempfile::Builder::new()
            .prefix(".tier1-stage-")
            .tempdir_in(parent)?;
        Ok(StagedDir {
            tmp: Some(tmp),
            dest: dest.to_path_buf(),
        })
    }

    /// Where to build the output.
    pub fn path(&self) -> &Path {
        self.tmp.as_ref().map(|t| t.path()).unwrap_or(&self.dest)
    }

    /// The final destination.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Rename the staged tree into place (an empty destination directory is replaced).
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let tmp = self.tmp.take().expect("staged dir committed once");
        let staged = tmp.keep();
        if self.dest.is_dir() {
            // Only an empty directory can be here (checked in `new`); rename over it atomically.
            fs::remove_dir(&self.dest)?;
        }
        if let Err(e) = fs::rename(&staged, &self.dest) {
            let _ = fs::remove_dir_all(&staged);
            return Err(e);
        }
        Ok(self.dest.clone())
    }
}

/// Copy a directory tree (regular files and directories only; symlinks are refused).
pub fn copy_tree(src: &Path, dst: &Path) -> io::Result<()> {
    fs::create_dir_all(dst)?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        let to = dst.join(entry.file_name());
        if ty.is_dir() {
            copy_tree(&entry.path(), &to)?;
        } else if ty.is_file() {
            fs::copy(entry.path(), &to)?;
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "refusing to copy non-regular file {}",
                    entry.path().display()
                ),
            ));
        }
    }
    Ok(())
}

/// All regular files under `root`, as sorted `/`-separated relative paths.
pub fn list_files(root: &Path) -> io::Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            let p = entry.path();
            if ty.is_dir() {
                walk(root, &p, out)?;
            } else {
                let rel = p.strip_prefix(root).map_err(io::Error::other)?;
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_and_paths() {
        assert!(is_safe_run_id("20260816_031500_tier1_nightly_abcdef12"));
        assert!(is_safe_run_id("a.b-c_d"));
        for bad in ["", "_x", ".x", "a/b", "a b", "ä"] {
            assert!(!is_safe_run_id(bad), "{bad}");
        }
        assert!(safe_relative_parts("r1/summary.json").is_some());
        for bad in ["/abs", "../x", "a/../b", "a//b", "a/./b", "a\\b", ""] {
            assert!(safe_relative_parts(bad).is_none(), "{bad}");
        }
    }

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
    fn staged_dir_commits_or_vanishes() {
        let t = tempfile::tempdir().unwrap();
        let dest = t.path().join("out");
        {
            let s = StagedDir::new(&dest).unwrap();
            fs::write(s.path().join("f"), b"x").unwrap();
        }
        assert!(!dest.exists(), "dropped stage leaves nothing");
        let s = StagedDir::new(&dest).unwrap();
        fs::write(s.path().join("f"), b"x").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read(dest.join("f")).unwrap(), b"x");
        assert!(
            StagedDir::new(&dest).is_err(),
            "non-empty destination refused"
        );
        assert_eq!(
            fs::read_dir(t.path()).unwrap().count(),
            1,
            "no stray temp dirs"
        );
    }
}
