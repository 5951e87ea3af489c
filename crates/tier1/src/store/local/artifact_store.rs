//! The [`ArtifactStore`] of a local store: listing its runs and artifacts, reading an
//! artifact's bytes back (checked against the recorded size) and its vault.

use super::files::io_at;
use super::{LocalStore, StoreState, StoredArtifact};
use crate::digest;
use crate::fsx;
use crate::store::local_check::{ARTIFACTS_DIR, LOCK_FILE, STATE_FILE, VAULT_DIR, symlink_refused};
use crate::store::local_lease;
use crate::store::{
    ArtifactMeta, ArtifactRule, ArtifactStore, Downloaded, Listing, StoreError, VaultObject,
    WorkflowRun,
};
use chrono::{DateTime, Utc};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

impl LocalStore {
    pub(super) fn meta(&self, a: &StoredArtifact, run: Option<&WorkflowRun>) -> ArtifactMeta {
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

    pub(super) fn metas<'a>(
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
            .iter()
            .filter(|r| strip_ref(&r.path) == want && r.head_branch == branch && keep(r))
            .cloned()
            .collect();
        Ok(Listing::newest_runs(runs, cap, false))
    }

    fn get_run(&self, run_id: u64) -> Result<WorkflowRun, StoreError> {
        self.load()?
            .runs
            .iter()
            .find(|r| r.id == run_id)
            .cloned()
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
