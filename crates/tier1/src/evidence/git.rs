//! The checkout's identity: commit and clean/dirty state, from `git` (or `GITHUB_SHA`).

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// A checkout's commit and whether its tracked or untracked-not-ignored files differ from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitInfo {
    /// 40 lower-hex commit, None outside a git checkout.
    pub commit: Option<String>,
    /// True when the working tree has changes; None outside a git checkout.
    pub dirty: Option<bool>,
}

use crate::gate::is_commit_hex;

/// Ask git about the checkout at `dir`. Paths under `ignore_prefixes` (output directories the job
/// itself writes) do not make the tree dirty.
pub fn detect(dir: &Path, ignore_prefixes: &[&str]) -> GitInfo {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let commit = run(&["rev-parse", "HEAD"])
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| is_commit_hex(s));
    let dirty = commit
        .as_ref()
        .and_then(|_| run(&["status", "--porcelain", "--untracked-files=normal"]))
        .map(|out| {
            out.lines().any(|l| {
                let path = l.get(3..).unwrap_or("").trim_matches('"');
                !ignore_prefixes.iter().any(|p| path.starts_with(p))
            })
        });
    GitInfo { commit, dirty }
}

/// `GITHUB_SHA` when it is a 40-hex commit (lowered), else the detected commit.
pub fn expected_commit(detected: &GitInfo) -> Option<String> {
    std::env::var("GITHUB_SHA")
        .ok()
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| is_commit_hex(s))
        .or_else(|| detected.commit.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_git_is_unknown() {
        let t = tempfile::tempdir().unwrap();
        let g = detect(t.path(), &[]);
        assert_eq!(
            g,
            GitInfo {
                commit: None,
                dirty: None
            }
        );
    }
}
