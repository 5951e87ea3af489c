//! `tier1-publish` end to end: merging candidates into live history, stale producers, and every
//! refusal (message asserted, output absent, inputs byte-identical).

use crate::history_support::*;
use crate::support::exit_code::{Exit, exit_code};
use std::path::Path;

const EXE: &str = env!("CARGO_BIN_EXE_tier1-publish");

fn args(cand: &Path, live: &Path, out: &Path, run_id: &str) -> Vec<String> {
    vec![
        "--candidate-history-root".into(),
        cand.display().to_string(),
        "--canonical-history-root".into(),
        live.display().to_string(),
        "--output-history-root".into(),
        out.display().to_string(),
        "--run-id".into(),
        run_id.into(),
        "--suite-config".into(),
        suite_path().display().to_string(),
    ]
}

struct World {
    _t: tempfile::TempDir,
    w: std::path::PathBuf,
}

impl World {
    fn new() -> Self {
        let t = tempfile::tempdir().unwrap();
        let w = t.path().to_path_buf();
        bootstrap_live(&w, &w.join("live"), &RunSpec::new("anchor", 0));
        World { _t: t, w }
    }
    fn p(&self, name: &str) -> std::path::PathBuf {
        self.w.join(name)
    }
}

#[test]
fn merges_an_accepted_run_and_extends_the_chain() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1).speedup(2.01));
    let (live_before, cand_before) = (snapshot(&live), snapshot(&cand));
    let r = run(EXE, &args(&cand, &live, &out, "r1"));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["stale_baseline"], false);
    assert_eq!(j["run_accepted"], true);
    assert_eq!(j["baseline_eligible"], false);
    assert_eq!(j["anchor_run_id"], "anchor");
    assert_eq!(snapshot(&live), live_before);
    assert_eq!(snapshot(&cand), cand_before);
    let v = tier1::history_check::validate_history_root(&out).unwrap();
    assert!(matches!(
        v.chain,
        tier1::history::chain::ChainState::Chained { .. }
    ));
    let live_doc = tier1::history::package::IndexDoc::load(&live)
        .unwrap()
        .unwrap();
    assert_eq!(
        &v.doc.raw_rows()[..1],
        live_doc.raw_rows(),
        "live rows are a byte-identical prefix"
    );
    assert_eq!(v.index.runs[1].run_id, "r1");
    assert_eq!(
        v.latest_anchor.unwrap().run_id,
        "anchor",
        "normal publication never moves the anchor"
    );
    let trend: tier1::history::TrendSnapshot =
        tier1::history::package::read_json(&out, "r1/trend_snapshot.json").unwrap();
    assert_eq!(trend.run_count, 2);
    assert_eq!(trend.latest_run_id.as_deref(), Some("r1"));
}

#[test]
fn a_stale_producer_is_merged_as_ineligible_evidence() {
    let w = World::new();
    let (live, live2) = (w.p("live"), w.p("live2"));
    candidate(Some(&live), &w.p("cand-c"), &RunSpec::new("c", 2));
    evidence(&w.p("ev-c"), &RunSpec::new("c", 2));
    tier1::promote::promote(&promote_request(
        &w.p("cand-c"),
        &w.p("ev-c"),
        Some(&live),
        &live2,
        "c",
    ))
    .unwrap();
    candidate(Some(&live), &w.p("cand"), &RunSpec::new("old", 3));
    let r = run(EXE, &args(&w.p("cand"), &live2, &w.p("out"), "old"));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["stale_baseline"], true);
    assert_eq!(j["run_accepted"], false);
    assert_eq!(j["anchor_run_id"], "c");
    let v = tier1::history_check::validate_history_root(&w.p("out")).unwrap();
    let row = v.index.runs.last().unwrap();
    assert_eq!(
        (row.run_accepted, row.baseline_eligible),
        (Some(false), Some(false))
    );
    assert_eq!(v.latest_anchor.unwrap().run_id, "c");
}

#[test]
fn refuses_a_non_empty_output_root() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep"), "x").unwrap();
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "r1"),
        8,
        "is not empty",
        &[&live, &cand],
        &out,
    );
}

#[test]
fn refuses_a_symlinked_output_root_or_one_inside_an_input_tree() {
    let w = World::new();
    let (live, cand) = (w.p("live"), w.p("cand"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    let target = w.p("target");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, w.p("link")).unwrap();
    let before = snapshot(&w.w);
    assert_refused(
        EXE,
        &args(&cand, &live, &w.p("link"), "r1"),
        8,
        "is a symbolic link",
        &[&live, &cand],
        &target,
    );
    for (out, input) in [
        ("cand/out", "candidate history root"),
        ("live/anchor/out", "canonical history root"),
    ] {
        assert_refused(
            EXE,
            &args(&cand, &live, &w.p(out), "r1"),
            3,
            input,
            &[&live, &cand],
            &w.p(out),
        );
    }
    assert_eq!(snapshot(&w.w), before, "no staging dir, no new directory");
}

#[test]
fn refuses_a_run_id_that_is_not_the_newest_candidate() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "anchor"),
        3,
        "newest run must be --run-id",
        &[&live, &cand],
        &out,
    );
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "../x"),
        3,
        "--run-id",
        &[&live, &cand],
        &out,
    );
}

