//! A detached git worktree at one commit, and the check that it still is exactly that commit:
//! `HEAD` is the commit and no tracked file differs from it (and, for a fresh worktree, no
//! untracked file exists either). The worktrees belong to a bare mirror inside the build cache
//! (`<cache>/repo.git`), into which each commit is fetched from the repository under a ref of its
//! own (`refs/tier1/<commit>`): the repository is only read (no ref, worktree record, index or
//! checkout of it changes), and the cache outlives a fresh clone of the repository (as on a
//! runner whose checkout step clones again every job).

use crate::sidebyside::git::git;
use crate::sidebyside::outcome::{Cause, Problem, Side};
use std::path::Path;

/// How strictly [`verify`] looks at files git does not track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Untracked {
    /// Untracked files make the worktree dirty (a fresh checkout).
    Refused,
    /// Untracked and ignored files are allowed (build outputs; checked by digest elsewhere).
    Allowed,
}

/// Create a detached worktree at `commit` in `path` (which must not exist) from the bare `mirror`
/// (created when missing), fetching the commit from `repo` first; then verify it is exactly the
/// commit with no untracked file.
pub(crate) fn create(
    repo: &Path,
    mirror: &Path,
    commit: &str,
    path: &Path,
    side: Side,
) -> Result<(), Problem> {
    let fail = |m: String| Problem::new(Cause::CheckoutFailed, Some(side), m);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| fail(format!("{}: could not create it: {e}", parent.display())))?;
    }
    if !mirror.join("HEAD").exists() {
        let parent = mirror.parent().unwrap_or(Path::new("."));
        git(parent, &["init", "-q", "--bare", &mirror.to_string_lossy()])
            .map_err(|e| fail(format!("could not create the build cache's mirror: {e}")))?;
    }
    let source = repo.to_string_lossy();
    let refspec = format!("+{commit}:refs/tier1/{commit}");
    git(
        mirror,
        &[
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            // A shallow checkout (GitHub's default depth 1, the anchor's commit fetched alone)
            // serves commits whose parents it lacks: without this the ref is silently rejected.
            "--update-shallow",
            &source,
            &refspec,
        ],
    )
    .map_err(|e| {
        fail(format!(
            "could not fetch commit {commit} into {}: {e}",
            mirror.display()
        ))
    })?;
    let dest = path.to_string_lossy();
    // --force: the path may still be registered from a worktree whose directory was removed.
    git(
        mirror,
        &["worktree", "add", "--force", "--detach", &dest, commit],
    )
    .map_err(|e| {
        fail(format!(
            "could not check out commit {commit} into {}: {e}",
            path.display()
        ))
    })?;
    verify(path, commit, side, Untracked::Refused)
}

/// Check that the worktree at `path` is exactly `commit`: `HEAD` equal, no tracked change, and
/// with [`Untracked::Refused`] no untracked file either.
pub(crate) fn verify(
    path: &Path,
    commit: &str,
    side: Side,
    untracked: Untracked,
) -> Result<(), Problem> {
    let dirty = |m: String| Problem::new(Cause::DirtyWorktree, Some(side), m);
    let head = git(path, &["rev-parse", "HEAD"]).map_err(|e| {
        dirty(format!(
            "{}: expected a git worktree at commit {commit}: {e}",
            path.display()
        ))
    })?;
    let head = head.trim();
    if head != commit {
        return Err(dirty(format!(
            "{}: HEAD is {head}, expected commit {commit}",
            path.display()
        )));
    }
    let mode = match untracked {
        Untracked::Refused => "--untracked-files=all",
        Untracked::Allowed => "--untracked-files=no",
    };
    let status = git(path, &["status", "--porcelain=v1", mode])
        .map_err(|e| dirty(format!("{}: {e}", path.display())))?;
    let changed: Vec<&str> = status.lines().filter(|l| !l.trim().is_empty()).collect();
    if !changed.is_empty() {
        let named: Vec<&str> = changed.iter().take(10).copied().collect();
        let more = changed.len().saturating_sub(named.len());
        return Err(dirty(format!(
            "{}: expected no local changes against commit {commit}, found {}{}",
            path.display(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    Ok(())
}

/// Whether git can still read the worktree at `path` (its record under the repository's
/// `.git/worktrees/` may be gone when the repository was cloned again).
pub(crate) fn is_readable(path: &Path) -> bool {
    git(path, &["rev-parse", "--git-dir"]).is_ok()
}

/// Remove the worktree at `path` (its directory and the mirror's record of it), best effort.
pub(crate) fn remove(mirror: &Path, path: &Path) {
    let _ = git(
        mirror,
        &["worktree", "remove", "--force", &path.to_string_lossy()],
    );
    let _ = std::fs::remove_dir_all(path);
}

/// The files of the worktree that git does not track, ignored ones included, as `/`-separated
/// paths relative to it (what a build step left behind).
pub(crate) fn untracked_files(path: &Path) -> Result<Vec<String>, String> {
    let out = git(path, &["ls-files", "--others", "-z"])?;
    let mut files: Vec<String> = out
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    files.sort();
    Ok(files)
}
