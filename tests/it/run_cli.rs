//! `tier1-run` end to end in a throwaway checkout with the deterministic command suite: the clean
//! tree is checked before anything runs (and names the files), tier1's own output folders and a
//! Python target's byte code never make the checkout dirty, and a run says why it failed.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use nightly_repo::{Repo, git, repo};
use serde_json::Value;
use std::process::Output;

fn tier1_run(r: &Repo, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-run"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.current_dir(&r.root)
        .args(["--suite-config", "suite.yaml", "--profile", "smoke"])
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SHA")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("TIER1_EVIDENCE_ARTIFACT_NAME")
        .env_remove("RUN_ID")
        // As on a machine that has not set it: Python writes byte code next to what it imports.
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .output()
        .expect("tier1-run runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stderr(o)))
}

fn summary(r: &Repo, history: &str, run_id: &str) -> Value {
    let p = r.root.join(history).join(run_id).join("summary.json");
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
}

#[test]
fn a_dirty_checkout_is_refused_before_the_suite_runs_and_the_files_are_named() {
    let r = repo();
    std::fs::write(r.root.join("notes.txt"), "scratch\n").unwrap();
    std::fs::write(r.root.join("fixed_target.py"), "# edited\n").unwrap();
    let marker = r.root.parent().unwrap().join("target-ran");
    let o = tier1_run(
        &r,
        &["--run-id", "dirty_run"],
        &[("TIER1_FAKE_SLOW_ONCE", marker.to_str().unwrap())],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
    assert!(
        err.contains("notes.txt") && err.contains("fixed_target.py"),
        "the dirty files are named: {err}"
    );
    assert!(err.contains(".gitignore"), "it says what to do: {err}");
    assert!(o.stdout.is_empty());
    assert!(!marker.exists(), "no target ran");
    assert!(!r.root.join("artifacts").exists(), "nothing written");
}

#[test]
fn tier1_s_own_output_folders_anywhere_in_the_checkout_are_exempt() {
    let r = repo();
    // Left over from an earlier run: the default evidence root, untracked.
    std::fs::create_dir_all(r.root.join("artifacts/runs/earlier")).unwrap();
    std::fs::write(r.root.join("artifacts/runs/earlier/manifest.json"), "{}").unwrap();
    let history = r.root.join("out/history");
    let o = tier1_run(
        &r,
        &[
            "--run-id",
            "first",
            "--history-root",
            history.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(
        summary(&r, "out/history", "first")["source_git_dirty"],
        false
    );
    // The second run sees both output folders of the first as untracked files.
    let o = tier1_run(
        &r,
        &["--run-id", "second", "--history-root", "out/history"],
        &[],
    );
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(
        summary(&r, "out/history", "second")["source_git_dirty"],
        false
    );
}

#[test]
fn a_python_target_leaves_no_byte_code_in_the_checkout() {
    let r = repo();
    std::fs::write(
        r.root.join("helper.py"),
        "SPEEDUP_NOTE = 'imported by the target'\n",
    )
    .unwrap();
    let target = std::fs::read_to_string(r.root.join("fixed_target.py")).unwrap();
    std::fs::write(
        r.root.join("fixed_target.py"),
        target.replacen(
            "import json\n",
            "import json\nimport helper  # noqa: F401\n",
            1,
        ),
    )
    .unwrap();
    git(&r.root, &["add", "."]);
    git(
        &r.root,
        &["commit", "-q", "-m", "a target that imports a module"],
    );
    let o = tier1_run(&r, &["--run-id", "bytecode"], &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert!(
        !r.root.join("__pycache__").exists(),
        "the target wrote byte code into the checkout"
    );
    let status = git(&r.root, &["status", "--porcelain", "--untracked-files=all"]);
    let stray: Vec<&str> = status
        .lines()
        .filter(|l| !l.contains("artifacts/"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    let _ = json(&o);
}

#[test]
fn a_failed_target_says_why_in_the_json_and_on_stderr() {
    let r = repo();
    // A speedup of 0 makes the fixture target divide by zero.
    let o = tier1_run(&r, &["--run-id", "failing"], &[("TIER1_FAKE_SPEEDUP", "0")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Gate)), "{err}");
    let j = json(&o);
    let failures = j["failures"].as_array().expect("failures in the JSON");
    assert_eq!(failures.len(), 2, "{j}");
    assert_eq!(failures[0]["key"], "fixed_a");
    assert_eq!(failures[0]["status"], "failed_error");
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .contains("exited with"),
        "{j}"
    );
    assert!(
        err.contains("fixed_a") && err.contains("failed_error") && err.contains("exited with"),
        "each failure is logged: {err}"
    );
    assert!(
        err.contains("tier1-run: gate failed:"),
        "the gate failure is said on stderr: {err}"
    );
}

#[test]
fn a_passing_run_lists_no_failures_and_prints_no_gate_message() {
    let r = repo();
    let o = tier1_run(&r, &["--run-id", "passing"], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{err}");
    assert_eq!(json(&o)["failures"], serde_json::json!([]));
    assert!(!err.contains("gate failed"), "{err}");
}
