//! Builds cached by commit. An entry `<cache>/<commit>/` holds the worktree (`src/`, from the
//! cache's mirror `<cache>/repo.git`, see [`worktree`]), cargo's
//! target directory for `tier1-run` (`target/`), and per build step a log and a completion marker
//! (`build-<step>.log`, `build-<step>.json`) written last, atomically, with the digest of every
//! output the step made and of the whole worktree, signed with the builder's private key
//! ([`entry_trust`], [`cache_key`]). An entry is reused only when its marker is signed by this
//! builder and the worktree (HEAD, no tracked change, every file's digest) and every output still
//! match it; one whose marker is missing or not signed by this builder (an interrupted build, an
//! entry another user, job or tool wrote, an older tier1) is removed and built again from nothing,
//! its worktree's files checked against the repository itself; one that is signed but changed
//! since is refused (`dirty_worktree`), never silently used. One process at a time works on an
//! entry (a lock file), and nothing in the cache is opened through a symbolic link: a link planted
//! at a lock, log or entry path is never followed.

use crate::digest::Digest;
use crate::sidebyside::build_step::{BuildStep, log_tail, run_logged};
use crate::sidebyside::cache_key::{Builder, CacheKey};
use crate::sidebyside::entry_trust::{self, Found, MARKER_SCHEMA, Marker};
use crate::sidebyside::outcome::{BuildRecord, Cause, Problem, Side};
use crate::sidebyside::worktree::{self, Untracked};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    /// Who builds: whose key signs the entry.
    pub(crate) builder: Builder,
    /// Where the key lives (None: `cache_key::state_dir`).
    pub(crate) state_dir: Option<&'a Path>,
}

/// A ready build of `req.commit`: from the cache when its entry checks out, else built now.
pub(crate) fn ensure(req: &BuildRequest) -> Result<BuildRecord, Problem> {
    let io = |m: String| Problem::new(Cause::CheckoutFailed, Some(req.side), m);
    let key = match req.state_dir {
        Some(dir) => CacheKey::in_dir(dir, req.builder),
        None => CacheKey::load_or_create(req.builder),
    }
    .map_err(|m| io(format!("the build cache's key: {m}")))?;
    std::fs::create_dir_all(req.cache_dir).map_err(|e| {
        io(format!(
            "{}: could not create the build cache: {e}",
            req.cache_dir.display()
        ))
    })?;
    let ignore = req.cache_dir.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_err() {
        // The default cache lies inside the checkout: keep it out of `git status`.
        crate::fsx::write_atomic(&ignore, b"*\n")
            .map_err(|e| io(format!("{}: {e}", ignore.display())))?;
    }
    let _entry_lock = lock(
        &req.cache_dir.join(format!("{}.lock", req.commit)),
        req.side,
    )?;
    let entry = req.cache_dir.join(req.commit);
    let mirror = req.cache_dir.join(MIRROR);
    let marker_path = entry.join(format!("build-{}.json", req.step.id()));
    let is_real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let found = if is_real_dir(&entry) {
        entry_trust::read(&marker_path, &key).map_err(|m| dirty(req, m))?
    } else {
        None
    };
    match found {
        Some(Found::Ours(marker)) => return reuse(req, &entry, &marker),
        Some(Found::NotOurs(why)) => {
            tracing::warn!(entry = %entry.display(), "not trusted: {why}; building it again from nothing")
        }
        None => {}
    }
    // No trusted marker: whatever is there (an interrupted build, a planted entry or link) goes.
    discard(&mirror, &entry).map_err(|e| {
        io(format!(
            "{}: could not remove the untrusted entry: {e}",
            entry.display()
        ))
    })?;
    let src = entry.join("src");
    {
        // The mirror is shared by every entry: one process at a time fetches into it.
        let _mirror_lock = lock(&req.cache_dir.join("repo.lock"), req.side)?;
        worktree::create(req.repo, &mirror, req.commit, &src, req.side)?;
    }
    worktree::check_content(req.repo, &src, req.commit, req.side)?;
    tracing::info!(commit = %req.commit, entry = %entry.display(), "building the {} side's commit into the build cache (once per commit: later comparisons reuse it)", req.side.as_str());
    build(req, &key, &entry, &marker_path)
}

