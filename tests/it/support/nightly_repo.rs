//! A throwaway git checkout with the deterministic fixture suite, and a runner for the real
//! `tier1-nightly` binary against a local store inside it (shared by the end-to-end tests).
#![allow(dead_code)]

use super::command;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
}

/// Run git in `root` with a throwaway identity; panics unless it succeeds; returns its stdout.
pub fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    std::fs::create_dir_all(&root).unwrap();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nightly");
    for f in ["fixed_target.py", "suite.yaml"] {
        std::fs::copy(fx.join(f), root.join(f)).unwrap();
    }
    std::fs::write(root.join(".gitignore"), ".tier1/\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "fixture"]);
    Repo { _tmp: tmp, root }
}

/// A clone of `r` as GitHub's default `actions/checkout` makes one (`fetch-depth: 1`, no tags, the
/// commit checked out as branch `main`): `git fetch --depth=1` over `file://` (git ignores a depth
/// for a plain local path) from `r` as `origin`. `r`'s local store (`.tier1/store`, which git does
/// not track) is copied into it: the history the night restores.
pub fn shallow_clone(r: &Repo) -> Repo {
    shallow_clone_from(r, &format!("file://{}", r.root.display()), &[])
}

/// [`shallow_clone`] from `url` (a copy of `r` served elsewhere), the fetch run with the git
/// `-c` settings `config` (credentials for that fetch only: nothing is persisted).
pub fn shallow_clone_from(r: &Repo, url: &str, config: &[String]) -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("shallow");
    std::fs::create_dir_all(&root).unwrap();
    let head = git(&r.root, &["rev-parse", "HEAD"]);
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["remote", "add", "origin", url]);
    let mut fetch: Vec<String> = Vec::new();
    for c in config {
        fetch.push("-c".into());
        fetch.push(c.clone());
    }
    fetch.extend(super::workflow_checkout::CHECKOUT_FETCH.map(str::to_string));
    fetch.extend(["--depth=1".to_string(), "origin".to_string()]);
    fetch.push(format!("+{head}:refs/remotes/origin/main"));
    let args: Vec<&str> = fetch.iter().map(String::as_str).collect();
    git(&root, &args);
    git(
        &root,
        &[
            "checkout",
            "-q",
            "--force",
            "-B",
            "main",
            "refs/remotes/origin/main",
        ],
    );
    assert_eq!(
        git(&root, &["rev-list", "--count", "HEAD"]),
        "1",
        "one commit"
    );
    let store = r.root.join(".tier1/store");
    if store.is_dir() {
        copy_tree(&store, &root.join(".tier1/store"));
    }
    Repo { _tmp: tmp, root }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

pub struct Out {
    pub code: i32,
    pub json: Value,
    pub stderr: String,
}

pub fn nightly(r: &Repo, speedup: f64, extra: &[&str]) -> Out {
    nightly_with(r, &[("TIER1_FAKE_SPEEDUP", speedup.to_string())], extra)
}

/// Run `tier1-nightly` with the fixture target's knobs (`TIER1_FAKE_BASELINE_MS`,
/// `TIER1_FAKE_SPEEDUP`) set as given.
pub fn nightly_with(r: &Repo, knobs: &[(&str, String)], extra: &[&str]) -> Out {
    let out = nightly_cmd(r, knobs, extra)
        .output()
        .expect("tier1-nightly runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `tier1-nightly` command of [`nightly_with`], not started (to spawn and kill it).
pub fn nightly_cmd(r: &Repo, knobs: &[(&str, String)], extra: &[&str]) -> std::process::Command {
    let mut cmd = command::scrubbed(command::bin("tier1-nightly"));
    for (k, v) in knobs {
        cmd.env(k, v);
    }
    cmd.current_dir(&r.root)
        .args([
            "--store",
            ".tier1/store",
            "--suite-config",
            "suite.yaml",
            "--profile",
            "smoke",
        ])
        .args(["--history-out", ".tier1/history"])
        .args(extra);
    cmd
}

/// A copy of the tree `from` at `to` (replacing what was there).
pub fn replace_tree(from: &Path, to: &Path) {
    if to.exists() {
        std::fs::remove_dir_all(to).unwrap();
    }
    copy_tree(from, to);
}
