//! A change of a target's measurement settings (here the repetitions of an imported Google
//! Benchmark command, docs/suite.md "What forces a new anchor") is not a regression: the night
//! says which setting changed, from what to what, and asks for a new anchor; an accepted run then
//! becomes that anchor and the next night is compared with it. And an accepted run that promotion
//! must not ratify (a target only side by side decided) is refused before it is published, not
//! published and then refused by every later restore. The tool is a stand-in
//! (tests/fixtures/settings/fake_gbench.py) whose times move with its repetition count and a
//! committed factor, so that the changes are visible and the test deterministic.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;

use serde_json::Value;
use std::path::Path;

fn suite(repetitions: u32) -> String {
    format!(
        "suite_name: settings\nversion: 1\ndefault_profile: cpu\nprofiles:\n  cpu:\n    backend: cpu\n    warmup: 5\n    iterations: 6\n    budget_s: 5\n    precision_pct: 1000\n    timeout_s: 120\ntargets:\n  - key: primes\n    category: bench\n    target: bench:primes\n    optimization_goal: speed\n    tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    kind: command\n    format: google-benchmark\n    command: [python3, bench/fake_gbench.py, --benchmark_format=json, --benchmark_repetitions={repetitions}]\n    variants: {{ baseline: BM_Base, optimized: [BM_Fast] }}\n"
    )
}

struct Night {
    code: i32,
    json: Value,
    stderr: String,
}

fn night(root: &Path, extra: &[&str]) -> Night {
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(root)
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .args(extra)
        .output()
        .expect("tier1-nightly runs");
    Night {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The night exited 0 (else its JSON and log are shown).
fn passed(n: &Night) {
    assert_eq!(n.code, exit_code(Exit::Ok), "{}\n{}", n.json, n.stderr);
}

fn commit_suite(root: &Path, repetitions: u32) {
    std::fs::write(
        root.join("configs/benchmark_suites/settings.yaml"),
        suite(repetitions),
    )
    .unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "the suite"]);
}

/// A repository with the stand-in tool at 30 repetitions, committed, and its bootstrap night.
fn bootstrapped(root: &Path) -> Night {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings");
    std::fs::create_dir_all(root.join("bench")).unwrap();
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    std::fs::copy(
        fixture.join("fake_gbench.py"),
        root.join("bench/fake_gbench.py"),
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    commit_suite(root, 30);
    let first = night(root, &[]);
    passed(&first);
    assert_eq!(first.json["bootstrap"], true);
    first
}

#[test]
fn a_changed_repetition_count_asks_for_a_new_anchor_instead_of_reading_as_a_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    bootstrapped(root);

    // The repetitions change: the optimized benchmark reads 50 % slower with them.
    commit_suite(root, 50);
    let changed = night(root, &[]);
    assert_eq!(
        changed.code,
        exit_code(Exit::Ok),
        "a settings change must not fail the night as a regression:\n{}\n{}",
        changed.json,
        changed.stderr
    );
    let targets = changed.json["run"]["targets"].as_array().unwrap();
    let t = &targets[0];
    assert_eq!(t["key"], "primes");
    assert_eq!(t["verdict"], "unknown", "{t}");
    let note = t["note"].as_str().unwrap_or_default();
    for want in [
        "measurement settings changed since the anchor",
        "command",
        "--benchmark_repetitions=30",
        "--benchmark_repetitions=50",
        "a new anchor",
    ] {
        assert!(note.contains(want), "{want:?} in the note: {note}");
        assert!(
            changed.stderr.contains(want),
            "{want:?} on stderr:\n{}",
            changed.stderr
        );
    }
    assert_eq!(changed.json["run"]["regressions"], 0, "{}", changed.json);
    // The comparison records the change, setting by setting.
    let run_id = changed.json["run_id"].as_str().unwrap();
    let regression: Value = serde_json::from_slice(
        &std::fs::read(
            root.join(".tier1/history")
                .join(run_id)
                .join("regression_summary.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let record = &regression["detection"]["targets"][0];
    let change = &record["settings_changed"][0];
    assert_eq!(change["setting"], "command", "{record}");
    assert!(
        change["anchor"]
            .as_str()
            .unwrap()
            .contains("--benchmark_repetitions=30"),
        "{record}"
    );
    assert!(
        change["current"]
            .as_str()
            .unwrap()
            .contains("--benchmark_repetitions=50"),
        "{record}"
    );

    // The new settings become the anchor by an accepted run; the next night compares with it.
    let accepted = night(root, &["--accept", "--note", "New repetition count"]);
    passed(&accepted);
    let after = night(root, &[]);
    passed(&after);
    assert_eq!(
        after.json["run"]["baseline_run_id"],
        accepted.json["run_id"]
    );
    assert!(
        !after.stderr.contains("measurement settings changed"),
        "{}",
        after.stderr
    );
}

/// An accepted run in which side by side found an unknown target the same as the anchor's code
/// is "never an anchor" (docs/regression-model.md §3b): promotion refuses it, naming the target,
/// and the store stays usable. Before, promotion ratified it and every later restore refused the
/// published history ("stored baseline_eligible: true contradicts its files"), so every later
/// night failed with exit 3.
#[test]
fn an_accepted_run_only_side_by_side_decided_is_refused_before_it_is_published() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let first = bootstrapped(root);
    // A 2.5 % slower optimized variant: too small for the history test to decide (unknown), and
    // side by side with the anchor's code finds it under the 5 % threshold (same).
    std::fs::write(root.join("bench/factor.txt"), "1.025").unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "a little slower"]);
    let accepted = night(root, &["--accept", "--note", "Accept it"]);
    let shown = &accepted.json["run"]["targets"][0];
    assert_eq!(shown["side_by_side"]["verdict"], "same", "{shown}");
    assert_eq!(
        accepted.code,
        exit_code(Exit::Invalid),
        "{}\n{}",
        accepted.json,
        accepted.stderr
    );
    let failure = accepted.json["failure"].as_str().unwrap_or_default();
    assert!(
        failure.contains("only side by side decided (primes (unknown, side by side same))"),
        "{failure}"
    );
    let after = night(root, &[]);
    assert_eq!(
        after.code,
        exit_code(Exit::Ok),
        "the store stays usable:\n{}\n{}",
        after.json,
        after.stderr
    );
    assert_eq!(after.json["run"]["baseline_run_id"], first.json["run_id"]);
}

