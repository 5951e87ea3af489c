//! Filesystem discipline: atomic file writes, staged output trees renamed into place, output-root
//! checks (absent or empty, never a symbolic link, never inside or around an input tree), files
//! opened without following symbolic links, and the safe-name rules for run ids and relative paths.
//! Temporary names and their collection after a crash live in [`stale`]; the test-only fault
//! injection every write and rename point reports to lives in [`fault`].

pub mod fault;
pub mod stale;

use fault::Point;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
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

/// Write `bytes` to `path` atomically: a temporary sibling, fsync, then rename (which replaces a
/// symbolic link at `path` itself, never what it points to).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
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

/// The error for a file that is a symbolic link where tier1 reads or writes a file of its own.
pub fn symlink_refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link: refusing to open it (expected a regular file)",
            path.display()
        ),
    )
}

/// Open `path` with `options`, refusing a symbolic link as its last component (`O_NOFOLLOW`)
/// with [`symlink_refused`]'s message.
pub fn open_no_follow(path: &Path, options: &mut fs::OpenOptions) -> io::Result<fs::File> {
    options
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => symlink_refused(path),
            _ => e,
        })
}

/// Read a whole file without following a symbolic link.
pub fn read_no_follow(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = open_no_follow(path, fs::OpenOptions::new().read(true))?;
    let mut out = Vec::new();
    io::Read::read_to_end(&mut f, &mut out)?;
    Ok(out)
}

/// Create the directory `dir` when absent (its parents too) and check that it is a real directory,
/// never a symbolic link to one.
pub fn real_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link: refusing to use it (expected a real directory)",
                dir.display()
            ),
        )),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir)?;
            real_dir(dir)
        }
        Err(e) => Err(e),
    }
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

/// Overwrite `path` in place with `bytes` unless it already holds exactly those bytes; returns
/// whether it wrote. Only for files a staged tree created itself (see [`StagedDir`]; never a file
/// shared through [`link_tree`]): the tree becomes visible by one directory rename, so a per-file
/// temporary, fsync and rename would only cost an inode and a disk flush per file (a thousand-run
/// restore rewrites thousands of files).
pub fn overwrite_staged_if_changed(path: &Path, bytes: &[u8]) -> io::Result<bool> {
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
pub fn overwrite_staged(path: &Path, bytes: &[u8], old_len: usize) -> io::Result<()> {
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

/// Why an output root cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputRootError {
    /// The output root is a symbolic link (dangling or not): the write could land elsewhere.
    #[error(
        "output root {path} is a symbolic link: expected a path that does not exist or an empty directory"
    )]
    Symlink {
        /// The output root.
        path: String,
    },
    /// Something other than a directory is there.
    #[error(
        "output root {path} is not a directory: expected a path that does not exist or an empty directory, found a {found}"
    )]
    NotDirectory {
        /// The output root.
        path: String,
        /// What is there (`file`, `special file`).
        found: &'static str,
    },
    /// The directory holds data.
    #[error("output root {path} exists and is not empty")]
    NotEmpty {
        /// The output root.
        path: String,
    },
    /// The output root lies inside (or is) an input tree.
    #[error(
        "output root {path} lies inside the {input} {input_path}: expected a path outside every input tree"
    )]
    InsideInput {
        /// The output root.
        path: String,
        /// Which input (`candidate history root`, ...).
        input: String,
        /// The input's path.
        input_path: String,
    },
    /// The output root holds (or is above) an input tree: replacing or filling it could destroy
    /// that input.
    #[error(
        "output root {path} contains the {input} {input_path}: expected a path outside every input tree"
    )]
    ContainsInput {
        /// The output root.
        path: String,
        /// Which input.
        input: String,
        /// The input's path.
        input_path: String,
    },
    /// The path could not be inspected.
    #[error("output root {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The cause.
        source: io::Error,
    },
}

impl crate::exit::Classify for OutputRootError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            OutputRootError::Symlink { .. }
            | OutputRootError::NotDirectory { .. }
            | OutputRootError::NotEmpty { .. } => Exit::Conflict,
            OutputRootError::InsideInput { .. } | OutputRootError::ContainsInput { .. } => {
                Exit::Invalid
            }
            OutputRootError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

