//! The local artifact store: a directory that models GitHub Actions runs and artifacts
//! (`store.json` + `artifacts/<id>.bin`), with a settable clock, derived expiry, and atomic writes
//! serialized by an exclusive lock on `store.lock`. No file of the store is opened through a
//! symbolic link; the bookkeeping is checked against the disk before ids are handed out
//! (`local_check`), and runs may hold a lease that tells an abandoned run from a live one
//! (`local_lease`). The vault of sealed history segments is `local_vault`. Layout documented in
//! docs/local-store.md.

pub(crate) use super::local_check::{
    ARTIFACTS_DIR, KEPT_WORK_DIR, LOCK_FILE, STATE_FILE, VAULT_DIR,
};
use super::local_check::{
    Counters, check_counters, check_no_lost_state, check_no_symlinks, check_only_store_entries,
    next_artifact_id, symlink_refused,
};
use super::local_lease::{self, RunLease};
use super::{
    ArtifactMeta, ArtifactRule, ArtifactStore, Downloaded, Listing, StoreError, VaultObject,
    WorkflowRun,
};
use crate::digest::{self, Digest};
use crate::fsx::{self, fault, fault::Point};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Version of the `store.json` layout.
pub(crate) const STORE_SCHEMA_VERSION: u32 = 1;
/// Longest retention GitHub allows (private repositories), in days.
pub(crate) const MAX_RETENTION_DAYS: u32 = 400;

/// One stored artifact as `store.json` records it. `expired` is a forced flag (deleted); the
/// effective state also expires when the clock reaches `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredArtifact {
    /// Artifact id (> 0); its bytes live in `artifacts/<id>.bin`.
    pub id: u64,
    /// Artifact name, unique within its run.
    pub name: String,
    /// The run that uploaded it.
    pub workflow_run_id: u64,
    /// Size of the stored bytes.
    pub size_in_bytes: u64,
    /// `sha256:<hex>` of the stored bytes as recorded at upload (tests may tamper with it).
    pub digest: Option<String>,
    /// Upload time.
    pub created_at: DateTime<Utc>,
    /// Expiry time (`created_at` + retention days).
    pub expires_at: DateTime<Utc>,
    /// Forced expiry (as if deleted); expiry by clock is derived, not stored.
    #[serde(default)]
    pub expired: bool,
}

/// The whole of `store.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreState {
    /// [`STORE_SCHEMA_VERSION`].
    pub(crate) schema_version: u32,
    /// `owner/name` this store models; the default repository of new runs.
    pub repository: String,
    /// Next run id to hand out.
    pub(crate) next_run_id: u64,
    /// Next artifact id to hand out.
    pub(crate) next_artifact_id: u64,
    /// Every run, in creation order.
    pub runs: Vec<WorkflowRun>,
    /// Every artifact, in upload order.
    pub artifacts: Vec<StoredArtifact>,
}

impl StoreState {
    /// The counters and the highest recorded ids ([`local_check`](super::local_check) compares
    /// them).
    fn counters(&self) -> Counters<'_> {
        Counters {
            next_run_id: self.next_run_id,
            next_artifact_id: self.next_artifact_id,
            max_run_id: self.runs.iter().map(|r| r.id).max(),
            max_artifact: self
                .artifacts
                .iter()
                .max_by_key(|a| a.id)
                .map(|a| (a.id, a.name.as_str())),
        }
    }

    fn empty(repository: &str) -> Self {
        StoreState {
            schema_version: STORE_SCHEMA_VERSION,
            repository: repository.to_string(),
            next_run_id: 1,
            next_artifact_id: 1,
            runs: Vec::new(),
            artifacts: Vec::new(),
        }
    }
}

/// What `create_run` needs; the store assigns the id, status and creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// Workflow file path, e.g. `.github/workflows/tier1-nightly.yml`.
    pub workflow_path: String,
    /// Branch.
    pub(crate) head_branch: String,
    /// 40-hex commit.
    pub(crate) head_sha: String,
    /// Triggering event (`schedule`, `workflow_dispatch`, ...).
    pub event: String,
    /// Base repository; None: the store's repository.
    pub(crate) repository: Option<String>,
    /// Head repository; None: the base repository.
    pub head_repository: Option<String>,
    /// Attempt number (1-based).
    pub(crate) run_attempt: u32,
}

