//! The protocol helpers a release ships (helpers/python/tier1_bench.py, helpers/c/tier1_bench.h)
//! and the examples written with them, through the real binaries: in a fresh repository a Python
//! pair, a Python single benchmark and the C example (compiled with `cc`, and as C++ with `c++`)
//! pass a first `tier1-nightly`; an optimized variant whose output is wrong fails verification
//! under `tier1-run`, named with its mismatches.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn source(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Enough rounds for an interval on a busy machine, and no particular precision: the tests are
/// about the helpers' protocol, and an imprecise first run could not become the anchor.
const PROFILE: &str = "suite_name: helpers\nversion: 1\ndefault_profile: cpu\nprofiles:\n  cpu:\n    backend: cpu\n    warmup: 5\n    iterations: 30\n    min_sample_ms: 0.2\n    budget_s: 5\n    precision_pct: 1000\n    timeout_s: 120\ntargets:\n";

fn target(key: &str, goal: &str, command: &str) -> String {
    format!(
        "  - key: {key}\n    category: example\n    target: bench:{key}\n    optimization_goal: {goal}\n    tolerance: {{ rtol: 1.0e-9, atol: 1.0e-12 }}\n    kind: command\n    command: {command}\n"
    )
}

/// A checkout with the helpers vendored under bench/, `files`, and `targets`.
fn checkout(files: &[(&str, String)], targets: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("bench")).unwrap();
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    for (from, to) in [
        ("helpers/python/tier1_bench.py", "bench/tier1_bench.py"),
        ("helpers/c/tier1_bench.h", "bench/tier1_bench.h"),
    ] {
        std::fs::copy(source(from), root.join(to)).unwrap();
    }
    for (rel, text) in files {
        std::fs::write(root.join(rel), text).unwrap();
    }
    std::fs::write(
        root.join("configs/benchmark_suites/helpers.yaml"),
        format!("{PROFILE}{targets}"),
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\nbuild/\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "benchmarks"]);
    tmp
}

/// The Python example with its helper import pointed at bench/ (as a project vendors it).
fn python_example() -> String {
    std::fs::read_to_string(source("examples/command_target.py"))
        .unwrap()
        .replace("\"..\", \"helpers\", \"python\"", "\".\"")
}

const SINGLE: &str = r#"import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tier1_bench

def setup(ctx):
    n = ctx.shape("n", 20000)
    ctx.input("x", [n], "f64")
    return [ctx.rng.random() for _ in range(n)]

tier1_bench.main(setup, {"baseline": sorted})
"#;

const WRONG: &str = r#"import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tier1_bench

def setup(ctx):
    return list(range(100))

tier1_bench.main(setup, {"baseline": lambda x: [v * 2 for v in x],
                         "optimized_wrong": lambda x: [v * 2 + (v == 7) for v in x]})
"#;

fn compile(compiler: &str, lang: &[&str], root: &Path) {
    std::fs::create_dir_all(root.join("build")).unwrap();
    let out = Command::new(compiler)
        .args(lang)
        .args([
            "-O2",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-I",
            "bench",
        ])
        .args(["bench/matmul.c", "-o", "build/matmul", "-lm"])
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {lang:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn targets_written_with_the_helpers_pass_a_first_nightly() {
    let c = std::fs::read_to_string(source("examples/command_target.c")).unwrap();
    let targets = target("py_pair", "speed", "[python3, bench/dot.py]")
        + &target("py_single", "time", "[python3, bench/sort.py]")
        + &target("c_pair", "speed", "[build/matmul]");
    let repo = checkout(
        &[
            ("bench/dot.py", python_example()),
            ("bench/sort.py", SINGLE.into()),
            ("bench/matmul.c", c),
        ],
        &targets,
    );
    let root = repo.path();
    // C++ accepts the header and the example too; the C build is the one measured.
    compile("c++", &["-std=c++11", "-x", "c++"], root);
    compile("cc", &["-std=c99"], root);
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(root)
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{json}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = json["run_id"].as_str().unwrap();
    let results: Value = serde_json::from_slice(
        &std::fs::read(root.join(".tier1/history").join(run).join("summary.json")).unwrap(),
    )
    .unwrap();
    let rows = results["targets"].as_array().unwrap();
    for key in ["py_pair", "py_single", "c_pair"] {
        let row = rows.iter().find(|r| r["key"] == key).unwrap();
        assert_eq!(row["status"], "succeeded", "{row}");
    }
    let c_pair = rows.iter().find(|r| r["key"] == "c_pair").unwrap();
    assert_eq!(c_pair["best_optimization"], "optimized_ikj");
    assert_eq!(c_pair["baseline_file"], "examples/command_target.c");
}

#[test]
fn a_wrong_output_fails_verification_with_its_mismatches() {
    let repo = checkout(
        &[("bench/wrong.py", WRONG.into())],
        &target("wrong", "speed", "[python3, bench/wrong.py]"),
    );
    let root = repo.path();
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-run"))
        .current_dir(root)
        .args(["--history-root", ".tier1/h", "--evidence-root", ".tier1/e"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Gate)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_dir = std::fs::read_dir(root.join(".tier1/e"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let results: Value = serde_json::from_slice(
        &std::fs::read(run_dir.join("results/benchmark_test_results.json")).unwrap(),
    )
    .unwrap();
    let t = &results["targets"][0];
    assert_eq!(t["status"], "failed_verification", "{t}");
    let message = t["message"].as_str().unwrap();
    assert!(
        message.contains("optimized_wrong output differs from baseline: 1 of 100 elements"),
        "{message}"
    );
    // The helper timed the profile's rounds for each variant.
    for v in t["variants"].as_array().unwrap() {
        assert!(v["samples_ms"].as_array().unwrap().len() >= 6, "{v}");
    }
}
