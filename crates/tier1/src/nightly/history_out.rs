//! `--history-out` and `--store`, the local main job's two output roots, checked before anything
//! runs, and the history copy replaced without ever deleting what tier1 did not make.
//!
//! - Neither root may be a symbolic link; `--history-out` may not be, contain or lie inside the
//!   store or the suite file, nor be or contain the checkout (a copy inside the checkout, such as
//!   `.tier1/history`, is fine), nor lie inside its `.git`; the store may not be or contain the
//!   checkout or the suite file. Paths are compared once every existing prefix is resolved.
//! - An existing `--history-out` must be an empty directory or a previous copy of a tier1 history
//!   (an `index.json` with `suite_name` and `runs` at its top, nothing below but directories and
//!   the files restore's policy lets a package hold: `*.json`, `*.md`, `segments/<name>.tar.gz`):
//!   anything else is refused, never deleted.
//! - The new copy is staged beside the old one; only a complete copy replaces it (old renamed
//!   aside, new renamed in, old removed), so a full disk during the copy leaves the old copy whole.

use super::NightlyError;
use crate::fsx::{self, OutputRootError, fault, fault::Point, stale};
use std::path::{Path, PathBuf};

/// Most entries walked when recognising a previous copy.
const MAX_COPY_ENTRIES: usize = 200_000;
/// Largest `index.json` read when recognising a previous copy.
const MAX_INDEX_BYTES: u64 = crate::archive::MAX_EXPANDED_BYTES;

/// The job's output roots and the inputs they must stay clear of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Roots<'a> {
    /// `--store`.
    pub(crate) store: &'a Path,
    /// `--history-out`, when given.
    pub(crate) history_out: Option<&'a Path>,
    /// `--repo-root`, the checkout.
    pub(crate) checkout: &'a Path,
    /// `--suite-config`, when given.
    pub(crate) suite: Option<&'a Path>,
}

fn named(flag: &str, e: OutputRootError) -> NightlyError {
    NightlyError::Output(format!("{flag}: {e}"), crate::exit::Classify::exit(&e))
}

fn refuse_symlink(flag: &str, p: &Path) -> Result<(), NightlyError> {
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(named(
            flag,
            OutputRootError::Symlink {
                path: p.display().to_string(),
            },
        ));
    }
    Ok(())
}

/// Check both output roots before anything is created (see the module docs).
pub(crate) fn check(roots: &Roots<'_>) -> Result<(), NightlyError> {
    refuse_symlink("--store", roots.store)?;
    let mut store_inputs = vec![("checkout", roots.checkout)];
    if let Some(suite) = roots.suite {
        store_inputs.push(("suite file", suite));
    }
    // The store may lie inside the checkout (the default `.tier1/store`), never be or hold it.
    match fsx::check_disjoint(roots.store, &store_inputs) {
        Err(OutputRootError::InsideInput { input, .. })
            if input == "checkout" && !same_place(roots.store, roots.checkout) => {}
        Err(e) => return Err(named("--store", e)),
        Ok(()) => {}
    }
    let Some(out) = roots.history_out else {
        return Ok(());
    };
    refuse_symlink("--history-out", out)?;
    let mut inputs = vec![("local store", roots.store)];
    if let Some(suite) = roots.suite {
        inputs.push(("suite file", suite));
    }
    fsx::check_disjoint(out, &inputs).map_err(|e| named("--history-out", e))?;
    // A copy may lie inside the checkout (`.tier1/history`), never be or hold it, nor lie in `.git`.
    match fsx::check_disjoint(out, &[("checkout", roots.checkout)]) {
        Err(OutputRootError::InsideInput { .. }) if !same_place(out, roots.checkout) => {
            let git = roots.checkout.join(".git");
            fsx::check_disjoint(out, &[("checkout's git directory", git.as_path())])
                .map_err(|e| named("--history-out", e))?;
        }
        Err(e) => return Err(named("--history-out", e)),
        Ok(()) => {}
    }
    check_replaceable(out)
}

/// True when `a` and `b` resolve to the same place (an unresolvable path is never the same).
fn same_place(a: &Path, b: &Path) -> bool {
    matches!((fsx::resolve_path(a), fsx::resolve_path(b)), (Ok(x), Ok(y)) if x == y)
}

