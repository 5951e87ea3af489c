//! The local store's layout (its file and directory names) and its bookkeeping checked against
//! what is on disk before anything is written: a missing `store.json` beside existing artifacts is
//! refused (never a new store over old bytes), counters that were rewound below a recorded id are
//! refused, the next artifact id is derived from the artifacts that exist (no id is handed out
//! twice), and none of the store's own entries may be a symbolic link.

use super::StoreError;
use super::local_lease::LEASES_DIR;
use std::path::Path;

/// Name of the metadata file in the store directory.
pub(crate) const STATE_FILE: &str = "store.json";
/// Name of the lock file every writer holds exclusively.
pub(crate) const LOCK_FILE: &str = "store.lock";
/// Directory of artifact bytes, one `<id>.bin` per artifact.
pub(crate) const ARTIFACTS_DIR: &str = "artifacts";
/// Directory of the vault's objects (`store::local_vault`).
pub(crate) const VAULT_DIR: &str = "vault";
/// Directory of the job locks `tier1-nightly` keeps in the store.
pub(crate) const LOCKS_DIR: &str = "locks";
/// Directory of the work directories `tier1-nightly --keep-work` kept (`run-<id>/`), which stay
/// until the operator removes them.
pub(crate) const KEPT_WORK_DIR: &str = "kept-work";

/// What [`check_counters`] compares: the counters `store.json` hands ids out from, and the
/// highest ids it records.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counters<'a> {
    /// `next_run_id`.
    pub(crate) next_run_id: u64,
    /// `next_artifact_id`.
    pub(crate) next_artifact_id: u64,
    /// The highest recorded run id.
    pub(crate) max_run_id: Option<u64>,
    /// The highest recorded artifact id and its name.
    pub(crate) max_artifact: Option<(u64, &'a str)>,
}

/// The refusal of a store file or directory that is a symbolic link (integrity, exit 4).
pub(crate) fn symlink_refused(p: &Path) -> StoreError {
    StoreError::Corrupt {
        path: p.display().to_string(),
        message: "is a symbolic link: expected the store's own file or directory (a link could make tier1 read or write another file)".into(),
    }
}

/// Refuse a store where any of its own files or directories (`store.json`, `store.lock`,
/// `artifacts/`, `locks/`, `leases/`, `vault/` and every entry directly inside those four) is a
/// symbolic link: tier1 would read or write wherever it points.
pub(crate) fn check_no_symlinks(dir: &Path) -> Result<(), StoreError> {
    let refuse = symlink_refused;
    let io = |p: &Path, source| StoreError::Io {
        path: p.display().to_string(),
        source,
    };
    for name in [
        STATE_FILE,
        LOCK_FILE,
        ARTIFACTS_DIR,
        LOCKS_DIR,
        LEASES_DIR,
        VAULT_DIR,
    ] {
        let p = dir.join(name);
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&p, e)),
        };
        if meta.file_type().is_symlink() {
            return Err(refuse(&p));
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&p).map_err(|e| io(&p, e))? {
                let entry = entry.map_err(|e| io(&p, e))?;
                if entry.file_type().map_err(|e| io(&p, e))?.is_symlink() {
                    return Err(refuse(&entry.path()));
                }
            }
        }
    }
    Ok(())
}

/// The ids of the `<id>.bin` files under `<dir>/artifacts`, ascending.
pub(crate) fn artifact_ids_on_disk(dir: &Path) -> Result<Vec<u64>, StoreError> {
    let art = dir.join(ARTIFACTS_DIR);
    let entries = match std::fs::read_dir(&art) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StoreError::Io {
                path: art.display().to_string(),
                source,
            });
        }
    };
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| StoreError::Io {
            path: art.display().to_string(),
            source,
        })?;
        let name = entry.file_name();
        if let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".bin"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Refuse to start a store in a directory that holds anything but a store's own entries (the
/// operator pointed `--store` at another directory).
pub(crate) fn check_only_store_entries(dir: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: dir.display().to_string(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let name = entry.map_err(io)?.file_name();
        let name = name.to_string_lossy();
        let ours = [
            LOCK_FILE,
            ARTIFACTS_DIR,
            LOCKS_DIR,
            LEASES_DIR,
            KEPT_WORK_DIR,
            VAULT_DIR,
        ]
        .contains(&name.as_ref())
            || name.starts_with(".work-")
            || name.starts_with(".tier1-");
        if !ours {
            return Err(StoreError::Invalid(format!(
                "local store {}: has no {STATE_FILE} and holds {name:?}, which is not a store's: expected an absent or empty directory, or an existing tier1 store",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Refuse to start a new `store.json` in `dir` when artifacts already exist there: the store's
/// record of them was lost, and a fresh one would hand out their ids again.
pub(crate) fn check_no_lost_state(dir: &Path) -> Result<(), StoreError> {
    let ids = artifact_ids_on_disk(dir)?;
    if ids.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = ids
        .iter()
        .take(5)
        .map(|id| format!("{ARTIFACTS_DIR}/{id}.bin"))
        .collect();
    Err(StoreError::Corrupt {
        path: dir.join(STATE_FILE).display().to_string(),
        message: format!(
            "missing, but the store holds {} artifact(s) ({}{}): expected the store.json that records them; refusing to start a new store over them (restore store.json from a backup, or move the store aside)",
            ids.len(),
            shown.join(", "),
            if ids.len() > shown.len() { ", ..." } else { "" }
        ),
    })
}

/// Refuse counters that were rewound: every recorded run and artifact id must be below the next
/// id `store.json` would hand out.
pub(crate) fn check_counters(dir: &Path, c: &Counters<'_>) -> Result<(), StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        path: dir.join(STATE_FILE).display().to_string(),
        message,
    };
    if let Some(id) = c.max_run_id
        && id >= c.next_run_id
    {
        return Err(corrupt(format!(
            "next_run_id: expected more than every recorded run id ({id}), found {}: the counter was rewound; refusing to hand out a run id twice",
            c.next_run_id
        )));
    }
    if let Some((id, name)) = c.max_artifact
        && id >= c.next_artifact_id
    {
        return Err(corrupt(format!(
            "next_artifact_id: expected more than every recorded artifact id ({id}, {name}), found {}: the counter was rewound; refusing to write over existing artifacts",
            c.next_artifact_id
        )));
    }
    Ok(())
}

/// The id of the next artifact: `store.json`'s `next_artifact_id` (`recorded`), or past the
/// highest `<id>.bin` on disk when a crash left bytes whose record was never written.
pub(crate) fn next_artifact_id(dir: &Path, recorded: u64) -> Result<u64, StoreError> {
    let on_disk = artifact_ids_on_disk(dir)?.last().copied();
    match on_disk {
        Some(max) if max >= recorded => {
            tracing::warn!(
                "local store {}: {ARTIFACTS_DIR}/{max}.bin has no record in {STATE_FILE} (left by an interrupted upload); new artifacts are numbered after it",
                dir.display()
            );
            max.checked_add(1).ok_or_else(|| StoreError::Corrupt {
                path: dir.join(ARTIFACTS_DIR).display().to_string(),
                message: format!("artifact id {max} leaves no id to hand out"),
            })
        }
        _ => Ok(recorded),
    }
}