/// `p` made absolute with every existing prefix resolved through the filesystem (symbolic links,
/// `..`) and the non-existent rest normalised lexically (it holds no links).
pub fn resolve_path(p: &Path) -> io::Result<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    };
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    let mut base = loop {
        match (fs::canonicalize(existing), existing.parent()) {
            (Ok(c), _) => break c,
            (Err(_), Some(parent)) => {
                rest.extend(existing.components().next_back());
                existing = parent;
            }
            (Err(e), None) => return Err(e),
        }
    };
    for c in rest.into_iter().rev() {
        match c {
            Component::ParentDir => {
                base.pop();
            }
            Component::Normal(n) => base.push(n),
            _ => {}
        }
    }
    Ok(base)
}

/// Check an output root before anything is read or written: it must not be a symbolic link, must
/// be absent or an empty directory, and must neither lie inside nor contain any of `inputs`
/// (`(name, path)`, compared once every existing prefix is resolved).
pub fn check_output_root(out: &Path, inputs: &[(&str, &Path)]) -> Result<(), OutputRootError> {
    let path = out.display().to_string();
    let io_at = |p: &Path| {
        let path = p.display().to_string();
        move |source| OutputRootError::Io { path, source }
    };
    match fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => return Err(OutputRootError::Symlink { path }),
        Ok(m) if !m.is_dir() => {
            let found = if m.is_file() { "file" } else { "special file" };
            return Err(OutputRootError::NotDirectory { path, found });
        }
        Ok(_) => {
            if !is_absent_or_empty(out).map_err(io_at(out))? {
                return Err(OutputRootError::NotEmpty { path });
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_at(out)(e)),
    }
    check_disjoint(out, inputs)
}

/// Refuse an output `out` that is, lies inside or contains one of `inputs` (`(name, path)`),
/// comparing paths with every existing prefix resolved (symbolic links, `..`).
pub fn check_disjoint(out: &Path, inputs: &[(&str, &Path)]) -> Result<(), OutputRootError> {
    let path = out.display().to_string();
    let io_at = |p: &Path| {
        let path = p.display().to_string();
        move |source| OutputRootError::Io { path, source }
    };
    let resolved = resolve_path(out).map_err(io_at(out))?;
    for (name, input) in inputs {
        let root = resolve_path(input).map_err(io_at(input))?;
        let (input, input_path) = ((*name).to_string(), input.display().to_string());
        if resolved.starts_with(&root) {
            return Err(OutputRootError::InsideInput {
                path,
                input,
                input_path,
            });
        }
        if root.starts_with(&resolved) {
            return Err(OutputRootError::ContainsInput {
                path,
                input,
                input_path,
            });
        }
    }
    Ok(())
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
    /// Stage for `dest`, which must be absent or an empty directory (never a symbolic link).
    pub fn new(dest: &Path) -> io::Result<Self> {
        if fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "destination {} is a symbolic link: expected a path that does not exist or an empty directory",
                    dest.display()
                ),
            ));
        }
        if !is_absent_or_empty(dest)? {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("destination {} is not empty", dest.display()),
            ));
        }
        let parent = parent_dir(dest);
        fs::create_dir_all(parent)?;
        let tmp = tempfile::Builder::new()
            .prefix(&stale::temp_prefix("stage"))
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

    /// Rename the staged tree into place (an empty destination directory is replaced). On failure
    /// the staged tree is removed and the destination is as it was.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let tmp = self.tmp.take().expect("staged dir committed once");
        fault::hit(Point::Rename, &self.dest)?;
        let dest_is_dir = fs::symlink_metadata(&self.dest).is_ok_and(|m| m.is_dir());
        if dest_is_dir {
            // Only an empty directory can be here (checked in `new`); rename over it.
            fs::remove_dir(&self.dest)?;
        }
        let staged = tmp.keep();
        if let Err(e) = fs::rename(&staged, &self.dest) {
            let _ = fs::remove_dir_all(&staged);
            if dest_is_dir {
                let _ = fs::create_dir(&self.dest);
            }
            return Err(e);
        }
        Ok(self.dest.clone())
    }
}

