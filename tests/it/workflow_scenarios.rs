//! The real workflow files, run: `tier1-nightly.yml` and `tier1-promote.yml` parsed by GitHub's
//! `@actions/workflow-parser`, every expression evaluated by `@actions/expressions`, the runner's
//! part played by tests/workflows/harness, `run:` blocks under bash with the real binaries, and
//! artifacts through the fake GitHub. Each scenario asserts the history the next night restores.
//! Skips visibly (`support::skip`) when node or the npm packages are missing, unless
//! `TIER1_WORKFLOW_TESTS_REQUIRED=1`.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::workflow_harness;

use serde_json::{Value, json};
use workflow_harness::{Harness, Report, RunSpec, harness_or_skip, ready_or_skip};

pub(crate) fn rows(index: &Value) -> &Vec<Value> {
    index["runs"].as_array().expect("index runs")
}

pub(crate) fn conclusion(r: &Report, i: usize) -> &str {
    r.run(i)["conclusion"].as_str().unwrap_or_default()
}

pub(crate) fn result(r: &Report, i: usize, job: &str) -> String {
    r.job(i, job)["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn outcome(r: &Report, i: usize, job: &str, step: &str) -> String {
    r.step(i, job, step)["outcome"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Bootstrap the first anchor through the dispatch, the approval and the promotion job.
pub(crate) fn bootstrap(h: &Harness) -> Value {
    h.bootstrap_anchor()
}

#[test]
fn bootstrap_dispatch_approved_by_the_reviewer_is_promoted() {
    let Some(h) = harness_or_skip("bootstrap_dispatch_approved_by_the_reviewer_is_promoted") else {
        return;
    };
    assert!(h.restored_index().is_none(), "no history before");
    let index = bootstrap(&h);
    let runs = rows(&index);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["baseline_eligible"], true);
    assert_eq!(runs[0]["baseline_acceptance"], "accept_history_anchor");
    assert_eq!(runs[0]["baseline_acceptance_actor"], "alice");
    assert_eq!(runs[0]["baseline_acceptance_reviewers"], json!(["bob"]));
    assert!(
        runs[0]["baseline_acceptance_workflow_run"]
            .as_str()
            .unwrap()
            .starts_with("https://github.com/tier1-bench/tier1/actions/runs/")
    );
    assert_eq!(
        index["chain_reset"]["reason"],
        "First canonical anchor, reviewed by bob"
    );
}

#[test]
fn a_scheduled_night_that_passes_is_published_with_the_runner_attestation() {
    let Some(h) = harness_or_skip("a_scheduled_night_that_passes_is_published") else {
        return;
    };
    bootstrap(&h);
    let r = h.run(&[RunSpec::nightly()]);
    assert_eq!(
        conclusion(&r, 0),
        "success",
        "{:?}\n{:?}",
        r.outcomes(0, "tier1"),
        r.errors(0)
    );
    for (step, outcome) in r.outcomes(0, "tier1") {
        assert_eq!(outcome, "success", "step {step}: {:?}", r.errors(0));
    }
    assert_eq!(result(&r, 0, "publish-history"), "success");
    assert_eq!(result(&r, 0, "authorize-history-anchor"), "skipped");
    assert_eq!(result(&r, 0, "promote-history-anchor"), "skipped");

    let index = h.restored_index().unwrap();
    let runs = rows(&index);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["run_accepted"], true);
    assert_eq!(runs[1]["baseline_eligible"], false);

    // The evidence holds both attestation records: the runner's and the GPU preflight's.
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let name = r.job(0, "tier1")["outputs"]["evidence_artifact_name"]
        .as_str()
        .unwrap()
        .to_string();
    let zip = h.artifact(run_id, &name);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    let manifest_name = archive
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .find(|n| n.ends_with("/manifest.json") && !n.contains("__recheck__"))
        .expect("manifest in the evidence");
    let manifest: Value =
        serde_json::from_reader(archive.by_name(&manifest_name).unwrap()).unwrap();
    let attestation = &manifest["attestation"];
    assert_eq!(
        attestation["tier1-attestation"]["passed"], true,
        "runner attestation missing from the evidence: {attestation}"
    );
    assert_eq!(
        attestation["tier1-attestation"]["runner_name"],
        "b200-node-01"
    );
    assert_eq!(attestation["tier1-environment"]["passed"], true);

    // One toolchain: every build the jobs ran names Rust 1.95.
    let calls = h.toolchain_calls();
    assert!(!calls.is_empty());
    for call in &calls {
        assert!(
            call.starts_with("cargo +1.95 ") || call.starts_with("rustup toolchain install 1.95"),
            "a build without the pinned toolchain: {call}\nall: {calls:#?}"
        );
    }
}

#[test]
fn a_scheduled_night_whose_gate_fails_is_published_as_ineligible_evidence() {
    let Some(h) = harness_or_skip("a_scheduled_night_whose_gate_fails") else {
        return;
    };
    bootstrap(&h);
    // A 25 % speedup drop on both targets: a regression the recheck confirms.
    let r = h.run(&[RunSpec::nightly().env("TIER1_FAKE_SPEEDUP", "1.5")]);
    assert_eq!(outcome(&r, 0, "tier1", "run_tier1"), "failure");
    for step in [
        "bind_evidence",
        "pack_evidence",
        "upload_evidence",
        "verify_evidence",
        "upload_candidate",
    ] {
        assert_eq!(
            outcome(&r, 0, "tier1", step),
            "success",
            "{step} after a failed gate: {:?}",
            r.outcomes(0, "tier1")
        );
    }
    assert_eq!(result(&r, 0, "tier1"), "failure");
    assert_eq!(
        result(&r, 0, "publish-history"),
        "success",
        "{:?}",
        r.errors(0)
    );
    assert_eq!(conclusion(&r, 0), "failure");
    let index = h.restored_index().unwrap();
    let runs = rows(&index);
    assert_eq!(runs.len(), 2, "the failed night is in the history");
    assert_eq!(runs[1]["run_accepted"], false);
    assert_eq!(runs[1]["baseline_eligible"], false);
}

#[test]
fn a_night_with_a_failed_target_runs_once_and_is_recorded() {
    let Some(h) = harness_or_skip("a_night_with_a_failed_target") else {
        return;
    };
    bootstrap(&h);
    let r = h.run(&[RunSpec::nightly().env("TIER1_FAKE_FAIL_TARGET", "fixed_b")]);
    // The GPU check does not run the suite: only the canonical step meets the failing target.
    let gpu_check = r.step(0, "tier1", "gpu_check");
    assert_eq!(
        gpu_check["outcome"],
        "success",
        "{}",
        r.log(0, "tier1", "gpu_check")
    );
    assert_eq!(outcome(&r, 0, "tier1", "run_tier1"), "failure");
    assert_eq!(result(&r, 0, "publish-history"), "success");
    let index = h.restored_index().unwrap();
    let runs = rows(&index);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["run_accepted"], false);
    assert_eq!(runs[1]["failed"], 1, "{}", runs[1]);
}

