//! The clock the protocol helpers time with (`TIER1_CLOCK`): a profile's `clock: cpu` reaches a
//! command target's process, and the Python and C helpers then time a batch on the process's CPU
//! time, which a variant that waits (here: sleeps 4 ms per call, as when a busy neighbour holds
//! the CPU) does not advance; under `wall` the same variant reads at least its 4 ms.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn source(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

const SLEEPER_PY: &str = r#"import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tier1_bench

def setup(ctx):
    ctx.input("x", [1], "f64")
    return 1.0

tier1_bench.main(setup, {"baseline": lambda x: time.sleep(0.004) or x})
"#;

const SLEEPER_C: &str = r#"#include "tier1_bench.h"
static void sleeper(void *s, double *out) {
    struct timespec t = {0, 4000000L};
    (void)s;
    nanosleep(&t, NULL);
    out[0] = 1.0;
}
int main(void) {
    tier1_input inputs[] = {{"x", "f64", {1}, 1}};
    tier1_variant variants[] = {{"baseline", sleeper}};
    tier1_spec spec = TIER1_SPEC_INIT;
    spec.out_len = 1;
    spec.inputs = inputs;
    spec.n_inputs = 1;
    return tier1_run(&spec, variants, 1, NULL);
}
"#;

/// A directory with the helpers and the two sleepers (the C one compiled).
fn sleepers() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("bench")).unwrap();
    for (from, to) in [
        ("helpers/python/tier1_bench.py", "bench/tier1_bench.py"),
        ("helpers/c/tier1_bench.h", "bench/tier1_bench.h"),
    ] {
        std::fs::copy(source(from), root.join(to)).unwrap();
    }
    std::fs::write(root.join("bench/sleeper.py"), SLEEPER_PY).unwrap();
    std::fs::write(root.join("bench/sleeper.c"), SLEEPER_C).unwrap();
    let out = Command::new("cc")
        .args(["-std=c99", "-O2", "-Wall", "-Werror", "-I", "bench"])
        .args(["bench/sleeper.c", "-o", "bench/sleeper", "-lm"])
        .current_dir(root)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmp
}

/// The median per-call time (ms) the helper reports for the sleeper under `clock`.
fn median_ms(root: &Path, argv: &[&str], clock: &str) -> f64 {
    let out = command::scrubbed(argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .env("TIER1_CLOCK", clock)
        .env("TIER1_WARMUP", "1")
        .env("TIER1_ITERATIONS", "6")
        .env("TIER1_MIN_SAMPLE_MS", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut s: Vec<f64> = doc["variants"][0]["samples_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(s.len(), 6, "{doc}");
    s.sort_by(f64::total_cmp);
    s[3]
}

#[test]
fn the_helpers_time_cpu_work_under_tier1_clock_cpu() {
    let dir = sleepers();
    let root = dir.path();
    for argv in [&["python3", "bench/sleeper.py"][..], &["bench/sleeper"][..]] {
        let wall = median_ms(root, argv, "wall");
        let cpu = median_ms(root, argv, "cpu");
        assert!(
            wall >= 3.9,
            "{argv:?}: a 4 ms sleep read {wall} ms of wall time"
        );
        assert!(
            cpu < 1.0,
            "{argv:?}: a 4 ms sleep read {cpu} ms of CPU time (the sleep is no work)"
        );
    }
}

#[test]
fn a_profile_s_clock_reaches_the_command() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("bench")).unwrap();
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    std::fs::copy(
        source("helpers/python/tier1_bench.py"),
        root.join("bench/tier1_bench.py"),
    )
    .unwrap();
    // The target fails unless tier1 tells it the profile's clock.
    std::fs::write(
        root.join("bench/clock.py"),
        SLEEPER_PY.replace(
            "def setup(ctx):\n",
            "def setup(ctx):\n    assert os.environ.get(\"TIER1_CLOCK\") == \"cpu\", os.environ.get(\"TIER1_CLOCK\")\n",
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("configs/benchmark_suites/clock.yaml"),
        "suite_name: clock\nversion: 1\ndefault_profile: cpu\nprofiles:\n  cpu:\n    backend: cpu\n    clock: cpu\n    warmup: 5\n    iterations: 6\n    min_sample_ms: 1\n    budget_s: 2\n    precision_pct: 1000\n    timeout_s: 60\ntargets:\n  - key: clock\n    category: example\n    target: bench:clock\n    optimization_goal: time\n    tolerance: { rtol: 0.0, atol: 0.0 }\n    kind: command\n    command: [python3, bench/clock.py]\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "benchmarks"]);
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-run"))
        .current_dir(root)
        .args(["--history-root", ".tier1/h", "--evidence-root", ".tier1/e"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
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
    assert_eq!(t["status"], "succeeded", "{t}");
    let median = t["metrics"]["baseline_time_ms"].as_f64().unwrap();
    assert!(median < 1.0, "the sleeper read {median} ms of CPU time");
}
