//! Getting what a comparison needs that the checkout lacks, from the checkout's own remote.
//! GitHub's default `actions/checkout` is a depth-1 clone without tags (`fetch-depth: 1`,
//! `action.yml`; `git fetch --no-tags --depth=1 origin +<sha>:…`, `src/git-command-manager.ts`,
//! actions/checkout@3d3c42e5, v7.0.1): the anchor's commit is not in it. A comparison needs only
//! that commit's tree, so it is fetched alone (`--depth=1`; GitHub serves any reachable commit by
//! its id); a bisection needs the first-parent chain from the good commit to the bad one, so the
//! bad commit's history is deepened (doubling) until the good commit is on it. The credentials
//! are the job's ([`Access`]); when the fetch fails, [`Unavailable`] says why and what to do.

use crate::sidebyside::git::{self, git_with_env, has_commit, is_full_commit, is_shallow};
use crate::sidebyside::remote::{Access, checkout_remote, remote_url};
use std::path::Path;

/// Why the commits could not be had, and the remedy; both for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unavailable {
    /// What failed, naming the commit, the checkout and the remote.
    pub(crate) reason: String,
    /// What the maintainer can do about it.
    pub(crate) remedy: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; remedy: {}", self.reason, self.remedy)
    }
}

/// The most commits a bisection deepens the history by before it gives up.
pub(crate) const MAX_DEEPEN: u32 = 1 << 16;

/// Make `commit` (a full id) present in `repo`: nothing when it is; else fetch it alone from the
/// checkout's remote. Returns whether it was fetched.
pub(crate) fn ensure_commit(
    repo: &Path,
    commit: &str,
    access: &Access,
) -> Result<bool, Unavailable> {
    if has_commit(repo, commit) {
        return Ok(false);
    }
    if !is_full_commit(commit) {
        return Err(Unavailable {
            reason: format!(
                "commit {commit:?} is not in the checkout {} and is no full commit id to fetch",
                repo.display()
            ),
            remedy: "record full commit ids, or check out with `fetch-depth: 0`".into(),
        });
    }
    let remote = remote_of(repo, commit)?;
    fetch(repo, &remote, commit, &["--depth=1"], access)?;
    if has_commit(repo, commit) {
        Ok(true)
    } else {
        Err(Unavailable {
            reason: format!(
                "fetching commit {commit} from {remote} into {} succeeded, but the commit is still \
                 not there",
                repo.display()
            ),
            remedy: "check out with `fetch-depth: 0`".into(),
        })
    }
}

/// Make the first-parent chain from `good` to `bad` (full ids) complete in `repo`: both present,
/// then `bad`'s history deepened until `good` is on it or the history is whole.
pub(crate) fn ensure_range(
    repo: &Path,
    good: &str,
    bad: &str,
    access: &Access,
) -> Result<(), Unavailable> {
    ensure_commit(repo, good, access)?;
    ensure_commit(repo, bad, access)?;
    let mut deepen: u32 = 1;
    loop {
        if matches!(git::first_parent_range(repo, good, bad), Ok(Some(_))) || !is_shallow(repo) {
            return Ok(());
        }
        if deepen > MAX_DEEPEN {
            return Err(Unavailable {
                reason: format!(
                    "commit {good} is not within {MAX_DEEPEN} first-parent commits of {bad} in \
                     the shallow checkout {}",
                    repo.display()
                ),
                remedy: "check out with `fetch-depth: 0`".into(),
            });
        }
        let remote = remote_of(repo, bad)?;
        fetch(repo, &remote, bad, &[&format!("--deepen={deepen}")], access)?;
        deepen = deepen.saturating_mul(2);
    }
}

fn remote_of(repo: &Path, commit: &str) -> Result<String, Unavailable> {
    checkout_remote(repo).ok_or_else(|| Unavailable {
        reason: format!(
            "the checkout {} has no remote to fetch commit {commit} from",
            repo.display()
        ),
        remedy: "check out with `fetch-depth: 0` (actions/checkout) so the commit is in the \
                 clone, or add the repository as the remote `origin`"
            .into(),
    })
}

/// `git fetch` of `commit` from `remote` with `depth` options, credentials in the environment.
fn fetch(
    repo: &Path,
    remote: &str,
    commit: &str,
    depth: &[&str],
    access: &Access,
) -> Result<(), Unavailable> {
    let mut env = access.git_env();
    // Never wait for a password prompt (actions/checkout's runner has no terminal either).
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    env.push(("GCM_INTERACTIVE".into(), "never".into()));
    let mut args = vec![
        "-c",
        "protocol.version=2",
        "-c",
        "http.lowSpeedLimit=1",
        "-c",
        "http.lowSpeedTime=120",
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-recurse-submodules",
    ];
    args.extend_from_slice(depth);
    args.extend(["--end-of-options", remote, commit]);
    tracing::info!(commit, remote, "fetching a commit the checkout lacks");
    git_with_env(repo, &args, &env).map(|_| ()).map_err(|e| {
        let said = crate::text::for_humans(&e).into_owned();
        let url = crate::text::for_humans(&remote_url(repo, remote)).into_owned();
        let (why, remedy) = classify(&said, access);
        Unavailable {
            reason: format!(
                "could not fetch commit {commit} from {remote} ({url}) into {}: {why} ({said})",
                repo.display()
            ),
            remedy,
        }
    })
}

/// What a failed fetch's message means, and its remedy.
fn classify(said: &str, access: &Access) -> (String, String) {
    let s = said.to_ascii_lowercase();
    let refused = [
        "authentication failed",
        "could not read username",
        "terminal prompts disabled",
        "repository not found",
        "permission denied",
        "401",
        "403",
    ]
    .iter()
    .any(|m| s.contains(m));
    let gone = [
        "not our ref",
        "couldn't find remote ref",
        "no such remote ref",
        "unadvertised object",
    ]
    .iter()
    .any(|m| s.contains(m));
    if gone {
        (
            "the remote does not have it (history rewritten, or a commit of another repository)"
                .into(),
            "it cannot be fetched: accept a new anchor measured on the current history \
             (docs/runbook.md); `fetch-depth: 0` cannot bring it back"
                .into(),
        )
    } else if refused {
        let token = if access.token.is_some() {
            "the job's token was refused"
        } else {
            "no token was given"
        };
        (
            format!("the remote refused the request ({token})"),
            "give the step the job's token (`GITHUB_TOKEN: ${{ github.token }}`) with \
             `permissions: contents: read`, or check out with `fetch-depth: 0`"
                .into(),
        )
    } else {
        (
            "the remote could not be reached or read".into(),
            "check that the runner reaches the remote, or check out with `fetch-depth: 0` so \
             the commit is in the clone"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_with_their_remedy() {
        let none = Access {
            token: None,
            server_origin: "https://github.com".into(),
        };
        let (why, remedy) = classify(
            "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
            &none,
        );
        assert!(why.contains("no token was given"), "{why}");
        assert!(remedy.contains("contents: read"), "{remedy}");
        let (why, remedy) = classify("fatal: remote error: upload-pack: not our ref 1234", &none);
        assert!(why.contains("does not have it"), "{why}");
        assert!(remedy.contains("new anchor"), "{remedy}");
        let (why, remedy) = classify(
            "fatal: '/nonexistent/x.git' does not appear to be a git repository",
            &none,
        );
        assert!(why.contains("could not be reached"), "{why}");
        assert!(remedy.contains("fetch-depth: 0"), "{remedy}");
    }
}
