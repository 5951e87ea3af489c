//! git as the side-by-side comparison and the bisection use it: read-only questions about a
//! repository (is it one, which commit does a name mean, which commits lie between two) and the
//! worktree commands, each run with the caller's `GIT_DIR`-style variables removed and hooks off,
//! so nothing but the named repository is read and no hook of the repository runs.

use crate::sidebyside::outcome::{Cause, Problem, Side};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Variables that would point git at another repository or index than the directory given.
const REDIRECTING_VARS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
];

/// `git <args>` in `dir`: its stdout, or a message with the command and git's stderr.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    git_child(dir, args, &[], None)
}

/// [`git`] with `env` added to the child's environment (credentials travel this way, never in
/// the arguments).
pub(crate) fn git_with_env(
    dir: &Path,
    args: &[&str],
    env: &[(String, String)],
) -> Result<String, String> {
    git_child(dir, args, env, None)
}

/// [`git`] with `input` written to its stdin (on a thread, so a large input and output cannot
/// block each other).
pub(crate) fn git_with_input(
    dir: &Path,
    args: &[&str],
    input: Option<Vec<u8>>,
) -> Result<String, String> {
    git_child(dir, args, &[], input)
}

/// The one place git is started: hooks off, redirecting variables removed, `env` added, `input`
/// on stdin.
fn git_child(
    dir: &Path,
    args: &[&str],
    env: &[(String, String)],
    input: Option<Vec<u8>>,
) -> Result<String, String> {
    let mut cmd = Command::new("git");
    cmd.arg("-c").arg("core.hooksPath=/dev/null").args(args);
    for v in REDIRECTING_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let started = |e: std::io::Error| format!("could not start git in {}: {e}", dir.display());
    let out = match input {
        None => cmd.current_dir(dir).output().map_err(started)?,
        Some(bytes) => {
            let mut child = cmd
                .current_dir(dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(started)?;
            let mut stdin = child.stdin.take();
            let writer = std::thread::spawn(move || {
                if let Some(s) = stdin.as_mut() {
                    let _ = s.write_all(&bytes);
                }
            });
            let out = child.wait_with_output().map_err(started)?;
            let _ = writer.join();
            out
        }
    };
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "`git {}` in {} failed ({}): {}",
        args.join(" "),
        dir.display(),
        out.status,
        stderr.trim()
    ))
}

/// True when `s` is a full commit id (40 lower-case hex digits).
pub(crate) fn is_full_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The top-level directory of the repository at `repo` (a refusal naming it when it is none).
pub(crate) fn toplevel(repo: &Path) -> Result<PathBuf, Problem> {
    if !repo.is_dir() {
        return Err(Problem::new(
            Cause::NotARepository,
            None,
            format!(
                "{}: expected the directory of a git repository, found no directory",
                repo.display()
            ),
        ));
    }
    git(repo, &["rev-parse", "--show-toplevel"])
        .map(|s| PathBuf::from(s.trim()))
        .map_err(|e| {
            Problem::new(
                Cause::NotARepository,
                None,
                format!(
                    "{}: expected a git repository with a work tree ({e})",
                    repo.display()
                ),
            )
        })
}

/// The full id of the commit `rev` names in `repo`; `side` says which build it is for.
pub(crate) fn resolve(repo: &Path, rev: &str, side: Option<Side>) -> Result<String, Problem> {
    let not_found = |detail: String| {
        Problem::new(
            Cause::CommitNotFound,
            side,
            format!(
                "commit {rev:?} is not in the repository {}{detail}: fetch the history that holds \
                 it (a shallow clone has only its tip: `git fetch --unshallow`, or check out with \
                 `fetch-depth: 0`)",
                repo.display()
            ),
        )
    };
    if rev.is_empty() || rev.starts_with('-') || rev.chars().any(char::is_control) {
        return Err(not_found(" (not a revision name)".into()));
    }
    let spec = format!("{rev}^{{commit}}");
    let id = git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )
    .map_err(|_| not_found(String::new()))?;
    let id = id.trim().to_string();
    if !is_full_commit(&id) {
        return Err(not_found(format!(" (git answered {id:?})")));
    }
    Ok(id)
}

/// The commits after `good` up to and including `bad` on `bad`'s first-parent chain, oldest
/// first; `None` when `good` is not on that chain.
pub(crate) fn first_parent_range(
    repo: &Path,
    good: &str,
    bad: &str,
) -> Result<Option<Vec<String>>, String> {
    let range = format!("{good}..{bad}");
    let out = git(repo, &["rev-list", "--first-parent", "--reverse", &range])?;
    let commits: Vec<String> = out.lines().map(|l| l.trim().to_string()).collect();
    let Some(oldest) = commits.first() else {
        return Ok((good == bad).then(Vec::new));
    };
    let parent = git(
        repo,
        &["rev-parse", "--verify", "--quiet", &format!("{oldest}^1")],
    )
    .map(|s| s.trim().to_string())
    .unwrap_or_default();
    Ok((parent == good).then_some(commits))
}

/// Whether `rev` names a commit whose object is in `repo` (a shallow clone lacks the commits
/// behind its tip).
pub(crate) fn has_commit(repo: &Path, rev: &str) -> bool {
    git(
        repo,
        &[
            "cat-file",
            "-e",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .is_ok()
}

/// Whether `repo` is a shallow clone (history cut at `.git/shallow`).
pub(crate) fn is_shallow(repo: &Path) -> bool {
    git(repo, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|s| s.trim() == "true")
}

/// The first line of `commit`'s message.
pub(crate) fn subject(repo: &Path, commit: &str) -> String {
    git(repo, &["log", "-1", "--format=%s", commit])
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}
