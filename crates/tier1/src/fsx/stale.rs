//! Names of the temporary files and directories tier1 creates, and their collection after a crash.
//! Every temporary name carries the id of the process that made it (`.tier1-<kind>-p<pid>-…`,
//! `.work-<run>-p<pid>-…`), so the next run can tell a leftover of a killed process (its pid is
//! gone) from the work of one still running, and removes only the former. Every binary that
//! writes somewhere first collects the leftovers there (`tidy_beside`): beside its output, in
//! its own directories and in the system temporary directory.

use std::io;
use std::path::{Path, PathBuf};

/// The prefix of a temporary name of `kind` (one word: letters only) made by this process:
/// `.tier1-<kind>-p<pid>-`.
pub fn temp_prefix(kind: &str) -> String {
    debug_assert!(kind.bytes().all(|b| b.is_ascii_alphabetic()), "{kind}");
    format!(".tier1-{kind}-p{}-", std::process::id())
}

/// The prefix of `tier1-nightly`'s work directory for local run `run`: `.work-<run>-p<pid>-`.
pub(crate) fn work_prefix(run: u64) -> String {
    format!(".work-{run}-p{}-", std::process::id())
}

/// The process id recorded in a temporary name made by [`temp_prefix`] or [`work_prefix`], or
/// None when `name` is not one of tier1's temporary names.
pub(crate) fn owner_pid(name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix(".tier1-")
        .or_else(|| name.strip_prefix(".work-"))?;
    let pid = rest.split('-').nth(1)?.strip_prefix('p')?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Remove every temporary entry of `dir` (files and trees) whose making process is gone; returns
/// what was removed. Entries of live processes, other names and a missing `dir` are left alone;
/// a symbolic link is removed as a link, never followed.
pub(crate) fn collect(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if pid == me || crate::process::alive(pid) {
            continue;
        }
        let path = entry.path();
        let gone = if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match gone {
            Ok(()) => removed.push(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

/// [`collect`] in each of `dirs`, saying on stderr what was removed; a directory that cannot be
/// read is warned about, never fatal (the leftovers stay for a later run).
pub(crate) fn tidy<I: IntoIterator<Item = PathBuf>>(dirs: I) {
    for dir in dirs {
        match collect(&dir) {
            Ok(removed) => {
                for p in removed {
                    tracing::info!(path = %p.display(), "removed a temporary file left by a killed process");
                }
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "could not collect temporary files");
            }
        }
    }
}

/// The directory an output at `path` is staged in (its parent; `.` for a bare name).
pub(crate) fn beside(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// [`tidy`] beside each of `outputs` and in the system temporary directory: what a binary does
/// before it writes.
pub(crate) fn tidy_beside(outputs: &[&Path]) {
    tidy(
        outputs
            .iter()
            .map(|p| beside(p))
            .chain(std::iter::once(std::env::temp_dir())),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner() {
        let me = std::process::id();
        assert_eq!(
            owner_pid(&format!("{}Xy12", temp_prefix("stage"))),
            Some(me)
        );
        assert_eq!(
            owner_pid(&format!("{}Xy12.tmp", temp_prefix("tmp"))),
            Some(me)
        );
        assert_eq!(owner_pid(&format!("{}abc", work_prefix(17))), Some(me));
        for other in [
            "index.json",
            ".tier1-",
            ".work-3-abc",
            ".tier1-stage-xyz",
            "x-p12-y",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }

    #[test]
    fn only_leftovers_of_gone_processes_are_collected() {
        let t = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let d = t.path();
        std::fs::create_dir_all(d.join(format!(".work-3-p{dead}-abc/history"))).unwrap();
        std::fs::write(d.join(format!(".work-3-p{dead}-abc/history/x")), b"x").unwrap();
        std::fs::write(d.join(format!(".tier1-tmp-p{dead}-q.tmp")), b"x").unwrap();
        let mine = d.join(format!("{}keep", temp_prefix("upload")));
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(d.join("store.json"), b"{}").unwrap();
        std::fs::write(d.join(".work-3-legacy"), b"x").unwrap();
        let removed = collect(d).unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        let mut left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            ".work-3-legacy".to_string(),
            mine.file_name().unwrap().to_string_lossy().into_owned(),
            "store.json".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
        assert!(collect(&d.join("absent")).unwrap().is_empty());
    }
}