impl NewRun {
    /// A first attempt of `.github/workflows/<workflow>` on `branch` at `sha` (event `schedule`).
    pub fn new(workflow: &str, branch: &str, sha: &str) -> Self {
        NewRun {
            workflow_path: format!(".github/workflows/{workflow}"),
            head_branch: branch.to_string(),
            head_sha: sha.to_string(),
            event: "schedule".to_string(),
            repository: None,
            head_repository: None,
            run_attempt: 1,
        }
    }
}

/// A local store rooted at a directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    dir: PathBuf,
    repository: String,
    now: Option<DateTime<Utc>>,
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// True when an artifact name is acceptable to `actions/upload-artifact`.
pub(crate) fn is_valid_artifact_name(name: &str) -> bool {
    !name.is_empty()
        && !name.chars().any(|c| {
            matches!(
                c,
                '"' | ':' | '<' | '>' | '|' | '*' | '?' | '\r' | '\n' | '\\' | '/'
            )
        })
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
        };
        check_no_symlinks(dir)?;
        if fs::symlink_metadata(dir.join(STATE_FILE)).is_err() {
            check_no_lost_state(dir)?;
            return Err(StoreError::NotFound {
                what: format!("local store {} ({STATE_FILE})", dir.display()),
            });
        }
        store.repository = store.load()?.repository;
        Ok(store)
    }

    /// Fix the clock (tests, `--now`): creation times, ages and expiry use it.
    pub fn with_now(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
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
    fn lock(&self) -> Result<fs::File, StoreError> {
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

    /// Read `store.json` (never through a symbolic link).
    pub fn load(&self) -> Result<StoreState, StoreError> {
        let path = self.dir.join(STATE_FILE);
        let bytes = fsx::read_no_follow(&path).map_err(io_at(&path))?;
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
        Ok(state)
    }

    fn save(&self, state: &StoreState) -> Result<(), StoreError> {
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
        let mut state = self.load()?;
        let before = state.clone();
        let out = f(&mut state)?;
        if state != before {
            self.save(&state)?;
        }
        Ok(out)
    }

    /// Start a run (status `in_progress`, created now).
    pub fn create_run(&self, new: &NewRun) -> Result<WorkflowRun, StoreError> {
        self.new_run(new, false).map(|(run, _)| run)
    }

    /// Start a run owned by this process: its lease (`leases/<id>.lock`) is taken before the run
    /// is recorded and held until the returned [`RunLease`] is dropped or the process ends, so
    /// [`LocalStore::complete_abandoned_runs`] can complete it if the process dies first.
    pub(crate) fn create_run_leased(
        &self,
        new: &NewRun,
    ) -> Result<(WorkflowRun, RunLease), StoreError> {
        let (run, lease) = self.new_run(new, true)?;
        let lease = lease.ok_or_else(|| StoreError::NotFound {
            what: format!("the lease of run {}", run.id),
        })?;
        Ok((run, lease))
    }

    fn new_run(
        &self,
        new: &NewRun,
        leased: bool,
    ) -> Result<(WorkflowRun, Option<RunLease>), StoreError> {
        let now = self.now();
        let dir = self.dir.clone();
        self.update(|state| {
            check_counters(&dir, &state.counters())?;
            let repository = new
                .repository
                .clone()
                .unwrap_or_else(|| state.repository.clone());
            let run = WorkflowRun {
                id: state.next_run_id,
                workflow_id: None,
                path: new.workflow_path.clone(),
                head_branch: new.head_branch.clone(),
                head_sha: new.head_sha.clone(),
                event: new.event.clone(),
                status: "in_progress".into(),
                conclusion: None,
                head_repository: new
                    .head_repository
                    .clone()
                    .unwrap_or_else(|| repository.clone()),
                repository,
                run_attempt: new.run_attempt.max(1),
                created_at: now,
                provenance: None,
            };
            let lease = if leased {
                Some(local_lease::take(&dir, run.id)?)
            } else {
                None
            };
            state.next_run_id += 1;
            state.runs.push(run.clone());
            Ok((run, lease))
        })
    }

    /// Complete every `in_progress` run whose lease no process holds any more (its process was
    /// killed) with `conclusion`, as GitHub completes the run of a runner that vanished: what it
    /// uploaded stays, and restore sees it like any completed run's artifacts. Returns them.
    pub(crate) fn complete_abandoned_runs(
        &self,
        conclusion: &str,
    ) -> Result<Vec<WorkflowRun>, StoreError> {
        let dir = self.dir.clone();
        self.update(|state| {
            let mut done = Vec::new();
            for run in state.runs.iter_mut().filter(|r| r.status == "in_progress") {
                if local_lease::is_abandoned(&dir, run.id)? {
                    run.status = "completed".into();
                    run.conclusion = Some(conclusion.to_string());
                    done.push(run.clone());
                }
            }
            Ok(done)
        })
        .inspect(|done| {
            for run in done {
                let _ = local_lease::remove(&self.dir, run.id);
            }
        })
    }

    /// Finish a run with a conclusion (`success`, `failure`, ...).
    pub fn complete_run(&self, run_id: u64, conclusion: &str) -> Result<WorkflowRun, StoreError> {
        self.update(|state| {
            let run = state
                .runs
                .iter_mut()
                .find(|r| r.id == run_id)
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("run {run_id}"),
                })?;
            run.status = "completed".into();
            run.conclusion = Some(conclusion.to_string());
            Ok(run.clone())
        })
        .inspect(|_| {
            let _ = local_lease::remove(&self.dir, run_id);
        })
    }

    /// Upload one file's bytes as given (like `upload-artifact` with `archive: false`).
    pub fn upload_file(
        &self,
        run_id: u64,
        name: &str,
        path: &Path,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        let mut src = fs::File::open(path).map_err(io_at(path))?;
        self.upload_reader(run_id, name, &mut src, retention_days)
    }

    /// Zip a directory deterministically (see `archive::write_deterministic_zip`) and upload the zip
    /// (like the default `upload-artifact`, which leaves hidden files out).
    pub fn upload_dir_zipped(
        &self,
        run_id: u64,
        name: &str,
        dir: &Path,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        let tmp = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("upload"))
            .tempdir_in(&self.dir)
            .map_err(io_at(&self.dir))?;
        let visible = tmp.path().join("visible");
        copy_visible_files(dir, &visible).map_err(|e| match e {
            StoreError::Invalid(m) => StoreError::Invalid(format!("artifact {name}: {m}")),
            other => other,
        })?;
        let dir = visible.as_path();
        let zip = tmp.path().join("artifact.zip");
        crate::archive::write_deterministic_zip(dir, &zip).map_err(|e| match e {
            // Writing the zip failed (a full disk): the destination's failure, never the input's.
            crate::archive::ArchiveError::Io { path, source } => StoreError::Io { path, source },
            other => StoreError::Invalid(format!(
                "artifact {name}: cannot zip {}: {other}",
                dir.display()
            )),
        })?;
        self.upload_file(run_id, name, &zip, retention_days)
    }

    fn upload_reader(
        &self,
        run_id: u64,
        name: &str,
        src: &mut dyn io::Read,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        if !is_valid_artifact_name(name) {
            return Err(StoreError::Invalid(format!(
                "artifact name {name:?} is empty or contains one of \" : < > | * ? \\r \\n \\ /"
            )));
        }
        if retention_days == 0 || retention_days > MAX_RETENTION_DAYS {
            return Err(StoreError::Invalid(format!(
                "artifact {name}: retention days must be 1..={MAX_RETENTION_DAYS}, found {retention_days}"
            )));
        }
        let now = self.now();
        let art_dir = self.dir.join(ARTIFACTS_DIR);
        fsx::real_dir(&art_dir).map_err(io_at(&art_dir))?;
        let dir = self.dir.clone();
        fault::hit(Point::Upload, &art_dir).map_err(io_at(&art_dir))?;
        fault::hit(Point::Write, &art_dir).map_err(io_at(&art_dir))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("tmp"))
            .suffix(".tmp")
            .tempfile_in(&art_dir)
            .map_err(io_at(&art_dir))?;
        let (digest, size) = copy_into(src, &mut tmp, &art_dir)?;
        let stored =
            self.update(|state| {
                check_counters(&dir, &state.counters())?;
                let run = state.runs.iter().find(|r| r.id == run_id).ok_or_else(|| {
                    StoreError::NotFound {
                        what: format!("run {run_id}"),
                    }
                })?;
                if state
                    .artifacts
                    .iter()
                    .any(|a| a.workflow_run_id == run.id && a.name == name)
                {
                    return Err(StoreError::Invalid(format!(
                        "run {run_id} already has an artifact named {name}"
                    )));
                }
                let id = next_artifact_id(&dir, state.next_artifact_id)?;
                let a = StoredArtifact {
                    id,
                    name: name.to_string(),
                    workflow_run_id: run_id,
                    size_in_bytes: size,
                    digest: Some(digest.to_string()),
                    created_at: now,
                    expires_at: now + Duration::days(i64::from(retention_days)),
                    expired: false,
                };
                // Bytes first, then the record that points at them (both inside the lock); the
                // bytes never replace a file that is already there.
                let dest = self.artifact_path(a.id);
                fault::hit(Point::Rename, &dest).map_err(io_at(&dest))?;
                tmp.persist_noclobber(&dest).map_err(|e| StoreError::Io {
                    path: dest.display().to_string(),
                    source: e.error,
                })?;
                fault::hit(Point::Upload, &dest).map_err(io_at(&dest))?;
                state.next_artifact_id = id + 1;
                state.artifacts.push(a.clone());
                Ok((a, run.clone()))
            })?;
        Ok(self.meta(&stored.0, Some(&stored.1)))
    }

    fn meta(&self, a: &StoredArtifact, run: Option<&WorkflowRun>) -> ArtifactMeta {
        ArtifactMeta {
            id: a.id,
            name: a.name.clone(),
            size_in_bytes: a.size_in_bytes,
            digest: a.digest.clone(),
            expired: a.expired || self.now() >= a.expires_at,
            created_at: a.created_at,
            expires_at: Some(a.expires_at),
            workflow_run_id: a.workflow_run_id,
            workflow_run_head_branch: run.map(|r| r.head_branch.clone()),
            workflow_run_head_sha: run.map(|r| r.head_sha.clone()),
        }
    }

    fn metas<'a>(
        &self,
        state: &StoreState,
        arts: impl Iterator<Item = &'a StoredArtifact>,
    ) -> Vec<ArtifactMeta> {
        arts.map(|a| {
            let run = state.runs.iter().find(|r| r.id == a.workflow_run_id);
            self.meta(a, run)
        })
        .collect()
    }
}

