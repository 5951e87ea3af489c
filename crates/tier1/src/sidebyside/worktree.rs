//! A detached git worktree at one commit, and the check that it still is exactly that commit:
//! `HEAD` is the commit and no tracked file differs from it (and, for a fresh worktree, no
//! untracked file exists either). The worktrees belong to a bare mirror inside the build cache
//! (`<cache>/repo.git`), into which each commit is fetched from the repository under a ref of its
//! own (`refs/tier1/<commit>`): the repository is only read (no ref, worktree record, index or
//! checkout of it changes), and the cache outlives a fresh clone of the repository (as on a
//! runner whose checkout step clones again every job).

use crate::sidebyside::git::{git, git_with_input};
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

/// Check every file git tracks at `commit` in the worktree `path` against the blob the trusted
/// repository `repo` holds for it (`git ls-tree` there, `git hash-object --no-filters` here; a
/// symbolic link by its target): the build cache's mirror is shared with whoever writes the cache,
/// and objects swapped there would otherwise be checked out, built and trusted.
pub(crate) fn check_content(
    repo: &Path,
    path: &Path,
    commit: &str,
    side: Side,
) -> Result<(), Problem> {
    let dirty = |m: String| Problem::new(Cause::DirtyWorktree, Some(side), m);
    let listing = git(repo, &["ls-tree", "-r", "-z", "--full-tree", commit])
        .map_err(|e| dirty(format!("could not list commit {commit}: {e}")))?;
    let (mut files, mut links) = (Vec::new(), Vec::new());
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        let (meta, rel) = entry
            .split_once('\t')
            .ok_or_else(|| dirty(format!("unexpected `git ls-tree` line {entry:?}")))?;
        let mut meta = meta.split(' ');
        let (mode, kind, id) = (meta.next(), meta.next(), meta.next());
        match (mode, kind, id) {
            (Some("120000"), Some("blob"), Some(id)) => links.push((rel, id)),
            (Some(_), Some("blob"), Some(id)) => files.push((rel, id)),
            _ => {} // a submodule's commit: not checked out
        }
    }
    if let Some((rel, _)) = files.iter().find(|(rel, _)| rel.contains('\n')) {
        return Err(dirty(format!(
            "{}: tracked path {rel:?} holds a line break: its content cannot be checked",
            path.display()
        )));
    }
    let list: String = files.iter().map(|(rel, _)| format!("{rel}\n")).collect();
    let ids = git_with_input(
        path,
        &["hash-object", "--no-filters", "--stdin-paths"],
        Some(list.into_bytes()),
    )
    .map_err(|e| dirty(format!("{}: {e}", path.display())))?;
    let mut found = ids.lines();
    for (rel, want) in &files {
        let got = found.next().unwrap_or("");
        if got != *want {
            return Err(dirty(format!(
                "{}: {rel} is blob {got}, expected {want} as the repository {} holds it at commit {commit}: the build cache's copy of the commit was changed",
                path.display(),
                repo.display()
            )));
        }
    }
    for (rel, want) in links {
        let target = std::fs::read_link(path.join(rel))
            .map(|t| t.as_os_str().as_encoded_bytes().to_vec())
            .unwrap_or_default();
        let expected = git(repo, &["cat-file", "blob", want]).unwrap_or_default();
        if target != expected.as_bytes() {
            return Err(dirty(format!(
                "{}: the symbolic link {rel} does not point where commit {commit} says",
                path.display()
            )));
        }
    }
    Ok(())
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