/// An existing `--history-out` must be a directory that is empty or a previous history copy.
fn check_replaceable(out: &Path) -> Result<(), NightlyError> {
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(named(
                "--history-out",
                OutputRootError::Io {
                    path: out.display().to_string(),
                    source,
                },
            ));
        }
    };
    if meta.file_type().is_symlink() {
        return refuse_symlink("--history-out", out);
    }
    if !meta.is_dir() {
        return Err(named(
            "--history-out",
            OutputRootError::NotDirectory {
                path: out.display().to_string(),
                found: if meta.is_file() {
                    "file"
                } else {
                    "special file"
                },
            },
        ));
    }
    let io = |source| {
        named(
            "--history-out",
            OutputRootError::Io {
                path: out.display().to_string(),
                source,
            },
        )
    };
    if fsx::is_absent_or_empty(out).map_err(io)? {
        return Ok(());
    }
    match history_copy(out).map_err(io)? {
        None => Ok(()),
        Some(why) => Err(NightlyError::Output(
            format!(
                "--history-out {}: exists and is not a previous copy of a tier1 history ({why}): refusing to replace it; expected an absent or empty directory, or a directory an earlier --history-out wrote",
                out.display()
            ),
            crate::exit::Exit::Conflict,
        )),
    }
}

/// None when `dir` is recognisably a copy of a tier1 history, else why not.
fn history_copy(dir: &Path) -> std::io::Result<Option<String>> {
    let index = dir.join(crate::history::model::INDEX_FILE);
    match std::fs::symlink_metadata(&index) {
        Ok(m) if m.is_file() && m.len() <= MAX_INDEX_BYTES => {}
        Ok(m) if m.is_file() => return Ok(Some("its index.json is too large".into())),
        Ok(_) => return Ok(Some("its index.json is not a regular file".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Some("it has no index.json".into()));
        }
        Err(e) => return Err(e),
    }
    let parsed: Option<serde_json::Value> =
        serde_json::from_slice(&fsx::read_no_follow(&index)?).ok();
    let is_index = parsed.as_ref().is_some_and(|v| {
        v.get("suite_name").is_some_and(|n| n.is_string())
            && v.get("runs").is_some_and(|r| r.is_array())
    });
    if !is_index {
        return Ok(Some(
            "its index.json is not a history index with suite_name and runs".into(),
        ));
    }
    let policy = crate::archive::ExtractPolicy::history();
    let mut seen = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            seen += 1;
            if seen > MAX_COPY_ENTRIES {
                return Ok(Some(format!(
                    "it holds more than {MAX_COPY_ENTRIES} entries"
                )));
            }
            let ty = entry.file_type()?;
            if ty.is_dir() {
                stack.push(entry.path());
                continue;
            }
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy();
            // What a package may hold is restore's one rule (segments included), not a second list.
            if !(ty.is_file() && policy.allows(&rel)) {
                return Ok(Some(format!(
                    "it holds {rel}, which is not a directory or a file a history package holds (*.json, *.md, segments/<name>.tar.gz)"
                )));
            }
        }
    }
    Ok(None)
}

/// Replace `dest` with a copy of `src`: checked again, staged beside it, then swapped in. On any
/// failure `dest` is as it was (the old copy, or nothing) and the staged copy is removed.
pub(crate) fn replace(src: &Path, dest: &Path) -> Result<PathBuf, std::io::Error> {
    check_replaceable(dest)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::AlreadyExists, e.to_string()))?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)?;
    let stage = tempfile::Builder::new()
        .prefix(&stale::temp_prefix("historyout"))
        .tempdir_in(&parent)?;
    let copy = stage.path().join("copy");
    fsx::copy_tree(src, &copy)?;
    let old = match std::fs::symlink_metadata(dest) {
        Ok(_) => {
            let aside = stage.path().join("replaced");
            fault::hit(Point::Rename, dest)?;
            std::fs::rename(dest, &aside)?;
            Some(aside)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let swapped = fault::hit(Point::Rename, dest).and_then(|()| std::fs::rename(&copy, dest));
    if let Err(e) = swapped {
        if let Some(old) = &old {
            let _ = std::fs::rename(old, dest);
        }
        return Err(e);
    }
    // The stage (and the old copy moved into it) goes when `stage` is dropped.
    Ok(dest.to_path_buf())
}