/// `path` without an `@ref` suffix.
pub fn strip_ref(path: &str) -> &str {
    path.split_once('@').map_or(path, |(p, _)| p)
}

impl ArtifactStore for LocalStore {
    fn repository(&self) -> &str {
        &self.repository
    }

    fn bootstrap_hint(&self) -> String {
        let dir = self.dir.display();
        format!(
            "The local store {dir} has no published history yet: `tier1-nightly --store {dir}` establishes the first anchor automatically while none is published, or run `tier1-nightly --store {dir} --bootstrap --accept --note \"<why>\"`."
        )
    }

    fn now(&self) -> DateTime<Utc> {
        self.now.unwrap_or_else(Utc::now)
    }

    fn own_paths(&self) -> Vec<PathBuf> {
        // Work directories inside the store (tier1-nightly's) are not the store's own.
        [
            STATE_FILE,
            LOCK_FILE,
            ARTIFACTS_DIR,
            "locks",
            local_lease::LEASES_DIR,
            VAULT_DIR,
        ]
        .iter()
        .map(|n| self.dir.join(n))
        .collect()
    }

    fn list_runs_where(
        &self,
        workflow: &str,
        branch: &str,
        cap: usize,
        keep: &dyn Fn(&WorkflowRun) -> bool,
    ) -> Result<Listing<WorkflowRun>, StoreError> {
        let state = self.load()?;
        let want = format!(".github/workflows/{workflow}");
        let runs: Vec<WorkflowRun> = state
            .runs
            .into_iter()
            .filter(|r| strip_ref(&r.path) == want && r.head_branch == branch && keep(r))
            .collect();
        Ok(Listing::newest_runs(runs, cap, false))
    }

