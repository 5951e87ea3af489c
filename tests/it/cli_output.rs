//! Writing to stdout or stderr never panics a binary: a full stdout (`/dev/full`) or a closed one
//! turns a completed run's exit into the write's own code (12 for a full disk, 10 otherwise), after
//! the work; an unwritable stderr drops the log and error lines and keeps the documented exit
//! code. Never 101 (a Rust panic).

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{Repo, nightly, repo};
use std::fs::File;
use std::process::{Command, Stdio};

fn full() -> File {
    File::options().write(true).open("/dev/full").unwrap()
}

fn in_repo(r: &Repo, bin: &str) -> Command {
    let mut c = command::scrubbed(command::bin(bin));
    c.current_dir(&r.root).env("TIER1_FAKE_SPEEDUP", "2");
    c
}

fn nightly_cmd(r: &Repo) -> Command {
    let mut c = in_repo(r, "tier1-nightly");
    c.args(["--store", ".tier1/store", "--suite-config", "suite.yaml"])
        .args(["--profile", "smoke"]);
    c
}

fn restore_cmd(r: &Repo, dest: &str) -> Command {
    let mut c = in_repo(r, "tier1-restore");
    c.args(["--store", "local:.tier1/store", "--branch", "main"])
        .args(["--destination", dest]);
    c
}

#[test]
fn a_full_or_closed_stdout_is_an_exit_code_after_the_work_never_a_panic() {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let history = r.root.join(".tier1/store/artifacts");
    let before = std::fs::read_dir(&history).unwrap().count();
    let out = nightly_cmd(&r).stdout(full()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(exit_code(Exit::DiskFull)), "{err}");
    assert!(
        err.contains("could not write the JSON result to stdout"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&history).unwrap().count(),
        before + 3,
        "the night was published before stdout failed"
    );
    let out = restore_cmd(&r, "restored-full")
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::DiskFull)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        r.root.join("restored-full/index.json").is_file(),
        "restored before stdout failed"
    );
    let dash = in_repo(&r, "tier1-dashboard")
        .args(["--history-root", "restored-full", "--output", "dash"])
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(
        dash.status.code(),
        Some(exit_code(Exit::DiskFull)),
        "{}",
        String::from_utf8_lossy(&dash.stderr)
    );
    assert!(r.root.join("dash/index.html").is_file());
    // A closed stdout (the reader went away): the write fails with EPIPE, exit 10.
    let mut child = restore_cmd(&r, "restored-closed")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Io)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(r.root.join("restored-closed/index.json").is_file());
}

#[test]
fn an_unwritable_stderr_keeps_every_binary_s_exit_code() {
    let r = repo();
    // Success: the logs are dropped, the JSON is written, exit 0.
    let out = nightly_cmd(&r).stderr(full()).output().unwrap();
    assert_eq!(out.status.code(), Some(exit_code(Exit::Ok)));
    assert!(!out.stdout.is_empty());
    // Failure: the error line is dropped, the documented code stays.
    let cases: [(&str, &[&str], i32); 10] = [
        (
            "tier1-restore",
            &[
                "--store",
                "local:/nonexistent/store",
                "--branch",
                "main",
                "--destination",
                "d",
            ],
            exit_code(Exit::Unavailable),
        ),
        (
            "tier1-nightly",
            &["--store", ".tier1/store", "--note", "x"],
            exit_code(Exit::Invalid),
        ),
        (
            "tier1-run",
            &["--suite-config", "/nonexistent/suite.yaml"],
            exit_code(Exit::Io),
        ),
        (
            "tier1-publish",
            &[
                "--candidate-history-root",
                "c",
                "--canonical-history-root",
                "l",
                "--output-history-root",
                "o",
                "--run-id",
                "bad id",
                "--suite-config",
                "suite.yaml",
            ],
            exit_code(Exit::Invalid),
        ),
        (
            "tier1-promote",
            &[
                "--history-root",
                "h",
                "--evidence-root",
                "e",
                "--run-id",
                "r1",
                "--requester",
                "a",
                "--note",
                "n",
                "--workflow-run",
                "x",
                "--expected-git-commit",
                "c",
                "--expected-evidence-artifact",
                "a",
                "--expected-evidence-digest",
                "d",
                "--output-history-root",
                "o",
                "--suite-config",
                "suite.yaml",
            ],
            exit_code(Exit::Invalid),
        ),
        (
            "tier1-dashboard",
            &["--history-root", "/nonexistent", "--output", "suite.yaml"],
            exit_code(Exit::Conflict),
        ),
        (
            "tier1-evidence",
            &[
                "pack",
                "--run-id",
                "nope",
                "--evidence-root",
                "/nonexistent",
                "--output",
                "x.zip",
            ],
            exit_code(Exit::Io),
        ),
        (
            "tier1-attest",
            &[
                "--jobs-json",
                "/nonexistent/jobs.json",
                "--runner-version",
                "2.330.0",
            ],
            exit_code(Exit::Io),
        ),
        (
            "tier1-preflight",
            &["--inventory-json", "/nonexistent/gpus.json"],
            exit_code(Exit::Io),
        ),
        (
            "tier1-compare",
            &[
                "run",
                "--repository",
                "o/r",
                "--branch",
                "main",
                "--store",
                "local:/nonexistent",
                "--suite-config",
                "suite.yaml",
            ],
            exit_code(Exit::Unavailable),
        ),
    ];
    for (bin, args, want) in cases {
        let out = in_repo(&r, bin).args(args).stderr(full()).output().unwrap();
        let code = out.status.code();
        assert_ne!(code, Some(101), "{bin} panicked");
        assert_eq!(code, Some(want), "{bin} {args:?}");
    }
}
