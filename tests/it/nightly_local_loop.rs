//! The local loop a newcomer meets (`tier1-nightly` against a local store): the automatic
//! bootstrap applies until a history is published (a failed first run does not block it), the
//! runbook's bootstrap command works as written, the requester is never chosen silently, and
//! SIGTERM leaves the store consistent: the run recorded as cancelled, no work directory, the
//! target's process group gone.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use nightly_repo::{Repo, git, nightly_with, repo};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn store_state(r: &Repo) -> Value {
    serde_json::from_slice(&std::fs::read(r.root.join(".tier1/store/store.json")).unwrap()).unwrap()
}

fn work_dirs(store: &Path) -> Vec<String> {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".work-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_failed_first_run_does_not_block_the_automatic_bootstrap() {
    let r = repo();
    // A speedup of 0 makes the fixture target divide by zero: every target fails.
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "0".into())], &[]);
    assert_ne!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], true);
    assert!(
        !o.stderr.contains("B200") && !o.stderr.contains("dispatch"),
        "a GitHub-only message for a local store: {}",
        o.stderr
    );
    // Nothing was published, so the next run bootstraps again, automatically.
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "2".into())], &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], true);
    assert_eq!(o.json["restore"]["status"], "bootstrap");
    // Once a history is published, a failing run is compared, not bootstrapped.
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "0".into())], &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], false);
}

#[test]
fn without_a_published_history_and_no_auto_bootstrap_the_message_fits_the_local_store() {
    let r = repo();
    let o = nightly_with(&r, &[], &["--no-auto-bootstrap"]);
    assert_eq!(
        o.code,
        exit_code(Exit::Unavailable),
        "{}\n{}",
        o.json,
        o.stderr
    );
    assert!(
        o.stderr.contains("local store") && o.stderr.contains("tier1-nightly --store"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("B200"), "{}", o.stderr);
}

/// The arguments after `--` of the runbook's local bootstrap command, split as a shell would
/// (double quotes only).
fn runbook_bootstrap_args() -> Vec<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/runbook.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.contains("--bin tier1-nightly --") && l.contains("--bootstrap"))
        .expect("docs/runbook.md gives a local bootstrap command");
    let command = line
        .split('`')
        .find(|part| part.contains("--bootstrap"))
        .unwrap();
    let rest = command.split_once(" -- ").unwrap().1;
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in rest.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    args.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        args.push(cur);
    }
    args
}

#[test]
fn the_runbook_s_local_bootstrap_command_works_as_written() {
    let r = repo();
    // The checkout keeps its suite where discovery finds it, so the command needs no options.
    std::fs::create_dir_all(r.root.join("configs/benchmark_suites")).unwrap();
    git(
        &r.root,
        &["mv", "suite.yaml", "configs/benchmark_suites/fixture.yaml"],
    );
    git(
        &r.root,
        &["commit", "-q", "-m", "suite where discovery finds it"],
    );
    let args = runbook_bootstrap_args();
    let o = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(&r.root)
        .args(&args)
        .env("TIER1_FAKE_SPEEDUP", "2")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SHA")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{args:?}: {err}"
    );
    let json: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["bootstrap"], true);
    assert_eq!(json["accept"], true);
}

#[test]
fn the_requester_is_recorded_as_given_and_never_chosen_silently() {
    let r = repo();
    let o = nightly_with(&r, &[], &["--requester", "bob"]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["requester"], "bob");
    let index: Value =
        serde_json::from_slice(&std::fs::read(r.root.join(".tier1/history/index.json")).unwrap())
            .unwrap();
    assert_eq!(index["runs"][0]["baseline_acceptance_actor"], "bob");
    // A requester where nothing is accepted is refused, not ignored.
    let o = nightly_with(&r, &[], &["--requester", "carol"]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert!(o.stderr.contains("--requester"), "{}", o.stderr);
}

#[test]
fn sigterm_records_the_run_as_cancelled_and_leaves_no_work_directory() {
    let r = repo();
    let pidfile = r.root.parent().unwrap().join("child.pid");
    std::fs::write(
        r.root.join("suite.yaml"),
        std::fs::read_to_string(r.root.join("suite.yaml"))
            .unwrap()
            .replacen(
                "command: [python3, fixed_target.py]",
                &format!(
                    "command: [sh, -c, 'sleep 120 & echo $! > {}; wait']",
                    pidfile.display()
                ),
                1,
            ),
    )
    .unwrap();
    git(&r.root, &["commit", "-q", "-am", "a target that hangs"]);
    let child = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(&r.root)
        .args(["--store", ".tier1/store", "--suite-config", "suite.yaml"])
        .args(["--profile", "smoke"])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SHA")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The shell creates the file before it writes the pid (`>` opens, then `echo` writes): wait
    // for a whole number, not for the file (CI read it empty once).
    let started = Instant::now();
    let target_child: u32 = loop {
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if let Ok(pid) = text.trim().parse()
            && text.ends_with('\n')
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the target never wrote its pid to {}: {text:?}",
            pidfile.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(exit_code(Exit::Cancelled)), "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["conclusion"], "cancelled", "{json}");
    let state = store_state(&r);
    let runs = state["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[0]["conclusion"], "cancelled");
    assert!(work_dirs(&r.root.join(".tier1/store")).is_empty());
    // SIGKILL to the group is delivered asynchronously: on a loaded machine the grandchild may
    // still be scheduled for a moment after tier1-nightly exits, never for seconds.
    let gone = || {
        let stat =
            std::fs::read_to_string(format!("/proc/{target_child}/stat")).unwrap_or_default();
        let state_char = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("X")
            .to_string();
        matches!(state_char.as_str(), "Z" | "X")
    };
    let since = Instant::now();
    while !gone() && since.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone(), "the target's child {target_child} is still running");
}
