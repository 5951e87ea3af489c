//! What each local main job does first, before its own run is recorded: complete the runs of jobs
//! that were killed (their lease released: `tier1::store::local_lease`) as `failure`, as GitHub
//! completes the run of a runner that vanished, so a night they published is restored like any
//! other; and remove the temporary files and directories those jobs left behind (in the store, its
//! `artifacts/` and `vault/`, the system temporary directory and beside `--history-out`), only
//! those whose making process is gone (`tier1::fsx::stale`). A work directory kept with
//! `--keep-work` leaves its temporary name for `<store>/kept-work/run-<id>/` ([`keep_work`]),
//! which nothing collects.

use super::NightlyError;
use crate::store::local::{ARTIFACTS_DIR, KEPT_WORK_DIR, LocalStore, VAULT_DIR};
use std::path::{Path, PathBuf};

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
    let mut dirs = vec![
        store.dir().to_path_buf(),
        store.dir().join(ARTIFACTS_DIR),
        store.dir().join(VAULT_DIR),
        std::env::temp_dir(),
    ];
    dirs.extend(history_out.map(crate::fsx::stale::beside));
    crate::fsx::stale::tidy(dirs);
    Ok(())
}

/// Keep the work directory `work` of local run `run` for good: move it out of its temporary name
/// (which the next job would collect once this process is gone) to `<store>/kept-work/run-<run>/`
/// and return where it is. When the move fails the directory stays where it is, said out loud
/// (a later job collects it), and that path is returned.
pub(crate) fn keep_work(store_dir: &Path, run: u64, work: PathBuf) -> PathBuf {
    let kept_dir = store_dir.join(KEPT_WORK_DIR);
    let target = kept_dir.join(format!("run-{run}"));
    let moved = std::fs::create_dir_all(&kept_dir).and_then(|()| {
        match std::fs::symlink_metadata(&target) {
            Ok(_) => Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already exists", target.display()),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::rename(&work, &target),
            Err(e) => Err(e),
        }
    });
    match moved {
        Ok(()) => {
            tracing::info!(
                dir = %target.display(),
                "work directory kept until you remove it (rm -rf {}): later runs never collect it",
                target.display()
            );
            target
        }
        Err(e) => {
            tracing::warn!(
                dir = %work.display(),
                error = %e,
                "the work directory could not be moved to {}: it stays at {} only until a later run collects it",
                target.display(),
                work.display()
            );
            work
        }
    }
}