/// Issue 43: an imported target the history test cannot decide (unknown) goes to side by side
/// without first re-running the tool's whole command for a recheck (the adopter's night spent
/// as long on the recheck of a 30-repetition Google Benchmark command as on its measurement,
/// and side by side then decided anyway); side by side decides it, and the night states what
/// that comparison can detect, from its own intervals. With side by side off the recheck runs
/// as before: nothing is left undecided that the recheck could have decided.
#[test]
fn an_unknown_imported_target_goes_side_by_side_without_a_recheck() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    bootstrapped(root);
    // A 2.5 % slower optimized variant: unknown for the history test, the same side by side.
    std::fs::write(root.join("bench/factor.txt"), "1.025").unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "a little slower"]);
    let n = night(root, &[]);
    passed(&n);
    let shown = &n.json["run"]["targets"][0];
    assert_eq!(shown["side_by_side"]["verdict"], "same", "{shown}");
    assert_eq!(
        (&shown["verdict"], &shown["decided_by"]),
        (&Value::from("unchanged"), &Value::from("side_by_side")),
        "{shown}"
    );
    // No recheck was recorded (the recheck's log line is at debug level since issue 37).
    let run_id = n.json["run_id"].as_str().expect("run_id");
    let rechecks: Vec<String> = std::fs::read_dir(root.join(".tier1/history"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&format!("{run_id}__recheck__")))
        .collect();
    assert!(
        rechecks.is_empty(),
        "no recheck before side by side: {rechecks:?}\n{}",
        n.stderr
    );
    let timing = &n.json["run"]["timings"][0];
    assert!(
        timing.get("recheck_s").is_none_or(Value::is_null),
        "{timing}"
    );
    let stated = shown["detectable_pct"]
        .as_f64()
        .expect("a detectable change");
    assert_eq!(
        shown["side_by_side"]["detectable_pct"].as_f64(),
        Some(stated),
        "{shown}"
    );
    // The history test's own figure stays in the metrics, larger than side by side's here.
    let history = shown["metrics"][0]["detectable_pct"].as_f64().unwrap();
    assert!(stated < history, "{stated} vs the history's {history}");

    // Side by side off: the recheck runs, as it did.
    std::fs::write(root.join("bench/factor.txt"), "1.02").unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "a little faster"]);
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(root)
        .env("TIER1_SIDE_BY_SIDE", "off")
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .output()
        .expect("tier1-nightly runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let rechecked = json["run"]["timings"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["recheck_s"].as_f64().is_some()));
    assert!(rechecked, "a recheck's time is recorded: {json}\n{stderr}");
}
