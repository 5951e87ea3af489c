//! Hostile and oversized command output through the real `tier1-run` and `tier1-nightly`: a run
//! whose results could not be packed and promoted is refused at the run (exit 3, the budget
//! named, nothing written) with its memory bounded (an address-space cap of 1 GiB, never a
//! timer), in the issue's shapes (1,000,000 samples per variant; 64 variants of 120,000), while
//! the largest result a run accepts goes through a night to its promotion; the criterion importer
//! refuses a `sample.json` over the budget before reading it and one linked out of
//! `CRITERION_HOME`; and an importer refuses a tool's output that names one benchmark twice.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;
use serde_json::Value;

/// A Python command target printing `variants` variants of `samples` samples each, compactly
/// (whole milliseconds, no spaces: 64 variants of 120,000 fit the 16 MiB of stdout).
const MANY_SAMPLES_PY: &str = r#"import json, os, sys
variants, samples = int(sys.argv[1]), int(sys.argv[2])
sig = {"seed": 42, "inputs": []}
ver = {"passed": True, "elements": 1, "mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0}
out = {"schema": "tier1.command_result.v1", "variants": []}
for i in range(variants):
    v = {"name": "baseline" if i == 0 else "optimized_%d" % i,
         "samples_ms": [2 if i == 0 else 1] * samples, "input_signature": sig}
    if i:
        v["verification"] = ver
    out["variants"].append(v)
json.dump(out, sys.stdout, separators=(",", ":"))
"#;

/// A committed checkout with `files` and a suite of `targets` (YAML lines of the target list).
fn checkout(files: &[(&str, &[u8])], targets: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    for (rel, bytes) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let suite = format!(
        "suite_name: limits\nversion: 1\ndefault_profile: cpu\nside_by_side: off\nprofiles:\n  cpu:\n    backend: cpu\n    warmup: 5\n    iterations: 6\n    budget_s: 1\n    precision_pct: 1000\n    anchor_passes: 1\n    timeout_s: 300\ntargets:\n{targets}"
    );
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    std::fs::write(root.join("configs/benchmark_suites/limits.yaml"), suite).unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\nout/\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "benchmarks"]);
    tmp
}

fn target(key: &str, format: &str, command: &str, variants: Option<&str>) -> String {
    let mut t = format!(
        "  - key: {key}\n    category: bench\n    target: bench:{key}\n    optimization_goal: speed\n    tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    kind: command\n    format: {format}\n    command: {command}\n"
    );
    if let Some(v) = variants {
        t.push_str(&format!("    variants: {v}\n"));
    }
    t
}

struct Ran {
    code: i32,
    json: Value,
    stderr: String,
}

/// `tier1-run` in the checkout of `tmp`, its address space capped at 1 GiB.
fn run(tmp: &tempfile::TempDir) -> Ran {
    let root = tmp.path().join("checkout");
    let o = command::limited(command::bin("tier1-run"), "ulimit -v 1048576")
        .current_dir(&root)
        .args(["--run-id", "limits", "--history-root", "out/history"])
        .args(["--evidence-root", "out/runs"])
        .output()
        .expect("bash runs");
    Ran {
        code: o.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn results_a_promotion_would_refuse_are_refused_at_the_run_in_bounded_memory() {
    for (variants, samples, total) in [(2, 1_000_000, 2_000_000), (64, 120_000, 7_680_000)] {
        let cmd = format!("[python3, many.py, \"{variants}\", \"{samples}\"]");
        let tmp = checkout(
            &[("many.py", MANY_SAMPLES_PY.as_bytes())],
            &target("many", "tier1", &cmd, None),
        );
        let r = run(&tmp);
        let what = format!("{variants} x {samples}");
        assert_eq!(r.code, exit_code(Exit::Invalid), "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "the run (after target many) would record {total} samples, over the 441505 one run may record"
            )) && r.stderr.contains("nothing was written"),
            "{what}: {}",
            r.stderr
        );
        assert!(r.json.is_null(), "{what}: {}", r.json);
        assert!(
            !tmp.path().join("checkout/out").exists(),
            "{what}: nothing written"
        );
    }
}

