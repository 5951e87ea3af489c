//! Signals and hostile targets against `tier1-nightly`: SIGTERM or SIGINT while a job is queued on
//! the producer lock records its run as cancelled (exit 11, never an I/O error, never a run left in
//! progress) and the job holding the lock is not disturbed; a target whose escaped process holds
//! its stdout cannot hang the night, even through SIGTERM; a target reporting absurd numbers fails
//! alone, with the field named, and the night is still published.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::faults::runs;
use crate::support::nightly_repo::{Repo, git, nightly_with, repo};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A checkout whose store holds one published night (the fixture suite unchanged).
fn published() -> Repo {
    let r = repo();
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "2".into())], &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    r
}

/// Replace the first target's command in the checkout's suite and commit it.
fn with_first_command(r: &Repo, command: &str) {
    let suite = std::fs::read_to_string(r.root.join("suite.yaml")).unwrap();
    let changed = suite.replacen("command: [python3, fixed_target.py]", command, 1);
    assert_ne!(suite, changed);
    std::fs::write(r.root.join("suite.yaml"), changed).unwrap();
    git(&r.root, &["commit", "-q", "-am", "a hostile target"]);
}

fn start(r: &Repo) -> Child {
    command::scrubbed(command::bin("tier1-nightly"))
        .current_dir(&r.root)
        .args(["--store", ".tier1/store", "--suite-config", "suite.yaml"])
        .args(["--profile", "smoke"])
        .env("TIER1_FAKE_SPEEDUP", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what} did not happen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_while_queued_on_the_producer_lock_records_the_run_as_cancelled() {
    let r = published();
    with_first_command(
        &r,
        "command: [sh, -c, 'sleep 4; exec python3 fixed_target.py']",
    );
    let store = r.root.join(".tier1/store");
    for sig in ["-TERM", "-INT"] {
        let before = runs(&store).len();
        let holder = start(&r);
        wait_until("the holder's run", Duration::from_secs(30), || {
            runs(&store).len() > before
        });
        std::thread::sleep(Duration::from_millis(300));
        let queued = start(&r);
        wait_until("the queued run", Duration::from_secs(30), || {
            runs(&store).len() > before + 1
        });
        std::thread::sleep(Duration::from_millis(500));
        let sent = Instant::now();
        signal(&queued, sig);
        let out = queued.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(exit_code(Exit::Cancelled)),
            "{sig}: {err}"
        );
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "{sig}: slow to stop"
        );
        assert!(err.contains("queued"), "{sig}: {err}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["conclusion"], "cancelled", "{sig}: {json}");
        let out = holder.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(exit_code(Exit::Ok)),
            "{sig}: the holder: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let all = runs(&store);
        assert!(
            all.iter().all(|(_, s, _)| s == "completed"),
            "{sig}: {all:?}"
        );
        assert_eq!(all[before + 1].2, "cancelled", "{sig}: {all:?}");
    }
}

#[test]
fn an_escaped_process_holding_stdout_cannot_hang_the_night_even_through_sigterm() {
    let r = published();
    let pidfile = r.root.parent().unwrap().join("escaped.pid");
    with_first_command(
        &r,
        &format!(
            "command: [sh, -c, 'setsid sh -c \"echo $$ > {p}; exec sleep 120\" & while [ ! -s {p} ]; do sleep 0.01; done; exec python3 fixed_target.py']",
            p = pidfile.display()
        ),
    );
    let kill_escaped = || {
        if let Ok(pid) = std::fs::read_to_string(&pidfile) {
            let _ = Command::new("kill").arg(pid.trim()).status();
            let _ = std::fs::remove_file(&pidfile);
        }
    };
    // Left alone, the night ends: the target fails, the other one runs, the night is published.
    let started = Instant::now();
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "2".into())], &[]);
    kill_escaped();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert!(o.stderr.contains("stdout was still open"), "{}", o.stderr);
    // SIGTERM while it runs ends it at once, recorded as cancelled.
    let child = start(&r);
    wait_until("the escaped process", Duration::from_secs(60), || {
        pidfile.exists()
    });
    signal(&child, "-TERM");
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    kill_escaped();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Cancelled)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    let all = runs(&r.root.join(".tier1/store"));
    assert_eq!(all.last().unwrap().2, "cancelled", "{all:?}");
}

#[test]
fn a_target_with_absurd_numbers_fails_alone_and_the_night_is_published() {
    let r = published();
    with_first_command(
        &r,
        "command: [python3, -c, 'import json,sys; sig={\"seed\":42,\"inputs\":[]}; print(json.dumps({\"schema\":\"tier1.command_result.v1\",\"variants\":[{\"name\":\"baseline\",\"samples_ms\":[1e308]*6,\"input_signature\":sig}]}))']",
    );
    let o = nightly_with(&r, &[("TIER1_FAKE_SPEEDUP", "2".into())], &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert!(
        o.stderr.contains("fixed_a") && o.stderr.contains("samples_ms[0]"),
        "{}",
        o.stderr
    );
    let failures = o.json["run"]["failures"].as_array().unwrap();
    assert_eq!(
        failures.len(),
        1,
        "only the hostile target failed: {failures:?}"
    );
    assert!(
        o.json["history_artifact"].is_string(),
        "published: {}",
        o.json
    );
}
