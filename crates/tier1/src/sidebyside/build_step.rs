//! What builds a commit for a target ([`BuildStep`]: nothing, the suite's `build`, or `tier1-run`
//! with the worktree's pinned toolchain) and how a step runs: in the worktree, its output in a
//! log, its process group killed past the timeout or on cancellation.

use crate::digest::Digest;
use crate::suite::{Suite, Target, TargetKind};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How many lines of a failed build's log a reason quotes.
const LOG_TAIL_LINES: usize = 20;
/// Most bytes of a log's end read for its last lines.
const LOG_TAIL_BYTES: u64 = 64 << 10;

/// What builds a commit for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BuildStep {
    /// Nothing to build (a command target of a suite without `build`).
    Nothing,
    /// The suite's `build` argv, run in the worktree.
    Argv(Vec<String>),
    /// `cargo build --release --locked --bin tier1-run` with the worktree's pinned toolchain
    /// (built-in targets; the target directory inside the cache entry).
    Tier1Run,
}

impl BuildStep {
    /// The step a target needs: `tier1-run` for a built-in target, the suite's `build` for a
    /// command target.
    pub(crate) fn for_target(suite: &Suite, target: &Target) -> BuildStep {
        match target.kind {
            TargetKind::Builtin => BuildStep::Tier1Run,
            TargetKind::Command if suite.build.is_empty() => BuildStep::Nothing,
            TargetKind::Command => BuildStep::Argv(suite.build.clone()),
        }
    }

    /// The argv as recorded (`[]` for nothing).
    pub(crate) fn argv(&self) -> Vec<String> {
        match self {
            BuildStep::Nothing => Vec::new(),
            BuildStep::Argv(a) => a.clone(),
            BuildStep::Tier1Run => [
                "cargo",
                "build",
                "--release",
                "--locked",
                "--bin",
                "tier1-run",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    /// The name of the step's files in an entry: `none`, `tier1-run`, or `cmd-<digest prefix>`.
    pub(crate) fn id(&self) -> String {
        match self {
            BuildStep::Nothing => "none".into(),
            BuildStep::Tier1Run => "tier1-run".into(),
            BuildStep::Argv(a) => {
                let d = Digest::of_bytes(a.join("\0").as_bytes());
                format!("cmd-{}", &d.hex()[..16])
            }
        }
    }
}

impl BuildStep {
    /// The environment of the step run in `src` and the toolchain it builds with: for
    /// `tier1-run`, cargo's target directory `target` and `RUSTUP_TOOLCHAIN` when the worktree
    /// pins a `rust-version` without a `rust-toolchain` file.
    pub(crate) fn environment(
        &self,
        src: &Path,
        target: &Path,
    ) -> (Vec<(String, String)>, Option<String>) {
        if *self != BuildStep::Tier1Run {
            return (Vec::new(), None);
        }
        let mut env = vec![("CARGO_TARGET_DIR".to_string(), target.display().to_string())];
        if let Some(v) = pinned_rust_version(src) {
            env.push((
                "RUSTUP_TOOLCHAIN".into(),
                installed_toolchain(&v, &installed_toolchains()),
            ));
        }
        let toolchain = rustc_version(src, &env);
        (env, toolchain)
    }
}

/// The toolchain a worktree pins for rustup: none when it has a `rust-toolchain(.toml)` file
/// (rustup reads it itself), else the `rust-version` of its `Cargo.toml`.
pub(crate) fn pinned_rust_version(src: &Path) -> Option<String> {
    if src.join("rust-toolchain.toml").exists() || src.join("rust-toolchain").exists() {
        return None;
    }
    // The commit's own file: read without following a link and only up to a manifest's size.
    let bytes = crate::fsx::read_no_follow_at_most(&src.join("Cargo.toml"), 1 << 20).ok()?;
    let manifest = String::from_utf8(bytes).ok()?;
    manifest
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "rust-version").then(|| v.trim().trim_matches('"').to_string())
        })
        .filter(|v| {
            !v.is_empty()
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        })
}

