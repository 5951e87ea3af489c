//! `tier1-promote` end to end: bootstrap and normal ratification, and every refusal of reference
//! §6.2 in order (message asserted, output absent, candidate, live and evidence byte-identical).

use crate::history_support::*;
use crate::support::exit_code::{Exit, exit_code};
use tier1::promote::PromoteRequest;

const EXE: &str = env!("CARGO_BIN_EXE_tier1-promote");

/// Live history with anchor `anchor`, and a candidate `c` built on it with its evidence.
type World = Scene;

#[test]
fn bootstrap_starts_a_new_chain() {
    let t = tempfile::tempdir().unwrap();
    let (cand, ev, out) = (
        t.path().join("cand"),
        t.path().join("ev"),
        t.path().join("out"),
    );
    candidate(None, &cand, &RunSpec::new("first", 0));
    evidence(&ev, &RunSpec::new("first", 0));
    let req = promote_request(&cand, &ev, None, &out, "first");
    let r = run(EXE, &promote_args(&req));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["success"], true);
    assert_eq!(j["bootstrap_reset"], true);
    assert_eq!(j["baseline_acceptance"], "accept_history_anchor");
    let v = tier1::history_check::validate_history_root(&out).unwrap();
    let reset = v.index.chain_reset.as_ref().unwrap();
    assert_eq!(
        (reset.first_run_id.as_str(), reset.actor.as_str()),
        ("first", "dispatcher")
    );
    assert_eq!(reset.reason, "Reviewed the immutable evidence package");
    let anchor = v.latest_anchor.unwrap();
    assert_eq!(anchor.run_id, "first");
    assert_eq!(anchor.evidence_digest.unwrap().as_str(), DIGEST);
}

#[test]
fn ratifies_the_newest_candidate_with_reviewers_and_a_bare_hex_digest() {
    let w = World::new();
    let mut req = w.req();
    req.reviewers = vec!["alice".into(), "bob".into()];
    req.expected_evidence_digest = DIGEST.trim_start_matches("sha256:").to_uppercase();
    let (cand, live) = (snapshot(&w.p("cand")), snapshot(&w.p("live")));
    let r = run(EXE, &promote_args(&req));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["bootstrap_reset"], false);
    assert_eq!(j["prior_anchor_run_id"], "anchor");
    assert_eq!(j["accepted_regression_count"], 0);
    assert_eq!(snapshot(&w.p("cand")), cand);
    assert_eq!(snapshot(&w.p("live")), live);
    let v = tier1::history_check::validate_history_root(&w.p("out")).unwrap();
    let row = v.index.runs.last().unwrap();
    assert_eq!(row.baseline_acceptance_reviewers, ["alice", "bob"]);
    assert_eq!(row.baseline_evidence_digest.as_deref(), Some(DIGEST));
    assert_eq!(
        row.baseline_acceptance_actor_role.as_deref(),
        Some("requester")
    );
    assert_eq!(v.latest_anchor.unwrap().run_id, "c");
    let reset = v.index.chain_reset.as_ref().unwrap();
    assert_eq!(
        reset.first_run_id, "anchor",
        "a normal promotion keeps the live chain"
    );
}

#[test]
fn accepts_a_confirmed_regression_through_the_protected_path() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
    candidate(
        Some(&w.join("live")),
        &w.join("cand"),
        &RunSpec::new("slow", 1).speedup(1.5),
    );
    evidence(&w.join("ev"), &RunSpec::new("slow", 1).speedup(1.5));
    let req = promote_request(
        &w.join("cand"),
        &w.join("ev"),
        Some(&w.join("live")),
        &w.join("out"),
        "slow",
    );
    let r = run(EXE, &promote_args(&req));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert!(r.json()["accepted_regression_count"].as_u64().unwrap() >= 1);
}

#[test]
fn refuses_an_imprecise_anchor_only_where_its_profile_requires_precision() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
    let spec = RunSpec::new("c", 1).noise(0.2).precision_required();
    candidate(Some(&w.join("live")), &w.join("cand"), &spec);
    evidence(&w.join("ev"), &spec);
    let req = promote_request(
        &w.join("cand"),
        &w.join("ev"),
        Some(&w.join("live")),
        &w.join("out"),
        "c",
    );
    let (cand, live, ev) = (w.join("cand"), w.join("live"), w.join("ev"));
    assert_refused(
        EXE,
        &promote_args(&req),
        3,
        "refusing to promote c: it is not a good anchor: target gemm: the measurement did not reach ±1.00 %",
        &[&cand, &live, &ev],
        &req.output_history_root,
    );
    assert_refused(
        EXE,
        &promote_args(&req),
        3,
        "anchor_precision is required: raise budget_s (profile or targets[].budget_s)",
        &[&cand, &live, &ev],
        &req.output_history_root,
    );
    // A bootstrap (the first anchor) is held to the same rule.
    let (c2, e2, o2) = (w.join("c2"), w.join("e2"), w.join("o2"));
    let first = RunSpec::new("first", 0).noise(0.2).precision_required();
    candidate(None, &c2, &first);
    evidence(&e2, &first);
    let req = promote_request(&c2, &e2, None, &o2, "first");
    assert_refused(
        EXE,
        &promote_args(&req),
        3,
        "it is not a good anchor: target gemm: the measurement did not reach",
        &[&c2, &e2],
        &o2,
    );
    // Under `anchor_precision: measured` (the default) the same imprecise run is an anchor,
    // carrying the precision it reached.
    let (c3, e3, o3) = (w.join("c3"), w.join("e3"), w.join("o3"));
    let measured = RunSpec::new("measured", 0).noise(0.2);
    candidate(None, &c3, &measured);
    evidence(&e3, &measured);
    let req = promote_request(&c3, &e3, None, &o3, "measured");
    let r = run(EXE, &promote_args(&req));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert!(o3.join("index.json").is_file());
}

