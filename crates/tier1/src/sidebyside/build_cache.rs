//! Builds cached by commit. An entry `<cache>/<commit>/` holds the worktree (`src/`, from the
//! cache's mirror `<cache>/repo.git`, see [`worktree`]), cargo's
//! target directory for `tier1-run` (`target/`), and per build step a log and a completion marker
//! (`build-<step>.log`, `build-<step>.json`) written last, atomically, with the digest of every
//! output the step made. A reuse checks the worktree (HEAD, no tracked change) and every recorded
//! output's digest; an entry whose worktree git no longer knows (the repository was cloned again)
//! or that has no marker (an interrupted build) is rebuilt, one that fails the checks is refused
//! (`dirty_worktree`), never silently used. One process at a time works on an entry (a lock file).

use crate::digest::Digest;
use crate::sidebyside::build_step::{BuildStep, log_tail, run_logged};
use crate::sidebyside::outcome::{BuildRecord, Cause, Problem, Side};
use crate::sidebyside::worktree::{self, Untracked};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `schema` of a completion marker.
pub(crate) const MARKER_SCHEMA: &str = "tier1.build.v1";
/// The bare repository inside the cache that owns every worktree.
pub(crate) const MIRROR: &str = "repo.git";

/// The default cache directory: `$RUNNER_TOOL_CACHE/tier1-builds` inside GitHub Actions (kept
/// between jobs on a self-hosted runner), else `<repo_root>/.tier1/builds`.
pub fn default_cache_dir(repo_root: &Path) -> PathBuf {
    match std::env::var_os("RUNNER_TOOL_CACHE").filter(|v| !v.is_empty()) {
        Some(t) if crate::gha::in_actions() => PathBuf::from(t).join("tier1-builds"),
        _ => repo_root.join(".tier1").join("builds"),
    }
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
pub(crate) struct BuildRequest<'a> {
    /// The repository the worktree is made from.
    pub(crate) repo: &'a Path,
    /// The cache directory.
    pub(crate) cache_dir: &'a Path,
    /// The full commit id.
    pub(crate) commit: &'a str,
    /// The step.
    pub(crate) step: &'a BuildStep,
    /// Which side (for messages).
    pub(crate) side: Side,
    /// Wall-clock limit of the build step.
    pub(crate) timeout: Duration,
}

/// A ready build of `req.commit`: from the cache when its entry checks out, else built now.
pub(crate) fn ensure(req: &BuildRequest) -> Result<BuildRecord, Problem> {
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
    tracing::info!(commit = %req.commit, entry = %entry.display(), "building the {} side's commit into the build cache (once per commit: later comparisons reuse it)", req.side.as_str());
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
pub(crate) fn tier1_run_program(entry: &Path) -> PathBuf {
    entry.join("target").join("release").join("tier1-run")
}

/// Run the step in the entry's fresh worktree, record its outputs, write the marker.
fn build(req: &BuildRequest, entry: &Path, marker_path: &Path) -> Result<BuildRecord, Problem> {
    let src = entry.join("src");
    let started = Instant::now();
    let log_path = entry.join(format!("build-{}.log", req.step.id()));
    let (env, toolchain) = req.step.environment(&src, &entry.join("target"));
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
