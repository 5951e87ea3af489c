//! Helpers of the hostile-operator tests of `tier1-nightly`: byte snapshots of trees (to show a
//! refusal left every byte alone), store copies (to start every injected fault from the same
//! state), the store's runs, and `tier1-nightly` runs with `TIER1_FAULT` (docs/fault-injection.md).
#![allow(dead_code)]

use super::command;
use super::nightly_repo::{Out, Repo};
use crate::support::exit_code::{Exit, exit_code};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every entry under `root` (relative path → a description: a file's bytes, a link's target, or
/// `dir`), to compare before and after.
pub fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let ty = e.file_type().unwrap();
            if ty.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("link {}", target.display()).into_bytes());
            } else if ty.is_dir() {
                out.insert(rel, b"dir".to_vec());
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Copy the tree `src` to `dst` (which must not exist); symbolic links are copied as links.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        let ty = e.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &to).unwrap();
        } else if ty.is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// The store's `store.json`.
pub fn store_state(store: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(store.join("store.json")).unwrap()).unwrap()
}

/// Runs of the store as `(id, status, conclusion)`.
pub fn runs(store: &Path) -> Vec<(u64, String, String)> {
    store_state(store)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_u64().unwrap(),
                r["status"].as_str().unwrap().to_string(),
                r["conclusion"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Names of the store's artifacts, in upload order.
pub fn artifact_names(store: &Path) -> Vec<String> {
    store_state(store)["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

/// `tier1-nightly` in `r` against `store` with the fixture suite (unless `extra` names another
/// `--suite-config`) and `smoke` profile, `envs` set (for example `TIER1_FAULT`), and `extra`
/// arguments.
pub fn nightly_at(r: &Repo, store: &Path, envs: &[(&str, String)], extra: &[&str]) -> Out {
    let mut cmd = command::scrubbed(command::bin("tier1-nightly"));
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.env("TIER1_FAKE_SPEEDUP", "2");
    if !extra.contains(&"--suite-config") {
        cmd.args(["--suite-config", "suite.yaml"]);
    }
    let out = cmd
        .current_dir(&r.root)
        .arg("--store")
        .arg(store)
        .args(["--profile", "smoke"])
        .args(extra)
        .output()
        .expect("tier1-nightly runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The points a normal night reaches, in order, as `(point, path)` (a `TIER1_FAULT=count:` run
/// against a copy of `store`, so `store` itself is unchanged).
pub fn count_points(r: &Repo, store: &Path, extra: &[&str]) -> Vec<(String, String)> {
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("store");
    copy_dir(store, &copy);
    let file = scratch.path().join("points.txt");
    let o = nightly_at(
        r,
        &copy,
        &[("TIER1_FAULT", format!("count:{}", file.display()))],
        extra,
    );
    assert_eq!(
        o.code,
        exit_code(Exit::Ok),
        "counting run: {}\n{}",
        o.json,
        o.stderr
    );
    std::fs::read_to_string(&file)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (p, path) = l.split_once(' ').unwrap();
            (p.to_string(), path.to_string())
        })
        .collect()
}

/// A scratch directory with a copy of `store` in it.
pub fn fresh_copy(store: &Path) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let copy = t.path().join("store");
    copy_dir(store, &copy);
    (t, copy)
}

/// Panic, naming the entries that differ (never their bytes), unless `root` still matches
/// `before` (a [`snapshot`]).
pub fn assert_unchanged(before: &BTreeMap<String, Vec<u8>>, root: &Path, what: &str) {
    let after = snapshot(root);
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(
        changed.is_empty(),
        "{what}: changed under {}: {changed:?}",
        root.display()
    );
}