#[test]
fn refuses_a_run_whose_value_is_an_outlier_against_the_accepted_runs() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
    let mut live = w.join("live");
    for (i, s) in [2.01, 1.99, 2.02, 1.98, 2.0].into_iter().enumerate() {
        let n = i as u32 + 1;
        live = publish_on(w, &live, &RunSpec::new(&format!("n{n}"), n).speedup(s));
    }
    // 2.5x against a median of 2.0x (robust SD floored at the 2 % prior): beyond 3.5 SDs (7 %).
    let spec = RunSpec::new("c", 9).speedup(2.5);
    candidate(Some(&live), &w.join("cand"), &spec);
    evidence(&w.join("ev"), &spec);
    let req = promote_request(
        &w.join("cand"),
        &w.join("ev"),
        Some(&live),
        &w.join("out"),
        "c",
    );
    let (cand, ev) = (w.join("cand"), w.join("ev"));
    assert_refused(
        EXE,
        &promote_args(&req),
        3,
        "target gemm: best_speedup 2.500x is an outlier against the last 6 accepted runs (median 2.000x, robust SD 2.00 %, allowed 1.865x to 2.145x)",
        &[&cand, &live, &ev],
        &req.output_history_root,
    );
    // Within the bound the same history promotes.
    let ok = RunSpec::new("d", 9).speedup(2.1);
    let (cd, ed, od) = (w.join("cand-d"), w.join("ev-d"), w.join("out-d"));
    candidate(Some(&live), &cd, &ok);
    evidence(&ed, &ok);
    let r = run(
        EXE,
        &promote_args(&promote_request(&cd, &ed, Some(&live), &od, "d")),
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
}

#[test]
fn refuses_bad_request_fields_in_order() {
    let w = World::new();
    type Edit = fn(&mut PromoteRequest);
    let cases: Vec<(Edit, &str)> = vec![
        (|r| r.run_id = "../c".into(), "--run-id"),
        (|r| r.note = "  ".into(), "--note must be a non-blank"),
        (
            |r| r.requester = "".into(),
            "--requester must be a non-blank",
        ),
        (|r| r.workflow_run = "not-a-url".into(), "not a URL"),
        (
            |r| r.workflow_run = "http://github.example/o/r/actions/runs/1".into(),
            "scheme \"http\"",
        ),
        (
            |r| r.workflow_run = "https://github.example/o/r/actions/runs/not-a-number".into(),
            "actions/runs/<decimal id>",
        ),
        (
            |r| r.workflow_run = "https://github.example/o/r/actions/runs/123?token=secret".into(),
            "query or fragment",
        ),
        (
            |r| r.workflow_run = "https://u:p@github.example/o/r/actions/runs/1".into(),
            "credentials",
        ),
        (
            |r| r.workflow_run = "local://store/actions/runs/7".into(),
            "scheme \"local\"",
        ),
        (
            |r| r.expected_git_commit = "abc".into(),
            "--expected-git-commit",
        ),
        (
            |r| r.expected_evidence_artifact = "evidence-1".into(),
            "--expected-evidence-artifact",
        ),
        (
            |r| r.expected_evidence_digest = "sha256:xyz".into(),
            "--expected-evidence-digest",
        ),
    ];
    for (edit, needle) in cases {
        let mut r = w.req();
        edit(&mut r);
        w.refused(&r, exit_code(Exit::Invalid), needle);
    }
}

#[test]
fn the_local_workflow_run_form_needs_its_flag() {
    let w = World::new();
    let mut r = w.req();
    r.workflow_run = "local://store/actions/runs/7".into();
    r.allow_local_workflow_run = true;
    let ran = run(EXE, &promote_args(&r));
    assert_eq!(ran.code, exit_code(Exit::Ok), "{}", ran.stderr);
}