/// The toolchains rustup has installed (`rustup toolchain list`), empty without rustup.
fn installed_toolchains() -> Vec<String> {
    Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The installed toolchain that is `version`: named exactly so (`1.95-<host>`), else its newest
/// patch release (`1.95.0-<host>` for `1.95`); `version` itself when none is installed (rustup
/// then installs it or the build fails naming it).
pub(crate) fn installed_toolchain(version: &str, installed: &[String]) -> String {
    let release = |name: &str| -> Option<Vec<u64>> {
        let v = name.split('-').next()?;
        (v == version || v.starts_with(&format!("{version}.")))
            .then(|| v.split('.').filter_map(|p| p.parse().ok()).collect())
    };
    if let Some(exact) = installed
        .iter()
        .find(|n| n.split('-').next() == Some(version))
    {
        return exact.clone();
    }
    installed
        .iter()
        .filter_map(|n| release(n).map(|r| (r, n)))
        .max()
        .map_or_else(|| version.to_string(), |(_, n)| n.clone())
}

fn rustc_version(src: &Path, env: &[(String, String)]) -> Option<String> {
    let out = Command::new("rustc")
        .arg("--version")
        .current_dir(src)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Run `argv` in `dir` with its stdout and stderr in `log`; an error says how it ended.
pub(crate) fn run_logged(
    argv: &[String],
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
    timeout: Duration,
) -> Result<(), String> {
    // A fresh file: whatever is at the path (a link or hard link planted in a shared cache) is
    // removed, never followed or truncated.
    let logged = |e: std::io::Error| format!("could not write its log {}: {e}", log.display());
    match std::fs::remove_file(log) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(logged(e)),
        _ => {}
    }
    let file = crate::fsx::open_no_follow(log, File::options().write(true).create_new(true))
        .map_err(logged)?;
    let err = file.try_clone().map_err(logged)?;
    let (prog, args) = argv.split_first().ok_or("has no program")?;
    let mut child = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn()
        .map_err(|e| format!("could not start {prog:?}: {e}"))?;
    match crate::process::wait_group(&mut child, Instant::now() + timeout) {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("exited with {s}")),
        Err(crate::process::WaitEnd::Timeout) => Err(format!(
            "did not finish within {} s (its process group was killed)",
            timeout.as_secs()
        )),
        Err(crate::process::WaitEnd::Cancelled(c)) => Err(format!("was {c}")),
        Err(crate::process::WaitEnd::Io(e)) => Err(format!("could not be waited for: {e}")),
    }
}

/// The last lines of a log (lossy UTF-8, made safe for people).
pub(crate) fn log_tail(log: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    // Only the end is read, whatever the log's size (never through a link).
    let mut tail = Vec::new();
    if let Ok(mut f) = crate::fsx::open_no_follow(log, File::options().read(true)) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f
            .seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL_BYTES)))
            .and_then(|_| f.take(LOG_TAIL_BYTES).read_to_end(&mut tail));
    }
    let text = String::from_utf8_lossy(&tail).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..]
        .iter()
        .map(|l| crate::text::for_humans(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_follows_the_target_kind() {
        let mut suite = Suite::embedded();
        let builtin = suite.targets[0].clone();
        assert_eq!(BuildStep::for_target(&suite, &builtin), BuildStep::Tier1Run);
        assert_eq!(
            BuildStep::Tier1Run.argv(),
            [
                "cargo",
                "build",
                "--release",
                "--locked",
                "--bin",
                "tier1-run"
            ]
        );
        let mut cmd = builtin.clone();
        cmd.kind = TargetKind::Command;
        assert_eq!(BuildStep::for_target(&suite, &cmd), BuildStep::Nothing);
        suite.build = vec!["make".into()];
        assert_eq!(
            BuildStep::for_target(&suite, &cmd),
            BuildStep::Argv(vec!["make".into()])
        );
        assert_ne!(
            BuildStep::Argv(vec!["a b".into()]).id(),
            BuildStep::Argv(vec!["a".into(), "b".into()]).id()
        );
    }

    #[test]
    fn the_pinned_toolchain_comes_from_the_worktree() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(pinned_rust_version(t.path()), None);
        std::fs::write(
            t.path().join("Cargo.toml"),
            "[workspace.package]\nrust-version = \"1.95\"\n",
        )
        .unwrap();
        assert_eq!(pinned_rust_version(t.path()).as_deref(), Some("1.95"));
        std::fs::write(
            t.path().join("rust-toolchain.toml"),
            "[toolchain]\nchannel = \"1.95\"\n",
        )
        .unwrap();
        assert_eq!(
            pinned_rust_version(t.path()),
            None,
            "rustup reads the file itself"
        );
        let installed = [
            "stable-x86_64-unknown-linux-gnu",
            "1.95.0-x86_64-unknown-linux-gnu",
            "1.95.2-x86_64-unknown-linux-gnu",
            "1.9.0-x",
        ]
        .map(String::from);
        assert_eq!(
            installed_toolchain("1.95", &installed),
            "1.95.2-x86_64-unknown-linux-gnu"
        );
        assert_eq!(
            installed_toolchain("1.95.0", &installed),
            "1.95.0-x86_64-unknown-linux-gnu"
        );
        assert_eq!(installed_toolchain("1.9", &installed), "1.9.0-x");
        assert_eq!(installed_toolchain("1.96", &installed), "1.96");
        // This repository pins 1.95 in its workspace manifest.
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert_eq!(pinned_rust_version(&here).as_deref(), Some("1.95"));
    }
}