/// Remove an entry that is not trusted (its worktree's record in the mirror too); a symbolic link
/// in its place is removed as a link, never followed.
fn discard(mirror: &Path, entry: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(entry) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => {
            worktree::remove(mirror, &entry.join("src"));
            std::fs::remove_dir_all(entry)
        }
        Ok(_) => std::fs::remove_file(entry),
    }
}

/// An exclusive lock on `path` (created when missing), held until the file is dropped. The file
/// is opened without following a symbolic link, never truncated and never written: a link or a
/// hard link planted there cannot make tier1 change another file.
fn lock(path: &Path, side: Side) -> Result<File, Problem> {
    let io = |m: String| Problem::new(Cause::CheckoutFailed, Some(side), m);
    let open = || {
        crate::fsx::open_no_follow(
            path,
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .truncate(false),
        )
    };
    let opened = match open() {
        // A link is never a lock tier1 holds (it opens none through one): it was planted, and
        // goes; the file it names is left alone.
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            tracing::warn!(lock = %path.display(), "a symbolic link in place of a lock file: removed, not followed");
            std::fs::remove_file(path).and_then(|()| open())
        }
        other => other,
    };
    let f = opened.map_err(|e| io(format!("{}: could not open the lock: {e}", path.display())))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(io(format!(
            "{}: expected a regular lock file",
            path.display()
        )));
    }
    f.lock()
        .map_err(|e| io(format!("{}: could not lock: {e}", path.display())))?;
    Ok(f)
}

fn dirty(req: &BuildRequest, message: String) -> Problem {
    Problem::new(Cause::DirtyWorktree, Some(req.side), message)
}

/// Check an entry this builder made and use it: the marker's commit and step, the worktree (a
/// real directory, HEAD, no tracked change, every file's digest) and every output.
fn reuse(req: &BuildRequest, entry: &Path, marker: &Marker) -> Result<BuildRecord, Problem> {
    let src = entry.join("src");
    let again = format!("; remove {} to build it again", entry.display());
    if marker.commit != req.commit || marker.step != req.step.argv() {
        return Err(dirty(
            req,
            format!(
                "{}: completion marker is for commit {} step {:?}, expected commit {} step {:?}{again}",
                entry.display(),
                marker.commit,
                marker.step,
                req.commit,
                req.step.argv()
            ),
        ));
    }
    if !std::fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir()) {
        return Err(dirty(
            req,
            format!(
                "{}: expected the entry's worktree, found none or a link{again}",
                src.display()
            ),
        ));
    }
    worktree::verify(&src, req.commit, req.side, Untracked::Allowed)
        .map_err(|p| dirty(req, format!("{}{again}", p.message)))?;
    for (rel, want) in &marker.outputs {
        let found = crate::fsx::join_safe(entry, rel)
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
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
    let tree = entry_trust::tree_digest(&src).map_err(|m| dirty(req, format!("{m}{again}")))?;
    if tree != marker.worktree_digest {
        return Err(dirty(
            req,
            format!(
                "{}: the worktree's files are {tree}, expected {} as recorded when it was built (a file was changed, added or removed){again}",
                src.display(),
                marker.worktree_digest
            ),
        ));
    }
    Ok(record(req, entry, marker, true))
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
fn build(
    req: &BuildRequest,
    key: &CacheKey,
    entry: &Path,
    marker_path: &Path,
) -> Result<BuildRecord, Problem> {
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
    let failed = |m: String| Problem::new(Cause::BuildFailed, Some(req.side), m);
    let mut marker = Marker {
        schema: MARKER_SCHEMA.into(),
        commit: req.commit.into(),
        step: argv,
        outputs_digest: combined(&outputs),
        outputs,
        worktree_digest: entry_trust::tree_digest(&src).map_err(failed)?,
        toolchain,
        seconds: started.elapsed().as_secs_f64(),
        mac: String::new(),
    };
    entry_trust::seal(&mut marker, key).map_err(failed)?;
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
