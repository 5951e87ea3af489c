//! The [`LocalStore`] handle and its files: creating and opening a store directory, the write
//! lock, and reading and rewriting `store.json` under it.

use super::StoreState;
use super::cache::{Stamp, StateCache};
use super::state::STORE_SCHEMA_VERSION;
use crate::fsx;
use crate::store::StoreError;
use crate::store::local_check::{
    ARTIFACTS_DIR, LOCK_FILE, STATE_FILE, check_no_lost_state, check_no_symlinks,
    check_only_store_entries,
};
use chrono::{DateTime, Utc};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A local store rooted at a directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    pub(super) dir: PathBuf,
    pub(super) repository: String,
    pub(super) now: Option<DateTime<Utc>>,
    /// The last `store.json` parsed, shared by this handle's clones.
    pub(super) cache: Arc<StateCache>,
    #[cfg(test)]
    pub(super) parses: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

pub(super) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl LocalStore {
    /// Create the store directory for `repository` if it does not exist yet, then open it.
    /// An existing store for another repository is refused.
    pub fn create(dir: &Path, repository: &str) -> Result<Self, StoreError> {
        if repository.is_empty() {
            return Err(StoreError::Invalid(
                "local store: repository must be `owner/name`, found an empty string".into(),
            ));
        }
        let art = dir.join(ARTIFACTS_DIR);
        fsx::real_dir(dir).map_err(io_at(dir))?;
        check_no_symlinks(dir)?;
        let state_path = dir.join(STATE_FILE);
        if fs::symlink_metadata(&state_path).is_err() {
            // Checked before anything is created in `dir`, and again under the lock below.
            check_only_store_entries(dir)?;
            check_no_lost_state(dir)?;
        }
        fsx::real_dir(&art).map_err(io_at(&art))?;
        let store = LocalStore {
            dir: dir.to_path_buf(),
            repository: repository.to_string(),
            now: None,
            cache: Arc::default(),
            #[cfg(test)]
            parses: Default::default(),
        };
        let _lock = store.lock()?;
        if fs::symlink_metadata(&state_path).is_ok() {
            let state = store.load()?;
            if state.repository != repository {
                return Err(StoreError::Invalid(format!(
                    "local store {} models repository {}, not {repository}",
                    dir.display(),
                    state.repository
                )));
            }
        } else {
            check_no_lost_state(dir)?;
            store.save(&StoreState::empty(repository))?;
        }
        Ok(store)
    }

    /// Open an existing store (its `store.json` must exist).
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let mut store = LocalStore {
            dir: dir.to_path_buf(),
            repository: String::new(),
            now: None,
            cache: Arc::default(),
            #[cfg(test)]
            parses: Default::default(),
        };
        check_no_symlinks(dir)?;
        if fs::symlink_metadata(dir.join(STATE_FILE)).is_err() {
            check_no_lost_state(dir)?;
            return Err(StoreError::NotFound {
                what: format!("local store {} ({STATE_FILE})", dir.display()),
            });
        }
        store.repository = store.load()?.repository.clone();
        Ok(store)
    }

    /// Fix the clock (tests, `--now`): creation times, ages and expiry use it.
    pub fn with_now(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }

    /// How many times this handle parsed `store.json`.
    #[cfg(test)]
    pub(crate) fn state_parses(&self) -> u64 {
        self.parses.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The store directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of an artifact's bytes.
    pub fn artifact_path(&self, id: u64) -> PathBuf {
        self.dir.join(ARTIFACTS_DIR).join(format!("{id}.bin"))
    }

    /// Take the store's write lock (never through a symbolic link). A signal interrupting the
    /// wait does not abandon the write: the lock is held briefly by every writer.
    pub(super) fn lock(&self) -> Result<fs::File, StoreError> {
        let path = self.dir.join(LOCK_FILE);
        let f = fsx::open_no_follow(
            &path,
            fs::File::options().create(true).truncate(false).write(true),
        )
        .map_err(io_at(&path))?;
        loop {
            match f.lock() {
                Ok(()) => return Ok(f),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_at(&path)(e)),
            }
        }
    }

    /// Read `store.json` (never through a symbolic link); an unchanged file is parsed once
    /// (`store/local/cache.rs`).
    pub fn load(&self) -> Result<Arc<StoreState>, StoreError> {
        let path = self.dir.join(STATE_FILE);
        let mut file =
            fsx::open_no_follow(&path, fs::OpenOptions::new().read(true)).map_err(io_at(&path))?;
        let stamp = Stamp::of(&file.metadata().map_err(io_at(&path))?);
        if let Some(state) = self.cache.get(stamp) {
            return Ok(state);
        }
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes).map_err(io_at(&path))?;
        #[cfg(test)]
        self.parses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let state: StoreState =
            serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        if state.schema_version != STORE_SCHEMA_VERSION {
            return Err(StoreError::Corrupt {
                path: path.display().to_string(),
                message: format!(
                    "schema_version: expected {STORE_SCHEMA_VERSION}, found {}",
                    state.schema_version
                ),
            });
        }
        let state = Arc::new(state);
        self.cache.put(stamp, file, Arc::clone(&state));
        Ok(state)
    }

    pub(super) fn save(&self, state: &StoreState) -> Result<(), StoreError> {
        let path = self.dir.join(STATE_FILE);
        let bytes = crate::json::to_pretty(state, &path.display().to_string()).map_err(|e| {
            StoreError::Corrupt {
                path: path.display().to_string(),
                message: e.to_string(),
            }
        })?;
        crate::fsx::write_atomic(&path, &bytes).map_err(io_at(&path))
    }

    /// Read-modify-write `store.json` under the exclusive lock. `f`'s error leaves the store as it
    /// was, and so does an `f` that changes nothing (the file is not rewritten).
    pub fn update<T>(
        &self,
        f: impl FnOnce(&mut StoreState) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let _lock = self.lock()?;
        let before = self.load()?;
        let mut state = StoreState::clone(&before);
        let out = f(&mut state)?;
        if state != *before {
            self.save(&state)?;
        }
        Ok(out)
    }
}
