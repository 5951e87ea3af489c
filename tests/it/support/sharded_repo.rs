//! A throwaway checkout for sharded nights and runner classes (docs/sharding.md): the nightly
//! fixture suite with a third deterministic target, two CPU runner classes (`alpha`, `beta`, the
//! `smoke` profile) and the real binaries run against a local store inside it.
#![allow(dead_code)]

use super::command;
use super::nightly_repo::git;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
}

/// The suite: the nightly fixture suite, a third target and two runner classes.
fn suite() -> String {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nightly/suite.yaml");
    let base = std::fs::read_to_string(fx).unwrap();
    format!(
        "{base}  - key: fixed_c\n    category: norm\n    target: fixtures/fixed:fixed_c\n    rationale: Fixed samples chosen by the test.\n    optimization_goal: speed\n    tolerance: {{ rtol: 1.0e-3, atol: 1.0e-3 }}\n    kind: command\n    command: [python3, fixed_target.py]\nrunner_classes:\n  alpha:\n    labels: [self-hosted, alpha]\n    profile: smoke\n  beta:\n    labels: [self-hosted, beta]\n    profile: smoke\n    shards: 2\n"
    )
}

pub fn repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    std::fs::create_dir_all(&root).unwrap();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nightly");
    std::fs::copy(fx.join("fixed_target.py"), root.join("fixed_target.py")).unwrap();
    std::fs::write(root.join("suite.yaml"), suite()).unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\nwork/\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "fixture"]);
    Repo { _tmp: tmp, root }
}

pub struct Out {
    pub code: i32,
    pub json: Value,
    pub stderr: String,
}

fn out(o: std::process::Output) -> Out {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    Out {
        code: o.status.code().unwrap_or(-1),
        json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A tier1 binary in the checkout, scrubbed environment, `env` set.
pub fn tool(r: &Repo, name: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = command::scrubbed(command::bin(name));
    cmd.current_dir(&r.root);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// `tier1-nightly` on the local store `.tier1/store` with the suite and the `smoke` profile.
pub fn nightly(r: &Repo, env: &[(&str, &str)], extra: &[&str]) -> Out {
    out(tool(r, "tier1-nightly", env)
        .args(["--store", ".tier1/store", "--suite-config", "suite.yaml"])
        .args(extra)
        .output()
        .expect("tier1-nightly runs"))
}

/// Run `cmd`, returning its code, JSON and stderr.
pub fn run(cmd: &mut Command) -> Out {
    out(cmd.output().expect("the binary runs"))
}

/// The local store.
pub fn store(r: &Repo) -> tier1::store::local::LocalStore {
    tier1::store::local::LocalStore::open(&r.root.join(".tier1/store")).expect("store")
}

/// The names of the store's artifacts.
pub fn artifact_names(r: &Repo) -> Vec<String> {
    store(r)
        .load()
        .unwrap()
        .artifacts
        .iter()
        .map(|a| a.name.clone())
        .collect()
}

/// Restore the history of `class` (None: the unnamed class) from the store into `dest` with the
/// real `tier1-restore`; returns its outcome.
pub fn restore(r: &Repo, class: Option<&str>, dest: &Path) -> Out {
    let mut cmd = tool(r, "tier1-restore", &[]);
    cmd.args([
        "--store",
        "local:.tier1/store",
        "--workflow",
        "tier1-nightly.yml",
        "--branch",
        "main",
        "--allow-bootstrap",
    ])
    .arg("--destination")
    .arg(dest);
    if let Some(c) = class {
        cmd.args(["--runner-class", c]);
    }
    run(&mut cmd)
}

/// `index.json` of a history root.
pub fn index(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).unwrap()).unwrap()
}

/// The summary of `run_id` in a history root.
pub fn summary(root: &Path, run_id: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root.join(run_id).join("summary.json")).unwrap()).unwrap()
}

/// Every file under `dir` with its bytes (to prove a refusal changed nothing).
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    if !dir.exists() {
        return out;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
