//! The workflow's two concurrency groups, modelled for the local store as blocking file locks under
//! `<store>/locks/`: `tier1-nightly-producer` (one producer at a time, queued) and the short
//! `tier1-history-publication` (restore live history again, merge or promote, upload). The producer
//! lock file also remembers the last run id it handed out, so two queued producers in the same
//! second never get the same reference run id.

use crate::store::StoreError;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Concurrency group of the producer job.
pub const PRODUCER: &str = "tier1-nightly-producer";
/// Concurrency group of publication and promotion.
pub const PUBLICATION: &str = "tier1-history-publication";

/// A held group lock; released when dropped.
#[derive(Debug)]
pub struct GroupLock {
    file: File,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Wait for and take the lock of `group` in the store at `store_dir`.
pub fn acquire(store_dir: &Path, group: &str) -> Result<GroupLock, StoreError> {
    let dir = store_dir.join("locks");
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let path = dir.join(format!("{group}.lock"));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io(&path))?;
    if file.try_lock().is_err() {
        tracing::info!(group, "waiting for the concurrency group");
        file.lock().map_err(io(&path))?;
    }
    Ok(GroupLock { file })
}

impl GroupLock {
    /// The note the previous holder left (the producer's last run id).
    pub fn note(&mut self) -> String {
        let mut s = String::new();
        let _ = self
            .file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_string(&mut s));
        s.trim().to_string()
    }

    /// Leave a note for the next holder.
    pub fn set_note(&mut self, note: &str) -> std::io::Result<()> {
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
}
