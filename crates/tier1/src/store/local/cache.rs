//! The last `store.json` parsed, kept while the file is unchanged. Restore's discovery asks the
//! store once per run it scans (up to 100), and `store.json` keeps every run and artifact record
//! the store ever held, so without it a restore parsed the whole file a hundred times: a cost that
//! grew with the store's age. Every rewrite of `store.json` is an atomic rename (a new inode), and
//! the cache holds the parsed version's file open so that its inode cannot be reused; any write in
//! place changes its ctime. So a file with the same device, inode, size, mtime and ctime is the
//! file already parsed.

use super::StoreState;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex, PoisonError};

/// What identifies one version of `store.json` on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of an open file.
    pub(super) fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// The parsed state of the version of `store.json` last read, shared by a handle's clones.
#[derive(Debug, Default)]
pub(super) struct StateCache {
    last: Mutex<Option<Kept>>,
}

/// One parsed version: its stamp, its file held open, its state.
#[derive(Debug)]
struct Kept {
    stamp: Stamp,
    _file: fs::File,
    state: Arc<StoreState>,
}

impl StateCache {
    /// The state parsed from the version `stamp`, if it is the one kept.
    pub(super) fn get(&self, stamp: Stamp) -> Option<Arc<StoreState>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.as_ref()
            .filter(|kept| kept.stamp == stamp)
            .map(|kept| Arc::clone(&kept.state))
    }

    /// Keep `state`, parsed from `file`, whose version is `stamp`.
    pub(super) fn put(&self, stamp: Stamp, file: fs::File, state: Arc<StoreState>) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(Kept {
            stamp,
            _file: file,
            state,
        });
    }
}
