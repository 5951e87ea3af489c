//! The first run makes an anchor on any machine (issue 19): an imprecise first measurement is
//! still an anchor under `anchor_precision: measured` (the default) and every later verdict
//! states what it can detect; under `required` the refusal names the target, the figures and the
//! remedy, and the job's JSON verdict agrees with its exit code; a disturbed first pass is left
//! out of the anchor.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use nightly_repo::{Repo, git, nightly_with, repo};
use serde_json::Value;

/// The published history's anchor row summary (`.tier1/history`, the `--history-out` copy).
fn anchor_summary(r: &Repo) -> Value {
    let root = r.root.join(".tier1/history");
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).unwrap();
    let row = index["runs"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["baseline_eligible"] == true)
        .expect("an anchor row")
        .clone();
    let path = row["summary_path"].as_str().unwrap();
    serde_json::from_slice(&std::fs::read(root.join(path)).expect("summary")).unwrap()
}

#[test]
fn an_imprecise_first_run_still_makes_the_anchor_and_the_next_night_says_what_it_can_see() {
    let r = repo();
    // ±30 % spread: the 5 rounds never reach the derived ±1.5 %.
    let noisy = [("TIER1_FAKE_NOISE", "0.3".to_string())];
    let o = nightly_with(&r, &noisy, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], true);
    assert_eq!(o.json["conclusion"], "success");
    assert_eq!(o.json["verdict"]["passed"], true);
    let anchor = anchor_summary(&r);
    let m = &anchor["targets"][0]["measurement"];
    assert_eq!(m["precise"], false, "{m}");
    assert_eq!(m["precision_required"], false, "{m}");
    assert_eq!(m["passes"].as_array().map(Vec::len), Some(3), "{m}");
    // The next night is compared, and each target says its verdict and what it can detect.
    let o = nightly_with(&r, &noisy, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], false);
    let targets = o.json["run"]["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2, "{}", o.json["run"]);
    for t in targets {
        let v = t["verdict"].as_str().unwrap();
        assert!(["unchanged", "unknown"].contains(&v), "{t}");
        assert!(t["detectable_pct"].as_f64().unwrap() > 5.0, "{t}");
        assert_eq!(t["metrics"].as_array().map(Vec::len), Some(2), "{t}");
    }
}

#[test]
fn a_required_precision_refuses_with_the_figures_and_the_remedy() {
    let r = repo();
    let suite = std::fs::read_to_string(r.root.join("suite.yaml")).unwrap();
    let strict = suite.replace(
        "    budget_s: 1\n",
        "    budget_s: 1\n    anchor_precision: required\n",
    );
    assert_ne!(strict, suite, "fixture suite changed");
    std::fs::write(r.root.join("suite.yaml"), strict).unwrap();
    git(&r.root, &["commit", "-qam", "strict anchors"]);
    let o = nightly_with(&r, &[("TIER1_FAKE_NOISE", "0.3".to_string())], &[]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["conclusion"], "failure");
    assert_eq!(
        o.json["verdict"]["passed"], false,
        "the JSON agrees with the exit code"
    );
    let failures = o.json["verdict"]["failures"].to_string();
    assert!(
        failures.contains("target fixed_a: the measurement did not reach ±1.50 %")
            && failures.contains("raise budget_s")
            && failures.contains("anchor_precision: measured"),
        "{failures}"
    );
    // Nothing was published: the store has no history artifact, the next run bootstraps again.
    let o = nightly_with(&r, &[], &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], true);
}

#[test]
fn a_disturbed_first_pass_is_left_out_of_the_anchor() {
    let r = repo();
    let flag = r.root.join(".tier1/slow-once");
    std::fs::create_dir_all(flag.parent().unwrap()).unwrap();
    // The very first execution (fixed_a's first pass) reports a 1.5x lower speedup.
    let o = nightly_with(
        &r,
        &[("TIER1_FAKE_SLOW_ONCE", flag.display().to_string())],
        &[],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let anchor = anchor_summary(&r);
    let a = &anchor["targets"][0];
    assert_eq!(a["key"], "fixed_a");
    assert_eq!(a["best_speedup"], 2.0, "{a}");
    let outliers: Vec<bool> = a["measurement"]["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outlier"].as_bool().unwrap())
        .collect();
    assert_eq!(outliers, [true, false, false], "{a}");
}
