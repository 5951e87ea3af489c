//! Staged output trees: built in a temporary directory beside the destination, renamed into place
//! on commit, removed when dropped.

use super::atomic::parent_dir;
use super::fault::{self, Point};
use super::output_root::is_absent_or_empty;
use super::stale;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A temporary directory beside a destination. Build the output inside [`StagedDir::path`], then
/// [`StagedDir::commit`] renames it into place; dropping it without commit removes it, so a refused
/// operation leaves no partial output.
#[derive(Debug)]
pub(crate) struct StagedDir {
    tmp: Option<tempfile::TempDir>,
    dest: PathBuf,
}

impl StagedDir {
    /// Stage for `dest`, which must be absent or an empty directory (never a symbolic link).
    pub(crate) fn new(dest: &Path) -> io::Result<Self> {
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
    pub(crate) fn path(&self) -> &Path {
        self.tmp.as_ref().map(|t| t.path()).unwrap_or(&self.dest)
    }

    /// The final destination.
    pub(crate) fn dest(&self) -> &Path {
        &self.dest
    }

    /// Rename the staged tree into place (an empty destination directory is replaced). On failure
    /// the staged tree is removed and the destination is as it was.
    pub(crate) fn commit(mut self) -> io::Result<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
