//! Builds cached by commit. An entry `<cache>/<commit>/` holds the worktree (`src/`, from the
//! cache's mirror `<cache>/repo.git`, see [`worktree`]), cargo's
//! target directory for `tier1-run` (`target/`), and per build step a log and a completion marker
//! (`build-<step>.log`, `build-<step>.json`) written last, atomically, with the digest of every
//! output the step made. A reuse checks the worktree (HEAD, no tracked change) and every recorded
//! output's digest; an entry whose worktree git no longer knows (the repository was cloned again)
//! or that has no marker (an interrupted build) is rebuilt, one that fails the checks is refused
//! (`dirty_worktree`), never silently used. One process at a time works on an entry (a lock file).

use crate::digest::Digest;
use crate::sidebyside::outcome::{Cause, Problem, Side};
use crate::sidebyside::worktree::{self, Untracked};
use crate::suite::{Suite, Target, TargetKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `schema` of a completion marker.
pub const MARKER_SCHEMA: &str = "tier1.build.v1";
/// The bare repository inside the cache that owns every worktree.
pub const MIRROR: &str = "repo.git";
/// How many lines of a failed build's log a reason quotes.
const LOG_TAIL_LINES: usize = 20;

/// What builds a commit for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildStep {
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
    pub fn for_target(suite: &Suite, target: &Target) -> BuildStep {
        match target.kind {
            TargetKind::Builtin => BuildStep::Tier1Run,
            TargetKind::Command if suite.build.is_empty() => BuildStep::Nothing,
            TargetKind::Command => BuildStep::Argv(suite.build.clone()),
        }
    }

    /// The argv as recorded (`[]` for nothing).
    pub fn argv(&self) -> Vec<String> {
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
    fn id(&self) -> String {
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

/// The default cache directory: `$RUNNER_TOOL_CACHE/tier1-builds` inside GitHub Actions (kept
/// between jobs on a self-hosted runner), else `<repo_root>/.tier1/builds`.
pub fn default_cache_dir(repo_root: &Path) -> PathBuf {
    match std::env::var_os("RUNNER_TOOL_CACHE").filter(|v| !v.is_empty()) {
        Some(t) if crate::gha::in_actions() => PathBuf::from(t).join("tier1-builds"),
        _ => repo_root.join(".tier1").join("builds"),
    }
}

/// One build as used by a comparison (recorded in the outcome).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// Which side of the comparison.
    pub side: Side,
    /// The commit built.
    pub commit: String,
    /// The build step's argv (`[]`: nothing to build).
    pub step: Vec<String>,
    /// Taken from the cache (no build ran).
    pub reused: bool,
    /// The worktree the invocations run in.
    pub worktree: String,
    /// SHA-256 over the outputs' paths and digests (`sha256:` of nothing when none).
    pub outputs_digest: String,
    /// How many outputs were recorded.
    pub outputs: usize,
    /// `rustc --version` of the toolchain that built `tier1-run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<String>,
    /// Seconds the build took when it ran (0 when reused).
    pub seconds: f64,
    /// The build log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The `tier1-run` binary built (built-in targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// The completion marker of one step in one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Marker {
    schema: String,
    commit: String,
    step: Vec<String>,
    /// Output path (relative to the entry) to its digest.
    outputs: BTreeMap<String, String>,
    outputs_digest: String,
    #[serde(default)]
    toolchain: Option<String>,
    seconds: f64,
}

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest<'a> {
    /// The repository the worktree is made from.
    pub repo: &'a Path,
    /// The cache directory.
    pub cache_dir: &'a Path,
    /// The full commit id.
    pub commit: &'a str,
    /// The step.
    pub step: &'a BuildStep,
    /// Which side (for messages).
    pub side: Side,
    /// Wall-clock limit of the build step.
    pub timeout: Duration,
}

/// A ready build of `req.commit`: from the cache when its entry checks out, else built now.
pub fn ensure(req: &BuildRequest) -> Result<BuildRecord, Problem> {
    let io = |m: String| Problem::new(Cause::CheckoutFailed, Some(req.side), m);
    std::fs::create_dir_all(req.cache_dir).map_err(|e| {
        io(format!(
            "{}: could not create the build cache: {e}",
            req.cache_dir.display()
        ))
    })?;
    let ignore = req.cache_dir.join(".gitignore");
    if !ignore.exists() {
        // The default cache lies inside the checkout: keep it out of `git status`.
        crate::fsx::write_atomic(&ignore, b"*\n")
            .map_err(|e| io(format!("{}: {e}", ignore.display())))?;
    }
    let _entry_lock = lock(
        &req.cache_dir.join(format!("{}.lock", req.commit)),
        req.side,
    )?;
    let entry = req.cache_dir.join(req.commit);
    let src = entry.join("src");
    let mirror = req.cache_dir.join(MIRROR);
    let marker_path = entry.join(format!("build-{}.json", req.step.id()));
    if src.exists() && !worktree::is_readable(&src) {
        tracing::warn!(entry = %entry.display(), "git no longer knows the cached worktree; building it again");
        worktree::remove(&mirror, &src);
        let _ = std::fs::remove_dir_all(&entry);
    }
    if let Ok(bytes) = std::fs::read(&marker_path) {
        let marker: Marker = serde_json::from_slice(&bytes).map_err(|e| {
            dirty(
                req,
                format!(
                    "{}: unreadable completion marker: {e}; remove {} to build it again",
                    marker_path.display(),
                    entry.display()
                ),
            )
        })?;
        return reuse(req, &entry, marker);
    }
    // No marker: a new entry, or one a previous build of this step did not finish.
    if src.exists() && worktree::verify(&src, req.commit, req.side, Untracked::Allowed).is_err() {
        worktree::remove(&mirror, &src);
    }
    if !src.exists() {
        // The mirror is shared by every entry: one process at a time fetches into it.
        let mirror_lock = lock(&req.cache_dir.join("repo.lock"), req.side)?;
        worktree::create(req.repo, &mirror, req.commit, &src, req.side)?;
        drop(mirror_lock);
    }
    build(req, &entry, &marker_path)
}

/// An exclusive lock on `path` (created when missing), held until the file is dropped.
fn lock(path: &Path, side: Side) -> Result<File, Problem> {
    let io = |m: String| Problem::new(Cause::CheckoutFailed, Some(side), m);
    let f = File::create(path)
        .map_err(|e| io(format!("{}: could not open the lock: {e}", path.display())))?;
    f.lock()
        .map_err(|e| io(format!("{}: could not lock: {e}", path.display())))?;
    Ok(f)
}

fn dirty(req: &BuildRequest, message: String) -> Problem {
    Problem::new(Cause::DirtyWorktree, Some(req.side), message)
}

/// Check a completed entry and use it.
fn reuse(req: &BuildRequest, entry: &Path, marker: Marker) -> Result<BuildRecord, Problem> {
    let src = entry.join("src");
    let again = format!("; remove {} to build it again", entry.display());
    if marker.schema != MARKER_SCHEMA
        || marker.commit != req.commit
        || marker.step != req.step.argv()
    {
        return Err(dirty(
            req,
            format!(
                "{}: completion marker is for commit {} step {:?} ({}), expected commit {} step {:?} ({MARKER_SCHEMA}){again}",
                entry.display(),
                marker.commit,
                marker.step,
                marker.schema,
                req.commit,
                req.step.argv()
            ),
        ));
    }
    worktree::verify(&src, req.commit, req.side, Untracked::Allowed)
        .map_err(|p| dirty(req, format!("{}{again}", p.message)))?;
    for (rel, want) in &marker.outputs {
        let found = crate::fsx::join_safe(entry, rel)
            .and_then(|p| Digest::of_file(&p).ok())
            .map(|d| d.to_string())
            .unwrap_or_else(|| "no readable file".into());
        if &found != want {
            return Err(dirty(
                req,
                format!(
                    "{}: build output {rel} is {found}, expected {want} as recorded when it was built{again}",
                    entry.display()
                ),
            ));
        }
    }
    Ok(record(req, entry, &marker, true))
}

fn record(req: &BuildRequest, entry: &Path, marker: &Marker, reused: bool) -> BuildRecord {
    let log = entry.join(format!("build-{}.log", req.step.id()));
    BuildRecord {
        side: req.side,
        commit: req.commit.to_string(),
        step: marker.step.clone(),
        reused,
        worktree: entry.join("src").display().to_string(),
        outputs_digest: marker.outputs_digest.clone(),
        outputs: marker.outputs.len(),
        toolchain: marker.toolchain.clone(),
        seconds: if reused { 0.0 } else { marker.seconds },
        log: log.exists().then(|| log.display().to_string()),
        program: (*req.step == BuildStep::Tier1Run)
            .then(|| tier1_run_program(entry).display().to_string()),
    }
}

/// Where the built `tier1-run` of an entry lies.
pub fn tier1_run_program(entry: &Path) -> PathBuf {
    entry.join("target").join("release").join("tier1-run")
}

/// Run the step in the entry's fresh worktree, record its outputs, write the marker.
fn build(req: &BuildRequest, entry: &Path, marker_path: &Path) -> Result<BuildRecord, Problem> {
    let src = entry.join("src");
    let started = Instant::now();
    let log_path = entry.join(format!("build-{}.log", req.step.id()));
    let mut env: Vec<(String, String)> = Vec::new();
    let mut toolchain = None;
    if *req.step == BuildStep::Tier1Run {
        env.push((
            "CARGO_TARGET_DIR".into(),
            entry.join("target").display().to_string(),
        ));
        if let Some(v) = pinned_rust_version(&src) {
            env.push((
                "RUSTUP_TOOLCHAIN".into(),
                installed_toolchain(&v, &installed_toolchains()),
            ));
        }
        toolchain = rustc_version(&src, &env);
    }
    let argv = req.step.argv();
    if !argv.is_empty() {
        run_logged(&argv, &src, &env, &log_path, req.timeout).map_err(|m| {
            Problem::new(
                Cause::BuildFailed,
                Some(req.side),
                format!(
                    "commit {}: build step {argv:?} in {} {m}; last lines of {}:\n{}",
                    req.commit,
                    src.display(),
                    log_path.display(),
                    log_tail(&log_path)
                ),
            )
        })?;
    }
    worktree::verify(&src, req.commit, req.side, Untracked::Allowed).map_err(|p| {
        Problem::new(
            Cause::BuildFailed,
            Some(req.side),
            format!("the build step changed tracked files: {}", p.message),
        )
    })?;
    let outputs = outputs_of(req.step, entry)
        .map_err(|m| Problem::new(Cause::BuildFailed, Some(req.side), m))?;
    let marker = Marker {
        schema: MARKER_SCHEMA.into(),
        commit: req.commit.into(),
        step: argv,
        outputs_digest: combined(&outputs),
        outputs,
        toolchain,
        seconds: started.elapsed().as_secs_f64(),
    };
    let bytes = crate::json::to_pretty(&marker, "build marker")
        .map_err(|e| Problem::new(Cause::BuildFailed, Some(req.side), e.to_string()))?;
    crate::fsx::write_atomic(marker_path, &bytes).map_err(|e| {
        Problem::new(
            Cause::BuildFailed,
            Some(req.side),
            format!("{}: {e}", marker_path.display()),
        )
    })?;
    Ok(record(req, entry, &marker, false))
}

/// The outputs a step made, relative to the entry, with their digests.
fn outputs_of(step: &BuildStep, entry: &Path) -> Result<BTreeMap<String, String>, String> {
    let rels: Vec<String> = match step {
        BuildStep::Nothing => Vec::new(),
        BuildStep::Tier1Run => vec!["target/release/tier1-run".into()],
        BuildStep::Argv(_) => worktree::untracked_files(&entry.join("src"))?
            .into_iter()
            .map(|f| format!("src/{f}"))
            .collect(),
    };
    let mut out = BTreeMap::new();
    for rel in rels {
        let path = entry.join(&rel);
        let d =
            Digest::of_file(&path).map_err(|e| format!("build output {}: {e}", path.display()))?;
        out.insert(rel, d.to_string());
    }
    Ok(out)
}

/// SHA-256 over `path\0digest\n` lines in path order.
fn combined(outputs: &BTreeMap<String, String>) -> String {
    let text: String = outputs.iter().map(|(p, d)| format!("{p}\0{d}\n")).collect();
    Digest::of_bytes(text.as_bytes()).to_string()
}

/// The toolchain a worktree pins for rustup: none when it has a `rust-toolchain(.toml)` file
/// (rustup reads it itself), else the `rust-version` of its `Cargo.toml`.
pub fn pinned_rust_version(src: &Path) -> Option<String> {
    if src.join("rust-toolchain.toml").exists() || src.join("rust-toolchain").exists() {
        return None;
    }
    let manifest = std::fs::read_to_string(src.join("Cargo.toml")).ok()?;
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
pub fn installed_toolchain(version: &str, installed: &[String]) -> String {
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
fn run_logged(
    argv: &[String],
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
    timeout: Duration,
) -> Result<(), String> {
    let file = File::create(log).map_err(|e| format!("could not write its log: {e}"))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("could not write its log: {e}"))?;
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
fn log_tail(log: &Path) -> String {
    let text = std::fs::read(log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
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