#[test]
fn the_largest_result_a_run_accepts_is_packed_promoted_and_restored() {
    // 2 variants of 220,000 samples: 440,000 of the 441,505 a run may record.
    let tmp = checkout(
        &[("many.py", MANY_SAMPLES_PY.as_bytes())],
        &target(
            "many",
            "tier1",
            "[python3, many.py, \"2\", \"220000\"]",
            None,
        ),
    );
    let root = tmp.path().join("checkout");
    let o = command::limited(command::bin("tier1-nightly"), "ulimit -v 2097152")
        .current_dir(&root)
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .output()
        .expect("bash runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let json: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{json}\n{stderr}"
    );
    assert_eq!(json["accept"], true, "{json}");
    assert!(json["publication"].is_object(), "{json}");
    let summary: Value = serde_json::from_slice(
        &std::fs::read(
            root.join(".tier1/history")
                .join(json["run_id"].as_str().unwrap())
                .join("summary.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(summary["targets"][0]["status"], "succeeded", "{summary}");
}

/// A command that writes criterion's files for one benchmark `sum/loop` into `CRITERION_HOME`,
/// its `sample.json` made by `sample` (a shell command run in the `new/` directory).
fn criterion_cmd(sample: &str) -> String {
    format!(
        "[sh, -c, \"d=\\\"$CRITERION_HOME/sum/loop/new\\\" && mkdir -p \\\"$d\\\" && cd \\\"$d\\\" && printf '{{\\\"full_id\\\": \\\"sum/loop\\\"}}' > benchmark.json && {sample}\"]"
    )
}

/// The failure message of target `key` in a run's JSON.
fn failure<'a>(r: &'a Ran, key: &str) -> &'a str {
    r.json["failures"]
        .as_array()
        .and_then(|f| f.iter().find(|x| x["key"] == key))
        .and_then(|x| x["message"].as_str())
        .unwrap_or_else(|| panic!("no failure of {key}: {}\n{}", r.json, r.stderr))
}

#[test]
fn criterion_output_over_the_budget_or_linked_out_of_its_home_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("sample.json");
    std::fs::write(
        &elsewhere,
        br#"{"iters": [1.0, 1.0, 1.0], "times": [1000.0, 1000.0, 1000.0]}"#,
    )
    .unwrap();
    let targets = target(
        "big",
        "criterion",
        // 300 MB, sparse: nothing is written to the disk, and nothing may be read.
        &criterion_cmd("truncate -s 300M sample.json"),
        Some("{ baseline: sum/loop }"),
    ) + &target(
        "linked",
        "criterion",
        &criterion_cmd(&format!("ln -s {} sample.json", elsewhere.display())),
        Some("{ baseline: sum/loop }"),
    );
    let tmp = checkout(
        &[],
        &targets.replace("optimization_goal: speed", "optimization_goal: time"),
    );
    let r = run(&tmp);
    assert_eq!(r.code, exit_code(Exit::Gate), "{}", r.stderr);
    let big = failure(&r, "big");
    assert!(
        big.contains("sample.json is larger than 16777216 bytes"),
        "{big}"
    );
    let linked = failure(&r, "linked");
    assert!(
        linked.contains("sample.json is a symbolic link: refusing to open it"),
        "{linked}"
    );
}

#[test]
fn an_output_naming_one_benchmark_twice_is_refused() {
    // hyperfine run with `-n slow` given to two commands: which one the suite means is unknown.
    let doc = r#"{"results": [
        {"command": "slow", "times": [0.002, 0.002, 0.002, 0.002, 0.002, 0.002], "exit_codes": [0, 0, 0, 0, 0, 0]},
        {"command": "slow", "times": [0.009, 0.009, 0.009, 0.009, 0.009, 0.009], "exit_codes": [0, 0, 0, 0, 0, 0]},
        {"command": "fast", "times": [0.001, 0.001, 0.001, 0.001, 0.001, 0.001], "exit_codes": [0, 0, 0, 0, 0, 0]}]}"#;
    let tmp = checkout(
        &[("out.json", doc.as_bytes())],
        &target(
            "twice",
            "hyperfine",
            "[cat, out.json]",
            Some("{ baseline: slow, optimized: [fast] }"),
        ),
    );
    let r = run(&tmp);
    assert_eq!(r.code, exit_code(Exit::Gate), "{}", r.stderr);
    let m = failure(&r, "twice");
    assert!(
        m.contains("the output reports 2 benchmarks named \"slow\": expected exactly one"),
        "{m}"
    );
}

#[test]
fn the_memory_cap_of_these_tests_is_a_real_one() {
    // A run under the same cap that tries to hold 2 GiB fails: the cap bounds memory here.
    let o = command::limited("python3", "ulimit -v 1048576")
        .args(["-c", "b = bytearray(2 << 30)"])
        .output()
        .expect("bash runs");
    assert!(!o.status.success(), "ulimit -v does not bound memory here");
}
