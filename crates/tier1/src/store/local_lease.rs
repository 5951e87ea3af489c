//! Run leases of the local store: a run started with a lease (`leases/<id>.lock`, created and
//! locked before the run is recorded) is owned by the process holding that lock. When the process
//! dies, even by `kill -9`, the kernel releases the lock, so a later writer can tell an abandoned
//! `in_progress` run from a live one and complete it, as GitHub completes the run of a runner that
//! vanished. Runs recorded without a lease (by tests, or other tools) are never touched.

use super::StoreError;
use crate::fsx;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// Directory of run lease files in the store.
pub(crate) const LEASES_DIR: &str = "leases";

/// The lock a live run holds; released (and its file removed) when the run completes, or released
/// by the kernel when the process ends.
#[derive(Debug)]
pub(crate) struct RunLease {
    _file: File,
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The lease file of run `id`.
pub(crate) fn lease_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(LEASES_DIR).join(format!("{id}.lock"))
}

fn open(path: &Path, create: bool) -> Result<Option<File>, StoreError> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create)
        .truncate(false);
    match fsx::open_no_follow(path, &mut options) {
        Ok(f) => Ok(Some(f)),
        Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_at(path)(e)),
    }
}

/// Create and lock the lease of run `id` (the caller holds the store lock).
pub(crate) fn take(dir: &Path, id: u64) -> Result<RunLease, StoreError> {
    let leases = dir.join(LEASES_DIR);
    fsx::real_dir(&leases).map_err(io_at(&leases))?;
    let path = lease_path(dir, id);
    let file = open(&path, true)?.ok_or_else(|| StoreError::NotFound {
        what: path.display().to_string(),
    })?;
    file.try_lock().map_err(|e| StoreError::Corrupt {
        path: path.display().to_string(),
        message: format!("the lease of new run {id} is already held ({e}): refusing to start it"),
    })?;
    Ok(RunLease { _file: file })
}

/// True when run `id` was started with a lease that no process holds any more.
pub(crate) fn is_abandoned(dir: &Path, id: u64) -> Result<bool, StoreError> {
    let path = lease_path(dir, id);
    let Some(file) = open(&path, false)? else {
        return Ok(false);
    };
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(io_at(&path)(e)),
    }
}

/// Remove the lease file of run `id` (it may be absent).
pub(crate) fn remove(dir: &Path, id: u64) -> Result<(), StoreError> {
    let path = lease_path(dir, id);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(&path)(e)),
    }
}
