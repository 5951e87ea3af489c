//! The workflow harness's own tests (tests/workflows/test, `node --test`): file commands, status
//! functions and coercion, concurrency queues, parsing every workflow and action.yml, the step
//! runner and the refusal of actions without an adapter. Skips as the scenarios do.

use crate::support::fake_github;
use crate::support::workflow_adapters;
use crate::support::workflow_harness;

use std::process::Command;

#[test]
fn the_node_harness_passes_its_own_tests() {
    if !workflow_harness::ready_or_skip("the_node_harness_passes_its_own_tests") {
        return;
    }
    let out = Command::new("node")
        .current_dir(workflow_harness::node_dir())
        .args(["--import", "./harness/register.mjs", "--test", "test/"])
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("# fail 0"), "{text}");
    assert!(!text.contains("# pass 0\n"), "no test ran: {text}");
}

/// The artifact adapters: names, ids and digests as the actions give them; refusals by name.
#[test]
fn the_artifact_adapters_behave_as_the_actions_and_refuse_what_they_do_not_emulate() {
    use serde_json::json;
    use sha2::{Digest, Sha256};
    let store = tempfile::tempdir().unwrap();
    tier1::store::local::LocalStore::create(store.path(), "o/r").unwrap();
    let fake = fake_github::FakeGithub::start(store.path(), "t");
    let ws = tempfile::tempdir().unwrap();
    let adapters = workflow_adapters::Adapters::new(ws.path());
    let call = |path: &str, body: serde_json::Value| adapters.handle(&fake, path, &body);
    let run = call(
        "runs",
        json!({"workflow_path": ".github/workflows/w.yml", "head_branch": "main",
               "head_sha": "a".repeat(40), "event": "schedule"}),
    )
    .unwrap()["id"]
        .as_u64()
        .unwrap();
    std::fs::write(ws.path().join("evidence-1-1"), b"packed bytes").unwrap();
    std::fs::create_dir_all(ws.path().join("dir/sub")).unwrap();
    std::fs::write(ws.path().join("dir/sub/a.json"), b"{}").unwrap();
    let ws_str = ws.path().to_str().unwrap();
    let upload = |with: serde_json::Value| {
        call(
            "actions/upload-artifact",
            json!({"run_id": run, "workspace": ws_str, "with": with}),
        )
    };

    // archive: false: the artifact is the file, named after it; the digest output is bare hex.
    let raw =
        upload(json!({"path": "evidence-1-1", "archive": "false", "if-no-files-found": "error"}))
            .unwrap();
    let hex = format!("{:x}", Sha256::digest(b"packed bytes"));
    assert_eq!(raw["outputs"]["artifact-digest"], hex.as_str());
    let raw_id = raw["outputs"]["artifact-id"].as_str().unwrap().to_string();
    let zipped = upload(json!({"name": "hist", "path": "dir", "retention-days": "90"})).unwrap();
    let zip_id = zipped["outputs"]["artifact-id"]
        .as_str()
        .unwrap()
        .to_string();
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.path().join("store.json")).unwrap()).unwrap();
    let names: Vec<&str> = state["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["evidence-1-1", "hist"]);

    // download: one artifact into path itself; a raw file keeps its name, a zip is extracted.
    let download = |with: serde_json::Value| {
        call(
            "actions/download-artifact",
            json!({"run_id": run, "workspace": ws_str, "with": with}),
        )
    };
    download(json!({"artifact-ids": raw_id, "path": "got-raw"})).unwrap();
    assert_eq!(
        std::fs::read(ws.path().join("got-raw/evidence-1-1")).unwrap(),
        b"packed bytes"
    );
    download(json!({"name": "hist", "path": "got-zip"})).unwrap();
    assert_eq!(
        std::fs::read(ws.path().join("got-zip/sub/a.json")).unwrap(),
        b"{}"
    );
    download(json!({"artifact-ids": format!("{raw_id}, {zip_id}"), "path": "both"})).unwrap();
    assert!(ws.path().join("both/hist/sub/a.json").is_file());
    assert!(ws.path().join("both/evidence-1-1/evidence-1-1").is_file());

    let refusals = [
        (
            upload(json!({"path": "dir", "compression-level": "9"})),
            "input 'compression-level' is not emulated",
        ),
        (
            upload(json!({"path": "missing", "if-no-files-found": "error"})),
            "No files were found with the provided path",
        ),
        (
            upload(json!({"path": "dir/*"})),
            "only one path without globs",
        ),
        (
            upload(json!({"name": "hist", "path": "dir"})),
            "(409) Conflict: an artifact with this name already exists on the workflow run",
        ),
        (
            download(json!({"artifact-ids": "999", "path": "x"})),
            "None of the provided artifact IDs were found",
        ),
        (
            download(json!({"artifact-ids": "x1", "path": "x"})),
            "Invalid artifact ID: 'x1'",
        ),
        (
            call(
                "actions/checkout",
                json!({"workspace": ws_str, "sha": "a", "with": {"persist-credentials": "true"}}),
            ),
            "persist-credentials must be false",
        ),
        (call("actions/setup-node", json!({})), "no harness endpoint"),
    ];
    for (result, message) in refusals {
        let err = result.expect_err(message);
        assert!(err.contains(message), "{message} not in {err}");
    }
    // A missing path without if-no-files-found: error uploads nothing and succeeds (warn).
    let none = upload(json!({"path": "missing"})).unwrap();
    assert_eq!(none["outputs"], json!({}));
}