#[test]
fn refuses_candidate_problems() {
    let w = World::new();
    let mut r = w.req();
    r.run_id = "anchor".into();
    w.refused(
        &r,
        exit_code(Exit::Invalid),
        "may ratify only the newest immutable candidate",
    );
    let mut r = w.req();
    r.expected_git_commit = "f".repeat(40);
    w.refused(&r, exit_code(Exit::Invalid), "source_git_commit: expected");
    let mut r = w.req();
    r.expected_evidence_artifact = "tier1-evidence-other".into();
    w.refused(
        &r,
        exit_code(Exit::Invalid),
        "evidence_artifact_name: expected",
    );
    let reordered = w.p("reordered.yaml");
    let text = std::fs::read_to_string(suite_path()).unwrap();
    let (head, tail) = text.split_at(text.find("  - key: gemm").unwrap());
    let (gemm, kv) = tail.split_at(tail.find("  - key: kv").unwrap());
    std::fs::write(&reordered, format!("{head}{kv}{gemm}")).unwrap();
    let mut r = w.req();
    r.suite_config = Some(reordered);
    w.refused(&r, exit_code(Exit::Invalid), "(key, target) list in order");
}

#[test]
fn refuses_a_tampered_comparison() {
    let w = World::new();
    let reg = w.p("cand/c/regression_summary.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&reg).unwrap()).unwrap();
    v["improvements"] = serde_json::json!([]);
    std::fs::write(&reg, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "`improvements` differs from the recomputed comparison",
    );
}

#[test]
fn refuses_live_history_problems() {
    let w = World::new();
    let mut r = w.req();
    r.canonical_history_root = None;
    r.allow_bootstrap = false;
    w.refused(&r, exit_code(Exit::Invalid), "no live canonical index.json");
    let mut r = w.req();
    r.suite_config = Some(w.p("v2.yaml"));
    std::fs::write(
        w.p("v2.yaml"),
        std::fs::read_to_string(suite_path())
            .unwrap()
            .replace("version: 1", "version: 2"),
    )
    .unwrap();
    w.refused(
        &r,
        exit_code(Exit::Invalid),
        "suite identity expected tier1/v2",
    );
    let mut r = w.req();
    r.output_history_root = w.p("live");
    let (cand, ev) = (w.p("cand"), w.p("ev"));
    assert_refused(
        EXE,
        &promote_args(&r),
        8,
        "is not empty",
        &[&cand, &ev],
        &w.p("live"),
    );
}

#[test]
fn refuses_a_stale_or_foreign_anchor() {
    let w = World::new();
    tier1::promote::promote(&w.req()).unwrap();
    candidate(Some(&w.p("live")), &w.p("cand2"), &RunSpec::new("late", 2));
    evidence(&w.p("ev"), &RunSpec::new("late", 2));
    let mut r = promote_request(
        &w.p("cand2"),
        &w.p("ev"),
        Some(&w.p("out")),
        &w.p("out2"),
        "late",
    );
    r.allow_bootstrap = false;
    let before = snapshot(&w.p("cand2"));
    assert_refused(
        EXE,
        &promote_args(&r),
        3,
        "(stale or foreign anchor)",
        &[&w.p("out"), &w.p("ev")],
        &w.p("out2"),
    );
    assert_eq!(snapshot(&w.p("cand2")), before);
}

#[test]
fn refuses_a_results_file_with_an_out_of_range_metric() {
    let w = World::new();
    let results = w.p("ev/c/results/benchmark_test_results.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    v["targets"][0]["metrics"]["best_speedup"] = 123_456.789.into();
    let text = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(text.matches("123456.789").count(), 1);
    std::fs::write(&results, text.replace("123456.789", "-1e999")).unwrap();
    let stderr = w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "invalid results file: number out of range",
    );
    assert!(
        stderr.contains("results/benchmark_test_results.json"),
        "the file is named: {stderr}"
    );
}

#[test]
fn refuses_evidence_problems() {
    let w = World::new();
    std::fs::remove_file(w.p("ev/c/report.md")).unwrap();
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "source_markdown_report \"c/report.md\" does not exist",
    );
    std::fs::write(w.p("ev/c/report.md"), "# report\n").unwrap();
    std::fs::write(
        w.p("ev/c/manifest.json"),
        serde_json::json!({"run_id": "c", "git": {"commit": COMMIT, "dirty": true}}).to_string(),
    )
    .unwrap();
    w.refused(&w.req(), exit_code(Exit::Invalid), "manifest git: expected");
    evidence(&w.p("ev"), &RunSpec::new("c", 1).speedup(2.4));
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "differs from the one derived from the result file",
    );
    let results = w.p("ev/c/results/benchmark_test_results.json");
    let text = std::fs::read_to_string(&results).unwrap();
    std::fs::write(
        &results,
        text.replacen("\"run_id\": \"c\"", "\"run_id\": \"d\"", 1),
    )
    .unwrap();
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "result JSON run_id: expected \"c\"",
    );
}
