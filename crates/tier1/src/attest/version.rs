//! The runner version: found by running `Runner.Listener --version` next to the `Runner.Worker`
//! that started this job (walking the process ancestry in `/proc`), or under a given runner root.

use super::RunnerError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The worker executable every job step descends from.
const WORKER: &str = "Runner.Worker";
/// The executable that prints the version.
const LISTENER: &str = "Runner.Listener";
/// Ancestors examined before giving up (a job step is a handful of levels below the worker).
const MAX_DEPTH: usize = 64;

/// Parse a version as printed by the listener (`2.327.1`, possibly with a trailing newline).
pub(crate) fn parse(text: &str) -> Result<semver::Version, RunnerError> {
    let t = text.trim();
    semver::Version::parse(t).map_err(|e| {
        RunnerError::Version(format!(
            "expected a semantic version like 2.327.1, found {t:?} ({e})"
        ))
    })
}

/// The parent pid of `pid`, from `<proc>/<pid>/stat` (the field after the parenthesised name).
fn parent_of(proc_root: &Path, pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The `Runner.Worker` executable of `pid`, from its `exe` link or its first command-line word.
fn worker_path(proc_root: &Path, pid: u32) -> Option<PathBuf> {
    let dir = proc_root.join(pid.to_string());
    let is_worker = |p: &Path| p.file_name().is_some_and(|n| n == WORKER);
    if let Ok(exe) = std::fs::read_link(dir.join("exe"))
        && is_worker(&exe)
    {
        return Some(exe);
    }
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    let argv0 = cmdline.split(|b| *b == 0).next()?;
    let p = PathBuf::from(String::from_utf8_lossy(argv0).into_owned());
    (is_worker(&p) && p.is_absolute()).then_some(p)
}

/// Walk from `pid` up through its ancestors and return the directory holding `Runner.Worker`.
pub(crate) fn find_worker_bin_dir(proc_root: &Path, pid: u32) -> Option<PathBuf> {
    let mut current = pid;
    for _ in 0..MAX_DEPTH {
        if let Some(worker) = worker_path(proc_root, current) {
            return worker.parent().map(Path::to_path_buf);
        }
        match parent_of(proc_root, current) {
            Some(p) if p != 0 && p != current => current = p,
            _ => return None,
        }
    }
    None
}

/// Run `<bin_dir>/Runner.Listener --version` and parse what it prints.
pub(crate) fn from_listener(bin_dir: &Path) -> Result<semver::Version, RunnerError> {
    let listener = bin_dir.join(LISTENER);
    let out = Command::new(&listener)
        .arg("--version")
        .output()
        .map_err(|e| RunnerError::Version(format!("{}: could not run: {e}", listener.display())))?;
    if !out.status.success() {
        return Err(RunnerError::Version(format!(
            "{} --version: expected exit 0, found {}",
            listener.display(),
            out.status
        )));
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// The version of the runner executing this process: `runner_root/bin` when given, else the
/// directory of the `Runner.Worker` found among this process's ancestors.
pub(crate) fn discover(runner_root: Option<&Path>) -> Result<semver::Version, RunnerError> {
    let bin_dir = match runner_root {
        Some(root) => root.join("bin"),
        None => find_worker_bin_dir(Path::new("/proc"), std::process::id()).ok_or_else(|| {
            RunnerError::Version(format!(
                "expected a {WORKER} among this process's ancestors, found none (pass --runner-root or --runner-version)"
            ))
        })?,
    };
    from_listener(&bin_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn proc_entry(root: &Path, pid: u32, ppid: u32, cmd: &str) {
        let d = root.join(pid.to_string());
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("stat"), format!("{pid} (a (b) c) S {ppid} 1 1 0")).unwrap();
        fs::write(d.join("cmdline"), format!("{cmd}\0--arg\0")).unwrap();
    }

    #[test]
    fn walks_ancestry_to_the_worker() {
        let t = tempfile::tempdir().unwrap();
        proc_entry(t.path(), 1, 0, "/sbin/init");
        proc_entry(t.path(), 50, 1, "/opt/runner/bin/Runner.Worker");
        proc_entry(t.path(), 60, 50, "/bin/bash");
        proc_entry(t.path(), 70, 60, "tier1-attest");
        assert_eq!(
            find_worker_bin_dir(t.path(), 70),
            Some(PathBuf::from("/opt/runner/bin"))
        );
        assert_eq!(find_worker_bin_dir(t.path(), 1), None);
        assert_eq!(find_worker_bin_dir(t.path(), 999), None);
    }

    #[test]
    fn a_cycle_ends() {
        let t = tempfile::tempdir().unwrap();
        proc_entry(t.path(), 5, 6, "/bin/sh");
        proc_entry(t.path(), 6, 5, "/bin/sh");
        assert_eq!(find_worker_bin_dir(t.path(), 5), None);
    }

    #[test]
    fn parses_and_refuses_versions() {
        assert_eq!(parse("2.327.1\n").unwrap(), semver::Version::new(2, 327, 1));
        let e = parse("v2.3").unwrap_err().to_string();
        assert!(e.contains("\"v2.3\""), "{e}");
    }
}