#[test]
fn refuses_to_publish_an_anchor() {
    let w = World::new();
    let (live, out) = (w.p("live"), w.p("out"));
    assert_refused(
        EXE,
        &args(&live, &live, &out, "anchor"),
        3,
        "evidence merge cannot publish a canonical anchor",
        &[&live],
        &out,
    );
}

#[test]
fn refuses_a_run_already_published() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    assert_eq!(
        run(EXE, &args(&cand, &live, &out, "r1")).code,
        exit_code(Exit::Ok)
    );
    let out2 = w.p("out2");
    assert_refused(
        EXE,
        &args(&cand, &out, &out2, "r1"),
        8,
        "already in canonical history",
        &[&out, &cand],
        &out2,
    );
}

#[test]
fn refuses_a_tampered_live_chain() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    let idx = live.join("index.json");
    let text = std::fs::read_to_string(&idx).unwrap();
    std::fs::write(
        &idx,
        text.replace("Reviewed the immutable", "Reviewed a mutable"),
    )
    .unwrap();
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "r1"),
        4,
        "hash chain mismatch",
        &[&live, &cand],
        &out,
    );
}

#[test]
fn refuses_a_different_suite_and_a_missing_canonical_index() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    let other = w.p("suite-v2.yaml");
    std::fs::write(
        &other,
        std::fs::read_to_string(suite_path())
            .unwrap()
            .replace("version: 1", "version: 2"),
    )
    .unwrap();
    let mut a = args(&cand, &live, &out, "r1");
    a[9] = other.display().to_string();
    assert_refused(
        EXE,
        &a,
        3,
        "suite identity expected tier1/v2",
        &[&live, &cand],
        &out,
    );
    let empty = w.p("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_refused(
        EXE,
        &args(&cand, &empty, &out, "r1"),
        3,
        "has no index.json",
        &[&empty, &cand],
        &out,
    );
}

#[test]
fn refuses_paths_not_bound_to_the_run() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    let idx = cand.join("index.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&idx).unwrap()).unwrap();
    v["runs"][1]["regression_summary_path"] = "anchor/regression_summary.md".into();
    tier1::history::chain::seal_all(v["runs"].as_array_mut().unwrap());
    std::fs::write(&idx, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "r1"),
        3,
        "`regression_summary_path` must be bound to \"r1/\"",
        &[&live, &cand],
        &out,
    );
}

/// A checkout whose `configs/benchmark_suites/acme.yaml` is the fixture suite renamed `acme`,
/// with a live history and a candidate of that suite.
fn acme_world(with_suite_file: bool) -> (World, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().to_path_buf();
    let suite_file = w.join("acme-suite.yaml");
    std::fs::write(
        &suite_file,
        std::fs::read_to_string(suite_path())
            .unwrap()
            .replace("suite_name: tier1", "suite_name: acme"),
    )
    .unwrap();
    let checkout = w.join("checkout");
    let dir = checkout.join("configs/benchmark_suites");
    std::fs::create_dir_all(&dir).unwrap();
    if with_suite_file {
        std::fs::copy(&suite_file, dir.join("acme.yaml")).unwrap();
    }
    bootstrap_live(
        &w,
        &w.join("live"),
        &RunSpec::new("anchor", 0).in_suite(&suite_file),
    );
    candidate(
        Some(&w.join("live")),
        &w.join("cand"),
        &RunSpec::new("r1", 1).in_suite(&suite_file),
    );
    (World { _t: t, w }, checkout)
}

fn publish_in(checkout: &Path, w: &World) -> std::process::Output {
    crate::support::command::scrubbed(EXE)
        .current_dir(checkout)
        .args(&args(&w.p("cand"), &w.p("live"), &w.p("out"), "r1")[..8])
        .env_remove("TIER1_SUITE_CONFIG")
        .env("TIER1_LOG", "warn")
        .output()
        .unwrap()
}

#[test]
fn without_suite_config_the_suite_the_history_records_is_used() {
    let (w, checkout) = acme_world(true);
    let o = publish_in(&checkout, &w);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{err}");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.p("out").join("index.json")).unwrap()).unwrap();
    assert_eq!(index["suite_name"], "acme");
}

#[test]
fn without_suite_config_a_history_of_a_suite_not_in_the_checkout_is_refused() {
    let (w, checkout) = acme_world(false);
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    let (live_before, cand_before) = (snapshot(&live), snapshot(&cand));
    let o = publish_in(&checkout, &w);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
    assert!(
        err.contains("records suite acme/v1") && err.contains("--suite-config"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    assert_eq!(snapshot(&live), live_before);
    assert_eq!(snapshot(&cand), cand_before);
    assert!(!out.exists());
}

#[test]
fn refuses_a_candidate_measurement_with_an_out_of_range_number() {
    let w = World::new();
    let (live, cand, out) = (w.p("live"), w.p("cand"), w.p("out"));
    candidate(Some(&live), &cand, &RunSpec::new("r1", 1));
    let summary = cand.join("r1/summary.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    v["targets"][0]["measurement"]["speedup_cv"] = 123_456.789.into();
    let text = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(text.matches("123456.789").count(), 1);
    std::fs::write(&summary, text.replace("123456.789", "1e400")).unwrap();
    assert_refused(
        EXE,
        &args(&cand, &live, &out, "r1"),
        exit_code(Exit::Invalid),
        "r1/summary.json: invalid content: number out of range",
        &[&live, &cand],
        &out,
    );
}
