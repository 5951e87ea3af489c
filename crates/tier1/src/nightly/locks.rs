//! The workflow's two concurrency groups, modelled for the local store as blocking file locks under
//! `<store>/locks/`: `tier1-nightly-producer` (one producer at a time, queued) and the short
//! `tier1-history-publication` (restore live history again, merge or promote, upload). The producer
//! lock file also remembers the last run id it handed out, so two queued producers in the same
//! second never get the same reference run id. A lock file is never opened through a symbolic
//! link, and a job queued on a lock stops waiting when SIGINT or SIGTERM arrives.

use crate::fsx::{self, fault, fault::Point};
use crate::process::Cancelled;
use crate::store::StoreError;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

/// How often a queued job checks for the lock and for a cancellation.
const POLL: Duration = Duration::from_millis(50);

/// Why a group lock was not taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    /// The lock file could not be opened or locked.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// SIGINT or SIGTERM arrived while the job was queued.
    #[error("{0} while queued on the concurrency group {1}")]
    Cancelled(Cancelled, String),
}

/// Concurrency group of the producer job.
pub(crate) const PRODUCER: &str = "tier1-nightly-producer";
/// Concurrency group of publication and promotion.
pub(crate) const PUBLICATION: &str = "tier1-history-publication";

/// The publication group of a runner class: [`PUBLICATION`], or `<PUBLICATION>-<class>` (each
/// class publishes under its own lock, as its workflow jobs do).
pub(crate) fn publication_group(class: Option<&str>) -> String {
    match class {
        Some(c) => format!("{PUBLICATION}-{c}"),
        None => PUBLICATION.to_string(),
    }
}

/// A held group lock; released when dropped.
#[derive(Debug)]
pub(crate) struct GroupLock {
    file: File,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Wait for and take the lock of `group` in the store at `store_dir`; stop waiting when a
/// cancellation is requested ([`crate::process::requested`]).
pub(crate) fn acquire(store_dir: &Path, group: &str) -> Result<GroupLock, LockError> {
    let dir = store_dir.join("locks");
    fsx::real_dir(&dir).map_err(io(&dir))?;
    let path = dir.join(format!("{group}.lock"));
    let file = fsx::open_no_follow(
        &path,
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .map_err(io(&path))?;
    let mut announced = false;
    loop {
        if let Some(c) = crate::process::requested() {
            return Err(LockError::Cancelled(c, group.to_string()));
        }
        match file.try_lock() {
            Ok(()) => return Ok(GroupLock { file }),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e).into()),
        }
        if !announced {
            tracing::info!(group, "waiting for the concurrency group");
            announced = true;
        }
        std::thread::sleep(POLL);
    }
}

impl GroupLock {
    /// The note the previous holder left (the producer's last run id).
    pub(crate) fn note(&mut self) -> String {
        let mut s = String::new();
        let _ = self
            .file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_string(&mut s));
        s.trim().to_string()
    }

    /// Leave a note for the next holder.
    pub(crate) fn set_note(&mut self, note: &str) -> std::io::Result<()> {
        fault::hit(Point::Write, Path::new("locks"))?;
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(note.as_bytes())?;
        self.file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_lock_is_exclusive_and_keeps_its_note() {
        let t = tempfile::tempdir().unwrap();
        let mut a = acquire(t.path(), PRODUCER).unwrap();
        a.set_note("run-1").unwrap();
        let path = t.path().join("locks").join(format!("{PRODUCER}.lock"));
        let other = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert!(other.try_lock().is_err(), "held by a");
        drop(a);
        assert!(other.try_lock().is_ok(), "released on drop");
        other.unlock().unwrap();
        let mut b = acquire(t.path(), PRODUCER).unwrap();
        assert_eq!(b.note(), "run-1");
        let _p = acquire(t.path(), PUBLICATION).unwrap();
    }

    #[test]
    fn a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_untouched() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        std::fs::create_dir_all(t.path().join("locks")).unwrap();
        let link = t.path().join("locks").join(format!("{PRODUCER}.lock"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = acquire(t.path(), PRODUCER).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(e.contains(&link.display().to_string()), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // A symbolic link in place of the locks directory is refused too.
        let t2 = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(t.path(), t2.path().join("locks")).unwrap();
        let e = acquire(t2.path(), PUBLICATION).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
    }
}
