//! What each local main job does first, before its own run is recorded: complete the runs of jobs
//! that were killed (their lease released: `tier1::store::local_lease`) as `failure`, as GitHub
//! completes the run of a runner that vanished, so a night they published is restored like any
//! other; and remove the temporary files and directories those jobs left behind (in the store, its
//! `artifacts/` and `vault/`, the system temporary directory and beside `--history-out`), only those whose
//! making process is gone (`tier1::fsx::stale`).

use super::NightlyError;
use crate::store::local::{ARTIFACTS_DIR, LocalStore, VAULT_DIR};
use std::path::Path;

/// The conclusion recorded for a run whose job was killed.
pub(crate) const ABANDONED_CONCLUSION: &str = "failure";

/// Complete abandoned runs and collect stale temporary files (see the module docs).
pub(crate) fn tidy(store: &LocalStore, history_out: Option<&Path>) -> Result<(), NightlyError> {
    for run in store.complete_abandoned_runs(ABANDONED_CONCLUSION)? {
        tracing::warn!(
            run = run.id,
            "local run {} was left in progress by a job that is gone (killed): completed as {ABANDONED_CONCLUSION}; what it uploaded stays",
            run.id
        );
    }
    let temp = std::env::temp_dir();
    let mut dirs = vec![
        store.dir().to_path_buf(),
        store.dir().join(ARTIFACTS_DIR),
        store.dir().join(VAULT_DIR),
        temp,
    ];
    if let Some(parent) = history_out.and_then(Path::parent) {
        dirs.push(if parent.as_os_str().is_empty() {
            Path::new(".").to_path_buf()
        } else {
            parent.to_path_buf()
        });
    }
    for dir in dirs {
        match crate::fsx::stale::collect(&dir) {
            Ok(removed) => {
                for p in removed {
                    tracing::info!(path = %p.display(), "removed a temporary file left by a killed job");
                }
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "could not collect temporary files");
            }
        }
    }
    Ok(())
}