#[test]
fn an_accept_dispatch_rejected_by_the_reviewer_moves_nothing() {
    let Some(h) = harness_or_skip("an_accept_dispatch_rejected_by_the_reviewer") else {
        return;
    };
    let before = bootstrap(&h);
    let r = h.run(&[RunSpec::accept("Renew the anchor after review").review("rejected")]);
    assert_eq!(result(&r, 0, "tier1"), "success", "{}", r.diagnose(0));
    assert_eq!(result(&r, 0, "authorize-history-anchor"), "failure");
    assert_eq!(result(&r, 0, "promote-history-anchor"), "skipped");
    assert_eq!(result(&r, 0, "publish-history"), "skipped");
    assert_eq!(h.restored_index().unwrap(), before, "history unchanged");
}

#[test]
fn an_accept_dispatch_of_a_run_with_a_suppressed_regression_is_refused() {
    if !ready_or_skip("an_accept_dispatch_with_a_suppressed_regression") {
        return;
    }
    // One pass per anchor candidate: the disturbed first execution is then the run's only
    // measurement (with the default three passes it is left out of the candidate, as it should).
    let h = Harness::with_suite(|suite| {
        suite.replace(
            "    timeout_s: 60\n",
            "    timeout_s: 60\n    anchor_passes: 1\n",
        )
    });
    let before = bootstrap(&h);
    // The first execution of each target is slower; its recheck clears the regression.
    let slow = h.tmp.path().join("slow-once");
    let r = h.run(&[
        RunSpec::accept("Ratify although the recheck cleared a regression")
            .review("approved")
            .env("TIER1_FAKE_SLOW_ONCE", slow.to_str().unwrap()),
    ]);
    assert_eq!(result(&r, 0, "authorize-history-anchor"), "success");
    assert_eq!(result(&r, 0, "promote-history-anchor"), "failure");
    let ratify = r.step(
        0,
        "promote-history-anchor/promote",
        "Ratify the new history anchor",
    );
    assert_eq!(ratify["outcome"], "failure");
    assert_eq!(ratify["exit_code"], exit_code(Exit::Invalid));
    let log = r.log(
        0,
        "promote-history-anchor/promote",
        "Ratify the new history anchor",
    );
    assert!(log.contains("suppressed"), "{log}");
    assert_eq!(h.restored_index().unwrap(), before, "history unchanged");
}

