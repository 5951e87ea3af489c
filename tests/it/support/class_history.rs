//! A runner class's history as the next night restores it (docs/sharding.md): the real
//! `tier1-restore --runner-class` against a scenario's store, the index with each row's summary
//! attached (`summaries`), for assertions.
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;

fn read(root: &Path, rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root.join(rel)).unwrap()).unwrap()
}

/// The history of `class` in the local store `store_dir` (repository `repository`), of the runs of
/// `workflow` and the artifacts of `prefix`; None when restore reports bootstrap.
pub fn restored(
    store_dir: &Path,
    repository: &str,
    (workflow, prefix, class): (&str, &str, &str),
) -> Option<Value> {
    let t = tempfile::tempdir().unwrap();
    let dest = t.path().join("h");
    let out = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
        .args(["--workflow", workflow, "--artifact-prefix", prefix])
        .args(["--runner-class", class])
        .arg("--store")
        .arg(format!("local:{}", store_dir.display()))
        .args([
            "--repository",
            repository,
            "--branch",
            "main",
            "--allow-bootstrap",
        ])
        .arg("--destination")
        .arg(&dest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "restore {class}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    if status["status"] == "bootstrap" {
        return None;
    }
    let mut idx = read(&dest, "index.json");
    let summaries: Vec<Value> = idx["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| read(&dest, row["summary_path"].as_str().unwrap()))
        .collect();
    idx["summaries"] = Value::from(summaries);
    Some(idx)
}