    fn get_run(&self, run_id: u64) -> Result<WorkflowRun, StoreError> {
        self.load()?
            .runs
            .into_iter()
            .find(|r| r.id == run_id)
            .ok_or_else(|| StoreError::NotFound {
                what: format!("run {run_id}"),
            })
    }

    /// The local store's records report no provenance (it models the operator's own runs):
    /// `_reject` has nothing to judge.
    fn list_run_artifacts(
        &self,
        run_id: u64,
        _reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError> {
        let state = self.load()?;
        let items = self.metas(
            &state,
            state
                .artifacts
                .iter()
                .filter(|a| a.workflow_run_id == run_id),
        );
        Ok(Listing::of(items, false))
    }

    /// As [`list_run_artifacts`](ArtifactStore::list_run_artifacts): nothing for `_reject` to judge.
    fn find_artifacts_by_name(
        &self,
        name: &str,
        _reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError> {
        let state = self.load()?;
        let mut items = self.metas(&state, state.artifacts.iter().filter(|a| a.name == name));
        items.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(Listing::of(items, false))
    }

    fn vault_find(
        &self,
        names: &[String],
    ) -> Result<std::collections::BTreeMap<String, VaultObject>, StoreError> {
        self.local_vault_find(names)
    }

    fn vault_put(
        &self,
        name: &str,
        file_name: &str,
        path: &Path,
    ) -> Result<VaultObject, StoreError> {
        self.local_vault_put(name, file_name, path)
    }

    fn vault_download(
        &self,
        object: &VaultObject,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        self.local_vault_download(object, sink, cap)
    }

    fn download(
        &self,
        artifact: &ArtifactMeta,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        let state = self.load()?;
        let a = state
            .artifacts
            .iter()
            .find(|a| a.id == artifact.id)
            .ok_or_else(|| StoreError::NotFound {
                what: format!("artifact {} (id {})", artifact.name, artifact.id),
            })?;
        if a.expired || self.now() >= a.expires_at {
            return Err(StoreError::Expired {
                id: a.id,
                name: a.name.clone(),
            });
        }
        let path = self.artifact_path(a.id);
        let mut f = fsx::open_no_follow(&path, fs::OpenOptions::new().read(true)).map_err(|e| {
            match fs::symlink_metadata(&path) {
                // A link in place of the bytes: the store's own file was replaced (exit 4).
                Ok(m) if m.file_type().is_symlink() => symlink_refused(&path),
                _ => io_at(&path)(e),
            }
        })?;
        let mut sink = digest::Watched::new(sink);
        let copied = digest::copy_hashed(&mut f, &mut sink, cap);
        match copied {
            Ok((digest, bytes)) => {
                check_size(a, bytes)?;
                Ok(Downloaded { digest, bytes })
            }
            Err(source) if sink.failed() => Err(StoreError::Sink {
                id: a.id,
                name: a.name.clone(),
                source,
            }),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Err(StoreError::Integrity {
                id: a.id,
                name: a.name.clone(),
                message: format!("download exceeds the cap of {cap} bytes"),
            }),
            Err(e) => Err(StoreError::Io {
                path: path.display().to_string(),
                source: e,
            }),
        }
    }
}

/// Refuse bytes whose length is not the recorded `size_in_bytes`, as GitHub's store does.
fn check_size(a: &StoredArtifact, bytes: u64) -> Result<(), StoreError> {
    if bytes == a.size_in_bytes {
        return Ok(());
    }
    Err(StoreError::Integrity {
        id: a.id,
        name: a.name.clone(),
        message: format!(
            "size_in_bytes: expected {}, found {bytes} bytes stored",
            a.size_in_bytes
        ),
    })
}

/// Copy the files of `src` into `dst` (created) except hidden ones (a path component starting with
/// `.`), as `actions/upload-artifact` leaves them out (v4.4+, `include-hidden-files: false`).
/// Anything that is not a regular file is recreated as it is (a symbolic link stays one), so the
/// zip writer judges it as before. Refuses a directory with nothing visible to upload.
fn copy_visible_files(src: &Path, dst: &Path) -> Result<(), StoreError> {
    let files = crate::fsx::list_files(src).map_err(io_at(src))?;
    let visible: Vec<&String> = files
        .iter()
        .filter(|rel| !rel.split('/').any(|part| part.starts_with('.')))
        .collect();
    if visible.is_empty() {
        return Err(StoreError::Invalid(format!(
            "{}: no files to upload (hidden files are not uploaded)",
            src.display()
        )));
    }
    for rel in visible {
        let (from, to) = (src.join(rel), dst.join(rel));
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        let meta = fs::symlink_metadata(&from).map_err(io_at(&from))?;
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&from).map_err(io_at(&from))?;
            std::os::unix::fs::symlink(target, &to).map_err(io_at(&to))?;
        } else {
            fs::copy(&from, &to).map_err(io_at(&from))?;
        }
    }
    Ok(())
}

/// Copy an upload's bytes into its temporary file, hashing them, and flush them to disk. A failure
/// to write names the artifacts directory (the destination), never the source.
fn copy_into(
    src: &mut dyn io::Read,
    tmp: &mut tempfile::NamedTempFile,
    art_dir: &Path,
) -> Result<(Digest, u64), StoreError> {
    let file = tmp.as_file_mut();
    let mut sink = digest::Watched::new(file);
    let copied = digest::copy_hashed(src, &mut sink, u64::MAX);
    let failed = sink.failed();
    let (digest, size) = copied.map_err(|source| StoreError::Io {
        path: if failed {
            art_dir.display().to_string()
        } else {
            "the upload's source".into()
        },
        source,
    })?;
    file.flush().map_err(io_at(art_dir))?;
    file.sync_all().map_err(io_at(art_dir))?;
    Ok((digest, size))
}

#[cfg(test)]
mod tests;