#[test]
fn two_nights_queue_on_the_producer_lock_and_both_are_published() {
    let Some(h) = harness_or_skip("two_nights_queue_on_the_producer_lock") else {
        return;
    };
    bootstrap(&h);
    let first = RunSpec::nightly().hold_until_queued("tier1", 1, "tier1");
    let r = h.run(&[first, RunSpec::nightly()]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    let trace = &r.0["trace"];
    assert!(
        at(trace, 1, "tier1", "queued") < at(trace, 0, "tier1", "finished"),
        "the second producer was queued while the first ran"
    );
    assert!(at(trace, 0, "tier1", "finished") <= at(trace, 1, "tier1", "started"));
    no_overlap(trace, "tier1-nightly-producer");
    no_overlap(trace, "tier1-history-publication");
    let index = h.restored_index().unwrap();
    let runs = rows(&index);
    assert_eq!(runs.len(), 3, "both nights published, none lost");
    let published: Vec<&str> = runs[1..]
        .iter()
        .map(|x| x["run_id"].as_str().unwrap())
        .collect();
    for i in [0, 1] {
        let id = r.job(i, "tier1")["outputs"]["run_id"].as_str().unwrap();
        assert!(published.contains(&id), "{id} not in {published:?}");
    }
}

#[test]
fn a_promotion_queues_behind_a_publication() {
    let Some(h) = harness_or_skip("a_promotion_queues_behind_a_publication") else {
        return;
    };
    bootstrap(&h);
    let night = RunSpec::nightly().hold_until_queued(
        "publish-history",
        1,
        "promote-history-anchor/promote",
    );
    let accept = RunSpec::accept("Renew the anchor after review").review("approved");
    let r = h.run(&[night, accept]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    let trace = &r.0["trace"];
    let promote = "promote-history-anchor/promote";
    assert!(
        at(trace, 1, promote, "queued") < at(trace, 0, "publish-history", "finished"),
        "{trace:#}"
    );
    assert!(at(trace, 0, "publish-history", "finished") <= at(trace, 1, promote, "started"));
    no_overlap(trace, "tier1-history-publication");
    let index = h.restored_index().unwrap();
    let runs = rows(&index);
    assert_eq!(runs.len(), 3);
    assert_eq!(
        runs[1]["run_id"],
        r.job(0, "tier1")["outputs"]["run_id"],
        "the night first"
    );
    assert_eq!(runs[1]["baseline_eligible"], false);
    assert_eq!(runs[2]["run_id"], r.job(1, "tier1")["outputs"]["run_id"]);
    assert_eq!(
        runs[2]["baseline_eligible"], true,
        "then the promoted anchor"
    );
}

#[test]
fn requests_the_validation_step_refuses_run_nothing() {
    let Some(h) = harness_or_skip("requests_the_validation_step_refuses") else {
        return;
    };
    let before = bootstrap(&h);
    let cases = [
        (
            RunSpec::dispatch(json!({})).on_branch("feature"),
            "canonical runs only run on the default branch main, found refs/heads/feature",
        ),
        (
            RunSpec::dispatch(json!({"acceptance_note": "stray"})),
            "acceptance_note requires accept_history_anchor",
        ),
        (
            RunSpec::dispatch(json!({"bootstrap_history": true})),
            "bootstrap_history requires protected anchor acceptance",
        ),
        (
            RunSpec::dispatch(json!({"accept_history_anchor": true, "acceptance_note": " \t "})),
            "A public acceptance note is required",
        ),
    ];
    let specs: Vec<RunSpec> = cases.iter().map(|(s, _)| s.clone()).collect();
    let artifacts_before = h.store_state()["artifacts"].as_array().unwrap().len();
    let r = h.run(&specs);
    for (i, (_, message)) in cases.iter().enumerate() {
        assert_eq!(conclusion(&r, i), "failure");
        let outcomes = r.outcomes(i, "tier1");
        assert_eq!(outcomes[0].1, "success", "run id computed");
        assert_eq!(outcomes[1].1, "success", "checked out");
        assert_eq!(
            outcomes[2],
            ("Validate canonical request".into(), "failure".into())
        );
        assert!(
            outcomes[3..].iter().all(|(_, o)| o == "skipped"),
            "case {i}: steps after the refusal ran: {outcomes:?}"
        );
        assert!(
            r.errors(i).iter().any(|e| e.contains(message)),
            "case {i}: {message} not in {:?}",
            r.errors(i)
        );
        for job in [
            "publish-history",
            "authorize-history-anchor",
            "promote-history-anchor",
        ] {
            assert_eq!(result(&r, i, job), "skipped", "case {i}: {job}");
        }
    }
    assert_eq!(
        h.store_state()["artifacts"].as_array().unwrap().len(),
        artifacts_before,
        "nothing uploaded"
    );
    assert_eq!(h.restored_index().unwrap(), before);
}

/// The position in the trace of the first `kind` event of `job` in run `run`.
pub(crate) fn at(trace: &Value, run: u64, job: &str, kind: &str) -> u64 {
    trace
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["run"] == run && e["job"] == job && e["kind"] == kind)
        .and_then(|e| e["seq"].as_u64())
        .unwrap_or_else(|| panic!("no {kind} event of run {run} job {job}: {trace:#}"))
}

/// No two jobs of `group` ran at the same time.
fn no_overlap(trace: &Value, group: &str) {
    let mut holder: Option<(u64, String)> = None;
    for e in trace.as_array().unwrap() {
        let key = (
            e["run"].as_u64().unwrap_or(0),
            e["job"].as_str().unwrap_or_default().to_string(),
        );
        match e["kind"].as_str() {
            Some("started") if e["group"] == group => {
                assert!(
                    holder.is_none(),
                    "{key:?} started while {holder:?} held {group}"
                );
                holder = Some(key);
            }
            Some("finished") if holder.as_ref() == Some(&key) => holder = None,
            _ => {}
        }
    }
}
