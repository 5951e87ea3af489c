//! History validation rules (contract §2.2, §5.5 step 4) and the hash chain: a valid published
//! tree is broken in exactly one way per case and must fail with the right kind and message.

use crate::history_support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tier1::history::chain::{self, ChainState};
use tier1::history::error::HistoryErrorKind as K;
use tier1::history_check::{sanitize_restored, validate_history_root};

/// A live tree: anchor `anchor` plus a published run `r1`.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
    candidate(
        Some(&w.join("live")),
        &w.join("cand"),
        &RunSpec::new("r1", 1),
    );
    let req = tier1::publish::MergeRequest {
        candidate_root: w.join("cand"),
        canonical_root: w.join("live"),
        output_root: w.join("out"),
        run_id: "r1".into(),
        runner_class: None,
    };
    tier1::publish::merge(&req, &suite()).unwrap();
    let out = w.join("out");
    (t, out)
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// Edit the index and recompute the chain (a forger who re-seals), so a rule other than the chain
/// must catch the edit.
fn edit_index_resealed(root: &Path, f: impl FnOnce(&mut Value)) {
    edit_json(&root.join("index.json"), |v| {
        f(v);
        if let Some(rows) = v["runs"].as_array_mut() {
            chain::seal_all(rows);
        }
    });
}

fn expect(root: &Path, kind: K, needle: &str) {
    let e = validate_history_root(root).expect_err("must fail");
    assert_eq!(e.kind, kind, "{e}");
    assert!(e.to_string().contains(needle), "{e} lacks {needle:?}");
}

#[test]
fn a_published_tree_validates_with_a_verified_chain() {
    let (_t, out) = tree();
    let v = validate_history_root(&out).unwrap();
    assert!(matches!(v.chain, ChainState::Chained { head: Some(_) }));
    let a = v.latest_anchor.unwrap();
    assert_eq!(
        (a.run_id.as_str(), a.evidence_artifact_name.as_str()),
        ("anchor", "tier1-evidence-anchor")
    );
    assert_eq!(a.git_commit, COMMIT);
}

#[test]
fn index_field_rules_are_structural() {
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str)> = vec![
        (
            |v| v["runs"][1]["run_accepted"] = json!("yes"),
            "runs[1].run_accepted: expected a bool",
        ),
        (
            |v| v["runs"][0]["baseline_acceptance"] = json!("whatever"),
            "baseline_acceptance: expected one of",
        ),
        (
            |v| v["runs"][1]["baseline_acceptance"] = json!("clean"),
            "only allowed on an eligible run",
        ),
        (
            |v| {
                v["runs"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("baseline_acceptance_note");
            },
            "needs a non-empty `baseline_acceptance_note`",
        ),
        (
            |v| {
                v["runs"][1]["run_accepted"] = json!(false);
                v["runs"][1]["baseline_eligible"] = json!(true);
            },
            "baseline_eligible: true requires run_accepted: true",
        ),
        (
            |v| v["runs"][1]["run_id"] = json!("anchor"),
            "appears more than once",
        ),
        (
            |v| v["runs"][1]["run_id"] = json!("_bad"),
            "run_id must match",
        ),
        (|v| v["runs"] = json!({}), "runs: expected a list"),
        (
            |v| v["schema_version"] = json!(99),
            "schema_version: expected at most 3",
        ),
    ];
    for (edit, needle) in cases {
        let (_t, out) = tree();
        edit_index_resealed(&out, edit);
        expect(&out, K::Structural, needle);
    }
}

#[test]
fn unsafe_paths_and_bad_digests_are_integrity_errors() {
    let (_t, out) = tree();
    edit_index_resealed(&out, |v| {
        v["runs"][1]["summary_path"] = json!("../outside/summary.json")
    });
    expect(&out, K::Integrity, "not a safe relative path");
    let (_t, out) = tree();
    edit_index_resealed(&out, |v| {
        v["runs"][0]["baseline_evidence_digest"] = json!("sha256:abc")
    });
    expect(&out, K::Integrity, "baseline_evidence_digest");
}

