//! A single benchmark (`optimization_goal: time`, one variant) through the real `tier1-nightly`:
//! its first run is green, an unchanged time passes, and a 20 % slowdown committed in its code is a
//! regression that fails the gate, confirmed side by side with the anchor's own code.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::git;

use serde_json::Value;
use std::path::Path;

fn nightly(root: &Path) -> (i32, Value, String) {
    let out = command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
        .current_dir(root)
        .args(["--store", ".tier1/store", "--history-out", ".tier1/history"])
        .output()
        .expect("tier1-nightly runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The latest run's regression summary in the published history copy.
fn latest_regression(root: &Path) -> Value {
    let history = root.join(".tier1/history");
    let index: Value =
        serde_json::from_slice(&std::fs::read(history.join("index.json")).unwrap()).unwrap();
    let run = index["runs"].as_array().unwrap().last().unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    serde_json::from_slice(
        &std::fs::read(history.join(&run).join("regression_summary.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn a_single_benchmark_is_gated_on_its_absolute_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/single");
    std::fs::create_dir_all(root.join("configs/benchmark_suites")).unwrap();
    std::fs::copy(fx.join("fixed_single.py"), root.join("fixed_single.py")).unwrap();
    std::fs::copy(
        fx.join("suite.yaml"),
        root.join("configs/benchmark_suites/single.yaml"),
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), ".tier1/\n").unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "a single benchmark"]);

    let (code, json, stderr) = nightly(root);
    assert_eq!(code, exit_code(Exit::Ok), "first run: {json}\n{stderr}");
    let summary: Value = serde_json::from_slice(
        &std::fs::read(
            root.join(".tier1/history")
                .join(json["run_id"].as_str().unwrap())
                .join("summary.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let row = &summary["targets"][0];
    assert_eq!(row["status"], "succeeded", "{row}");
    assert_eq!(row["optimization_goal"], "time");
    assert_eq!(row["baseline_time_ms"], 10.0);
    assert!(row["best_speedup"].is_null(), "{row}");

    let (code, json, stderr) = nightly(root);
    assert_eq!(code, exit_code(Exit::Ok), "unchanged: {json}\n{stderr}");
    let r = latest_regression(root);
    assert_eq!(r["regressions"], serde_json::json!([]), "{r}");

    // The slowdown is in the code (a commit), as a real one is: side by side measures the anchor's
    // commit beside this one (an environment variable would slow both alike).
    let script = root.join("fixed_single.py");
    let code_text = std::fs::read_to_string(&script).unwrap();
    let slowed = code_text.replace(r#""TIER1_FAKE_MS", "10""#, r#""TIER1_FAKE_MS", "12""#);
    assert_ne!(slowed, code_text, "the fixture's default time");
    std::fs::write(&script, slowed).unwrap();
    git(root, &["commit", "-q", "-am", "20 % slower"]);
    let (code, json, stderr) = nightly(root);
    assert_eq!(code, exit_code(Exit::Gate), "20 % slower: {json}\n{stderr}");
    let r = latest_regression(root);
    assert_eq!(
        r["side_by_side"]["checks"][0]["verdict"], "worse",
        "a single benchmark is compared side by side on its time: {r}"
    );
    let rows = r["regressions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{r}");
    assert_eq!(rows[0]["reason"], "optimized_latency", "{r}");
    assert_eq!(rows[0]["target"], "bench/decode:decode_step");
    assert_eq!(
        (rows[0]["before"].as_f64(), rows[0]["after"].as_f64()),
        (Some(10.0), Some(12.0))
    );
}