/// Copy a directory tree (regular files and directories only; symlinks are refused).
pub fn copy_tree(src: &Path, dst: &Path) -> io::Result<()> {
    build_tree(src, dst, &|from, to| fs::copy(from, to).map(|_| ()))
}

/// Build `dst` as `src`'s tree: every regular file hard-linked where the filesystem allows it
/// (another filesystem, or no link support: copied), directories created, symlinks refused. The
/// files are shared, never written: every later write into `dst` goes through [`write_atomic`],
/// which replaces the link instead of changing the shared file. Publishing one run into a
/// thousand-run history so links thousands of unchanged files instead of copying them.
pub fn link_tree(src: &Path, dst: &Path) -> io::Result<()> {
    build_tree(src, dst, &|from, to| {
        fs::hard_link(from, to).or_else(|_| fs::copy(from, to).map(|_| ()))
    })
}

/// Recreate `src`'s directories under `dst` and `place` each regular file; anything else is refused.
fn build_tree(
    src: &Path,
    dst: &Path,
    place: &dyn Fn(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    fs::create_dir_all(dst)?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        let to = dst.join(entry.file_name());
        if ty.is_dir() {
            build_tree(&entry.path(), &to, place)?;
        } else if ty.is_file() {
            fault::hit(Point::Write, &to)?;
            place(&entry.path(), &to)?;
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
    fn output_roots_are_absent_or_empty_real_directories_outside_the_inputs() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        let input = w.join("cand");
        fs::create_dir_all(input.join("r1")).unwrap();
        fs::write(input.join("r1/summary.json"), b"{}").unwrap();
        let inputs = [("candidate history root", input.as_path())];
        check_output_root(&w.join("out"), &inputs).unwrap();
        fs::create_dir(w.join("empty")).unwrap();
        check_output_root(&w.join("empty"), &inputs).unwrap();
        let msg = |p: &Path| check_output_root(p, &inputs).unwrap_err().to_string();
        assert!(msg(&input).contains("is not empty"));
        fs::write(w.join("file"), b"x").unwrap();
        assert!(msg(&w.join("file")).contains("is not a directory"));
        std::os::unix::fs::symlink(w.join("empty"), w.join("link")).unwrap();
        std::os::unix::fs::symlink(w.join("gone"), w.join("dangling")).unwrap();
        for l in ["link", "dangling"] {
            assert!(msg(&w.join(l)).contains("is a symbolic link"), "{l}");
        }
        for inside in [
            "cand/new",
            "cand/r1/new/deeper",
            "empty/../cand/x",
            "link/../cand/y",
        ] {
            let m = msg(&w.join(inside));
            assert!(
                m.contains("lies inside the candidate history root"),
                "{inside}: {m}"
            );
        }
        assert!(matches!(
            check_output_root(&w.join("cand/new"), &inputs),
            Err(e) if crate::exit::Classify::exit(&e) == crate::exit::Exit::Invalid
        ));
        std::os::unix::fs::symlink(&input, w.join("alias")).unwrap();
        assert!(msg(&w.join("alias/new")).contains("lies inside"));
        check_output_root(&w.join("candidate-sibling"), &inputs).unwrap();
        // An output above an input (absent or empty today, a parent of the input tomorrow).
        let deep = [("store", w.join("out2/store"))];
        let deep: Vec<(&str, &Path)> = deep.iter().map(|(n, p)| (*n, p.as_path())).collect();
        let e = check_output_root(&w.join("out2"), &deep).unwrap_err();
        assert!(e.to_string().contains("contains the store"), "{e}");
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
    }

    #[test]
    fn staged_dir_refuses_a_symlinked_destination() {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir(t.path().join("real")).unwrap();
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("out")).unwrap();
        let e = StagedDir::new(&t.path().join("out")).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 2, "nothing staged");
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
