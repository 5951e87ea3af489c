//! Tree copies: a directory tree copied or hard-linked (symbolic links refused), and the sorted
//! list of a tree's files.

use super::fault::{self, Point};
use std::fs;
use std::io;
use std::path::Path;

/// Copy a directory tree (regular files and directories only; symlinks are refused).
pub fn copy_tree(src: &Path, dst: &Path) -> io::Result<()> {
    build_tree(src, dst, &|from, to| fs::copy(from, to).map(|_| ()))
}

/// Build `dst` as `src`'s tree: every regular file hard-linked where the filesystem allows it
/// (another filesystem, or no link support: copied), directories created, symlinks refused. The
/// files are shared, never written: every later write into `dst` goes through `write_atomic`,
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
