//! The importers (`format:`) through the real `tier1-nightly`, on output the real tools make:
//! pytest-benchmark and Google Benchmark (a compiled C++ binary) and hyperfine run here, each as
//! a pair and as a single benchmark, gated with no protocol code written. criterion and nvbench
//! (no tool here: cargo would build criterion for minutes, nvbench needs a GPU) replay the output
//! their tools wrote (tests/fixtures/importers) through the same path. A test whose tool is
//! missing skips visibly (`support::skip`: a `SKIPPED:` line naming the tool), unless `TIER1_IMPORTERS_REQUIRED=1` (`.ci/importers.sh`
//! installs them and sets it), when it fails instead.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;
use crate::support::skip;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/importers")
}

/// Whether `ok`; when not, records the skip and why (a panic under `TIER1_IMPORTERS_REQUIRED=1`).
fn have(test: &str, ok: bool, what: &str) -> bool {
    let missing = (!ok).then(|| format!("{what} is missing"));
    skip::unless_missing(test, skip::IMPORTERS, missing)
}

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The Python with pytest-benchmark: `TIER1_IMPORTERS_PYTHON`, else `python3` when it has it.
fn python_with(module: &str) -> Option<String> {
    let candidates = std::env::var("TIER1_IMPORTERS_PYTHON")
        .ok()
        .into_iter()
        .chain(["python3".to_string()]);
    candidates
        .into_iter()
        .find(|py| runs(py, &["-c", &format!("import {module}")]))
}

/// A committed checkout with `files` and the suite `targets` (YAML lines of the target list). The
/// profile asks for no particular precision (this machine may be busy): the tests are about
/// reading the tools' output, and an imprecise first run could not become the anchor.
fn checkout(files: &[(&str, &[u8])], targets: &str) -> tempfile::TempDir {
    checkout_clock(files, targets, "wall")
}

/// [`checkout`] with the profile's `clock`.
fn checkout_clock(files: &[(&str, &[u8])], targets: &str, clock: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for (rel, bytes) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let suite = format!(
        "suite_name: imported\nversion: 1\ndefault_profile: cpu\nprofiles:\n  cpu:\n    backend: cpu\n    clock: {clock}\n    warmup: 5\n    iterations: 6\n    budget_s: 5\n    precision_pct: 1000\n    timeout_s: 120\ntargets:\n{targets}"
    );
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    std::fs::write(root.join("configs/benchmark_suites/imported.yaml"), suite).unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\nbuild/\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "benchmarks"]);
    tmp
}

/// Run `tier1-nightly` in `root`; returns the summary rows of the run by key.
fn gate(root: &Path) -> Vec<Value> {
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(root)
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .output()
        .expect("tier1-nightly runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{json}\n{stderr}"
    );
    let run = json["run_id"].as_str().unwrap();
    let summary: Value = serde_json::from_slice(
        &std::fs::read(root.join(".tier1/history").join(run).join("summary.json")).unwrap(),
    )
    .unwrap();
    summary["targets"].as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [Value], key: &str) -> &'a Value {
    rows.iter().find(|r| r["key"] == key).unwrap()
}

/// A succeeded pair with a speedup above 1 and a succeeded single benchmark with a time.
fn assert_pair_and_single(rows: &[Value]) {
    let pair = row(rows, "pair");
    assert_eq!(pair["status"], "succeeded", "{pair}");
    assert!(pair["best_speedup"].as_f64().unwrap() > 1.05, "{pair}");
    let single = row(rows, "single");
    assert_eq!(single["status"], "succeeded", "{single}");
    assert_eq!(single["optimization_goal"], "time");
    assert!(
        single["baseline_time_ms"].as_f64().unwrap() > 0.0,
        "{single}"
    );
    assert!(single["best_speedup"].is_null(), "{single}");
}

/// Whether a C++ compiler and Google Benchmark are here (else the skip is recorded).
fn have_gbench(test: &str) -> bool {
    let header = Path::new("/usr/include/benchmark/benchmark.h").is_file();
    have(
        test,
        header && runs("c++", &["--version"]),
        "c++ with libbenchmark-dev",
    )
}

