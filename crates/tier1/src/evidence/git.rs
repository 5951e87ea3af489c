//! The checkout's identity: commit and clean/dirty state, from `git` (or `GITHUB_SHA`). tier1's own
//! output folders (history, evidence and store roots), wherever they lie inside the checkout, never
//! make it dirty; every other changed or untracked-and-not-ignored file does, and is named.

use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// A checkout's commit and whether its tracked or untracked-not-ignored files differ from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitInfo {
    /// 40 lower-hex commit, None outside a git checkout.
    pub commit: Option<String>,
    /// True when the working tree has changes; None outside a git checkout.
    pub dirty: Option<bool>,
    /// The changed files as `git status` shows them (`M path`, `?? path`), repository-relative.
    #[serde(skip)]
    pub dirty_files: Vec<String>,
}

use crate::gate::is_commit_hex;

/// How many dirty files a message names before it says how many more there are.
const NAMED_FILES: usize = 10;

impl GitInfo {
    /// The dirty files for a message: the first few, then how many more.
    pub(crate) fn dirty_list(&self) -> String {
        let mut s = self
            .dirty_files
            .iter()
            .take(NAMED_FILES)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.dirty_files.len() > NAMED_FILES {
            s.push_str(&format!(
                " and {} more",
                self.dirty_files.len() - NAMED_FILES
            ));
        }
        s
    }

    /// Why the checkout cannot be bound, naming the files and what to do; None when it is clean.
    pub(crate) fn dirty_message(&self, repo_root: &Path) -> Option<String> {
        (self.dirty == Some(true)).then(|| {
            format!(
                "the checkout {} has changes that are not in commit {}: {}. Commit them, or list \
                 files your build or targets create in .gitignore (tier1's own history, evidence \
                 and store folders are exempt wherever they are)",
                repo_root.display(),
                self.commit.as_deref().unwrap_or("?"),
                self.dirty_list()
            )
        })
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout)
}

/// `p` made absolute against the current directory, with `.` and `..` resolved lexically and the
/// longest existing ancestor canonicalized (so symlinked temp dirs compare equal).
fn resolve(p: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(p).ok()?;
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    let mut existing = clean.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name()?.to_os_string());
        existing.pop();
    }
    let mut out = existing.canonicalize().ok()?;
    out.extend(rest.iter().rev());
    Some(out)
}

/// The outputs inside `toplevel`, as `/`-joined repository-relative paths.
fn exempt_prefixes(toplevel: &Path, outputs: &[&Path]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|p| resolve(p))
        .filter_map(|p| {
            p.strip_prefix(toplevel).ok().map(|rel| {
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
        })
        .filter(|rel| !rel.is_empty()) // the checkout itself is never exempt
        .collect()
}

fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Ask git about the checkout at `dir`. Files under `outputs` (directories the job itself writes,
/// absolute or relative to the current directory) do not make the tree dirty.
pub(crate) fn detect(dir: &Path, outputs: &[&Path]) -> GitInfo {
    let commit = git(dir, &["rev-parse", "HEAD"])
        .map(|s| String::from_utf8_lossy(&s).trim().to_ascii_lowercase())
        .filter(|s| is_commit_hex(s));
    let toplevel = commit
        .as_ref()
        .and_then(|_| git(dir, &["rev-parse", "--show-toplevel"]))
        .and_then(|s| resolve(Path::new(String::from_utf8_lossy(&s).trim())));
    let (Some(_), Some(top)) = (&commit, toplevel) else {
        return GitInfo {
            commit,
            dirty: None,
            dirty_files: Vec::new(),
        };
    };
    let exempt = exempt_prefixes(&top, outputs);
    let Some(status) = git(
        &top,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    ) else {
        return GitInfo {
            commit,
            dirty: Some(true),
            dirty_files: vec!["(git status failed)".into()],
        };
    };
    let mut files = Vec::new();
    let mut entries = status.split(|b| *b == 0).filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        let entry = String::from_utf8_lossy(entry);
        let (code, path) = (entry.get(..2).unwrap_or(""), entry.get(3..).unwrap_or(""));
        if code.starts_with('R') || code.starts_with('C') {
            entries.next(); // the original path of a rename or copy
        }
        if !exempt.iter().any(|p| under(path, p)) {
            files.push(format!("{} {path}", code.trim()));
        }
    }
    GitInfo {
        commit,
        dirty: Some(!files.is_empty()),
        dirty_files: files,
    }
}

/// `GITHUB_SHA` when it is a 40-hex commit (lowered), else the detected commit.
pub(crate) fn expected_commit(detected: &GitInfo) -> Option<String> {
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
                dirty: None,
                dirty_files: vec![]
            }
        );
    }

    #[test]
    fn prefixes_match_whole_components() {
        assert!(under("artifacts/runs/x.json", "artifacts/runs"));
        assert!(under("artifacts/runs", "artifacts/runs"));
        assert!(!under("artifacts/runs2/x.json", "artifacts/runs"));
    }

    #[test]
    fn the_message_names_at_most_ten_files() {
        let g = GitInfo {
            commit: Some("a".repeat(40)),
            dirty: Some(true),
            dirty_files: (0..12).map(|i| format!("?? f{i}")).collect(),
        };
        let m = g.dirty_message(Path::new("/repo")).unwrap();
        assert!(
            m.contains("?? f9") && !m.contains("?? f10") && m.contains("and 2 more"),
            "{m}"
        );
    }
}