#[test]
fn run_file_rules_are_structural() {
    let (_t, out) = tree();
    std::fs::remove_file(out.join("r1/trend_snapshot.json")).unwrap();
    expect(
        &out,
        K::Structural,
        "`trend_snapshot_path` file does not exist",
    );
    let (_t, out) = tree();
    std::fs::write(out.join("r1/trend_snapshot.json"), "[]").unwrap();
    expect(&out, K::Structural, "expected a JSON object");
    let (_t, out) = tree();
    edit_json(&out.join("r1/summary.json"), |v| v["run_id"] = json!("r2"));
    expect(&out, K::Structural, "run_id: expected \"r1\"");
    let (_t, out) = tree();
    edit_json(&out.join("r1/summary.json"), |v| {
        v["summary"]["succeeded"] = json!(1)
    });
    expect(&out, K::Structural, "summary.succeeded: expected 2");
    let (_t, out) = tree();
    edit_json(&out.join("r1/summary.json"), |v| {
        v["summary"]["target_count"] = json!(3)
    });
    expect(&out, K::Structural, "target_count: expected 2");
    let (_t, out) = tree();
    edit_json(&out.join("r1/regression_summary.json"), |v| {
        v["regressions"] = json!("none")
    });
    expect(&out, K::Structural, "invalid content");
    let (_t, out) = tree();
    edit_json(&out.join("r1/summary.json"), |v| {
        v["targets"][0]["best_speedup"] = json!(true)
    });
    expect(&out, K::Structural, "invalid content");
}

#[test]
fn acceptance_is_re_derived() {
    let (_t, out) = tree();
    edit_json(&out.join("r1/summary.json"), |v| {
        v["source_git_dirty"] = json!(true)
    });
    expect(
        &out,
        K::Structural,
        "stored run_accepted: true contradicts its files",
    );
    let (_t, out) = tree();
    edit_json(&out.join("r1/regression_summary.json"), |v| {
        v["warnings"] = json!(["w"])
    });
    expect(&out, K::Structural, "history has warnings");
}

#[test]
fn a_second_initial_anchor_is_refused() {
    let (_t, out) = tree();
    edit_json(&out.join("r1/regression_summary.json"), |v| {
        v["baseline_run_id"] = Value::Null;
        v["improvements"] = json!([]);
        v["anchor_declines"] = json!([]);
    });
    edit_index_resealed(&out, |v| {
        v["runs"][1]["baseline_eligible"] = json!(true);
        v["runs"][1]["baseline_acceptance"] = json!("clean");
    });
    expect(&out, K::Structural, "disconnected initial anchor");
}

#[test]
fn chain_tampering_is_an_integrity_error() {
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        v["runs"][0]["avg_speedup"] = json!(9.0)
    });
    expect(
        &out,
        K::Integrity,
        "runs[0] (run_id \"anchor\"): hash chain mismatch",
    );
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        let a = v["runs"].as_array_mut().unwrap();
        a.swap(0, 1);
    });
    expect(&out, K::Integrity, "hash chain mismatch");
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        v["runs"][1].as_object_mut().unwrap().remove("chain_sha256");
    });
    expect(&out, K::Integrity, "missing `chain_sha256`");
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        v.as_object_mut().unwrap().remove("schema_version");
    });
    expect(&out, K::Integrity, "has no `schema_version`");
}

#[test]
fn a_legacy_index_is_accepted_as_unchained() {
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        let o = v.as_object_mut().unwrap();
        o.remove("schema_version");
        o.remove("chain_reset");
        for r in o["runs"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("chain_sha256");
        }
    });
    assert_eq!(
        validate_history_root(&out).unwrap().chain,
        ChainState::Unchained
    );
}

#[test]
fn restore_sanitizing_relocates_and_scrubs() {
    let (_t, out) = tree();
    edit_json(&out.join("index.json"), |v| {
        let o = v.as_object_mut().unwrap();
        o.remove("schema_version");
        o["history_root"] = json!("/home/runner/work/history");
        for r in o["runs"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("chain_sha256");
        }
        v["runs"][1]["summary_path"] = json!("/home/runner/work/history/r1/summary.json");
    });
    edit_json(&out.join("r1/summary.json"), |v| {
        v["source_result_json"] = json!("/home/runner/artifacts/runs/r1/results/x.json");
        v.as_object_mut().unwrap().remove("evidence_artifact_name");
    });
    expect(&out, K::Integrity, "not a safe relative path");
    let v = sanitize_restored(&out).unwrap();
    assert_eq!(v.index.history_root, ".");
    assert_eq!(v.index.runs[1].summary_path, "r1/summary.json");
    let s: tier1::history::Summary =
        tier1::history::package::read_json(&out, "r1/summary.json").unwrap();
    assert_eq!(s.source_result_json.as_deref(), Some("r1/results/x.json"));
    assert_eq!(
        s.evidence_artifact_name.as_deref(),
        Some("tier1-evidence-r1")
    );
    validate_history_root(&out).expect("a sanitized tree validates strictly");
}

#[test]
fn restore_needs_runs_and_an_eligible_anchor() {
    let (_t, out) = tree();
    edit_index_resealed(&out, |v| v["runs"] = json!([]));
    let e = sanitize_restored(&out).unwrap_err();
    assert!(e.message.contains("non-empty list of runs"), "{e}");
    assert!(validate_history_root(&out).unwrap().latest_anchor.is_none());
}