/// Compile a Google Benchmark source into `bin`.
fn compile_gbench(src: &Path, bin: &Path) {
    let out = Command::new("c++")
        .args(["-O2", "-std=c++17", "-o"])
        .arg(bin)
        .arg(src)
        .args(["-lbenchmark", "-lpthread"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn target(key: &str, goal: &str, format: &str, command: &str, variants: &str) -> String {
    format!(
        "  - key: {key}\n    category: bench\n    target: bench:{key}\n    optimization_goal: {goal}\n    tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    kind: command\n    format: {format}\n    command: {command}\n    variants: {variants}\n"
    )
}

/// The pair and the single benchmark of tests/fixtures/importers/pytest-benchmark/test_sort.py,
/// both run by `command`.
fn sort_targets(command: &str) -> String {
    target(
        "pair",
        "speed",
        "pytest-benchmark",
        command,
        "{ baseline: test_bubble, optimized: [test_sorted] }",
    ) + &target(
        "single",
        "time",
        "pytest-benchmark",
        command,
        "{ baseline: \"bench/test_sort.py::test_sorted\" }",
    )
}

#[test]
fn pytest_benchmark_suite_is_gated_as_is() {
    let test = "pytest_benchmark_suite_is_gated_as_is";
    let py = python_with("pytest_benchmark");
    let Some(py) = py.filter(|_| true) else {
        have(test, false, "a Python with pytest-benchmark");
        return;
    };
    let source = std::fs::read(fixtures().join("pytest-benchmark/test_sort.py")).unwrap();
    let command = format!(
        "[{py}, -m, pytest, -q, -p, no:cacheprovider, bench/test_sort.py, \"--benchmark-json={{output}}\", \"--benchmark-min-rounds={{rounds}}\", --benchmark-max-time=0.05]"
    );
    let targets = sort_targets(&command);
    let tmp = checkout(&[("bench/test_sort.py", &source)], &targets);
    assert_pair_and_single(&gate(tmp.path()));
}

#[test]
fn google_benchmark_binary_is_gated_as_is() {
    let test = "google_benchmark_binary_is_gated_as_is";
    if !have_gbench(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bench");
    compile_gbench(&fixtures().join("google-benchmark/sum.cc"), &bin);
    let command = format!(
        "[{}, --benchmark_format=json, --benchmark_repetitions=30, --benchmark_min_time=0.005]",
        bin.display()
    );
    let targets = target(
        "pair",
        "speed",
        "google-benchmark",
        &command,
        "{ baseline: BM_SumVolatile, optimized: [BM_SumFast] }",
    ) + &target(
        "single",
        "time",
        "google-benchmark",
        &command,
        "{ baseline: BM_SumFast }",
    );
    let repo = checkout(&[], &targets);
    assert_pair_and_single(&gate(repo.path()));
}

#[test]
fn hyperfine_commands_are_gated_as_is() {
    let test = "hyperfine_commands_are_gated_as_is";
    if !have(test, runs("hyperfine", &["--version"]), "hyperfine") {
        return;
    }
    let command = "[hyperfine, --style, none, --runs, \"40\", --warmup, \"{warmup}\", --export-json, \"{output}\", -n, slow, \"sleep 0.01\", -n, fast, \"sleep 0.002\"]";
    let targets = target(
        "pair",
        "speed",
        "hyperfine",
        command,
        "{ baseline: slow, optimized: [fast] }",
    ) + &target("single", "time", "hyperfine", command, "{ baseline: fast }");
    let repo = checkout(&[], &targets);
    assert_pair_and_single(&gate(repo.path()));
}

#[test]
fn criterion_and_nvbench_outputs_are_gated_through_the_same_path() {
    // The tools' own outputs, put where they write them by a stand-in command.
    let crit = fixtures().join("criterion/home");
    let crit_cmd = format!(
        "[sh, -c, \"cp -R {}/. \\\"$CRITERION_HOME\\\"\"]",
        crit.display()
    );
    let nv = fixtures().join("nvbench/axes.json");
    let nv_cmd = format!("[cp, {}, \"{{output}}\"]", nv.display());
    let targets = target(
        "pair",
        "speed",
        "nvbench",
        &nv_cmd,
        "{ baseline: \"simple/Device=0\", optimized: [\"single_float64_axis/Device=0 Duration=0\"] }",
    ) + &target(
        "single",
        "time",
        "criterion",
        &crit_cmd,
        "{ baseline: sum/loop }",
    );
    let repo = checkout(&[], &targets);
    let rows = gate(repo.path());
    assert_pair_and_single(&rows);
    // nvbench without sample files: each invocation's mean cold GPU time is one sample.
    let pair = row(&rows, "pair");
    let want = 0.0010034715849794225 / 3.9224058844425625e-06;
    assert!(
        (pair["best_speedup"].as_f64().unwrap() / want - 1.0).abs() < 1e-9,
        "{pair}"
    );
}

/// A benchmark that sleeps 20 ms a call: 20 ms of wall time, next to no CPU time.
const SLEEPER_PY: &str = "import time\n\n\ndef test_sleep(benchmark):\n    benchmark(time.sleep, 0.02)\n\n\ndef test_other(benchmark):\n    benchmark(time.sleep, 0.001)\n";

/// The profile's `clock: cpu` reaches the tools: pytest-benchmark times with
/// `time.process_time`, so a benchmark that sleeps 20 ms a call measures well under a
/// millisecond (before: wall time, 20 ms; the profile's clock was ignored for imported tools).
#[test]
fn pytest_benchmark_times_the_process_cpu_under_clock_cpu() {
    let test = "pytest_benchmark_times_the_process_cpu_under_clock_cpu";
    let Some(py) = python_with("pytest_benchmark") else {
        have(test, false, "a Python with pytest-benchmark");
        return;
    };
    let command = format!(
        "[{py}, -m, pytest, -q, -p, no:cacheprovider, bench/test_sleep.py, \"--benchmark-json={{output}}\", --benchmark-min-rounds=6, --benchmark-max-time=0.05]"
    );
    let targets = target(
        "single",
        "time",
        "pytest-benchmark",
        &command,
        "{ baseline: test_sleep }",
    );
    let tmp = checkout_clock(
        &[("bench/test_sleep.py", SLEEPER_PY.as_bytes())],
        &targets,
        "cpu",
    );
    let rows = gate(tmp.path());
    let ms = row(&rows, "single")["baseline_time_ms"].as_f64().unwrap();
    assert!(ms < 5.0, "CPU time of a 20 ms sleep: {ms} ms");
}

/// The same for Google Benchmark: under `clock: cpu` each repetition's `cpu_time` is the sample,
/// not its `real_time` (a sleeping benchmark: 20 ms real, next to no CPU).
#[test]
fn google_benchmark_cpu_time_is_read_under_clock_cpu() {
    let test = "google_benchmark_cpu_time_is_read_under_clock_cpu";
    if !have_gbench(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("sleep.cc");
    std::fs::write(
        &src,
        "#include <benchmark/benchmark.h>\n#include <chrono>\n#include <thread>\nstatic void BM_Sleep(benchmark::State& s) {\n  for (auto _ : s) std::this_thread::sleep_for(std::chrono::milliseconds(20));\n}\nBENCHMARK(BM_Sleep);\nBENCHMARK_MAIN();\n",
    )
    .unwrap();
    let bin = tmp.path().join("bench");
    compile_gbench(&src, &bin);
    let command = format!(
        "[{}, --benchmark_format=json, --benchmark_repetitions=6, --benchmark_min_time=0.005]",
        bin.display()
    );
    let targets = target(
        "single",
        "time",
        "google-benchmark",
        &command,
        "{ baseline: BM_Sleep }",
    );
    let repo = checkout_clock(&[], &targets, "cpu");
    let rows = gate(repo.path());
    let ms = row(&rows, "single")["baseline_time_ms"].as_f64().unwrap();
    assert!(ms < 5.0, "CPU time of a 20 ms sleep: {ms} ms");
}

/// A tool's command runs only the target's benchmarks: a test of the same file that fails, or a
/// benchmark of the same binary that aborts, is not run (before: every target ran the whole file
/// or binary, so it failed with them, and paid for them).
#[test]
fn only_the_targets_benchmarks_run() {
    let test = "only_the_targets_benchmarks_run";
    let Some(py) = python_with("pytest_benchmark") else {
        have(test, false, "a Python with pytest-benchmark");
        return;
    };
    let source = format!(
        "{}\n\ndef test_broken(benchmark):\n    raise RuntimeError('not this target')\n",
        std::str::from_utf8(
            &std::fs::read(fixtures().join("pytest-benchmark/test_sort.py")).unwrap()
        )
        .unwrap()
    );
    let command = format!(
        "[{py}, -m, pytest, -q, -p, no:cacheprovider, bench/test_sort.py, \"--benchmark-json={{output}}\", --benchmark-min-rounds=6, --benchmark-max-time=0.05]"
    );
    let targets = sort_targets(&command);
    let tmp = checkout(&[("bench/test_sort.py", source.as_bytes())], &targets);
    assert_pair_and_single(&gate(tmp.path()));
}
