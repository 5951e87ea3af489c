//! `tier1-nightly-sharded.yml` run by the scenario harness (issue 40, docs/sharding.md): the plan
//! job's matrix (`fromJSON` of its output) over a pool of attested runners of one class, the
//! combine job, one publication under the class's lock. Scenarios: N shards publish one run; a
//! shard fails; a shard is cancelled; a re-run of the failed shard job records the night; two
//! classes publish independently under their own locks.

use crate::support::workflow_harness;

use serde_json::{Value, json};
use workflow_harness::{Harness, Report, RunSpec, ready_or_skip};

const WORKFLOW: &str = ".github/workflows/tier1-nightly-sharded.yml";

const B200: [&str; 6] = [
    "self-hosted",
    "linux",
    "x64",
    "gpu",
    "b200",
    "node24-actions",
];
const H200: [&str; 6] = [
    "self-hosted",
    "linux",
    "x64",
    "gpu",
    "h200",
    "node24-actions",
];

/// tier1's repository with two runner classes in its suite (b200 in two shards, h200 in one)
/// and a pool of two B200 runners and one H200 runner.
fn harness(test: &str) -> Option<Harness> {
    if !ready_or_skip(test) {
        return None;
    }
    let mut h = Harness::with_suite(|s| {
        format!(
            "{s}runner_classes:\n  b200:\n    labels: [{}]\n    device_name: NVIDIA B200\n    device_count: 8\n    profile: minimal\n    shards: 2\n  h200:\n    labels: [{}]\n    device_name: NVIDIA H200\n    device_count: 8\n    profile: minimal\n",
            B200.join(", "),
            H200.join(", ")
        )
    });
    h.extra_machines = vec![
        h.gpu_machine("b200-node-02", &B200, "b200_x8"),
        h.gpu_machine("h200-node-01", &H200, "h200_x8"),
    ];
    h.producer_workflow = "tier1-nightly-sharded.yml".into();
    Some(h)
}

fn dispatch(class: &str, inputs: Value) -> RunSpec {
    let mut i = inputs;
    i["runner_class"] = json!(class);
    RunSpec::dispatch(i).workflow(WORKFLOW)
}

fn bootstrap(class: &str) -> RunSpec {
    dispatch(
        class,
        json!({"bootstrap_history": true, "accept_history_anchor": true,
               "acceptance_note": format!("First {class} anchor, reviewed by bob")}),
    )
    .review("approved")
}

fn night(class: &str) -> RunSpec {
    dispatch(class, json!({}))
}

fn result(r: &Report, i: usize, job: &str) -> String {
    r.job(i, job)["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn legs(r: &Report, i: usize) -> Vec<Value> {
    r.job(i, "shard")["legs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The class's history as the next night restores it (None: nothing published yet).
fn restored(h: &Harness, class: &str) -> Option<Value> {
    crate::support::class_history::restored(
        &h.store_dir,
        &h.repository,
        ("tier1-nightly-sharded.yml", "tier1", class),
    )
}

fn bootstrap_b200(h: &Harness) -> Value {
    let r = h.run(&[bootstrap("b200")]);
    for (job, want) in [
        ("plan", "success"),
        ("shard", "success"),
        ("combine", "success"),
        ("publish-history", "skipped"),
        ("authorize-history-anchor", "success"),
        ("promote-history-anchor", "success"),
    ] {
        assert_eq!(result(&r, 0, job), want, "{job}: {}", r.diagnose(0));
    }
    restored(h, "b200").expect("the bootstrap anchor is restorable")
}

#[test]
fn a_sharded_night_publishes_one_run_from_a_matrix_of_attested_runners() {
    let Some(h) = harness("a_sharded_night_publishes_one_run") else {
        return;
    };
    let idx = bootstrap_b200(&h);
    assert_eq!(idx["runner_class"], "b200");
    assert_eq!(idx["runs"][0]["baseline_eligible"], true);
    assert_eq!(idx["summaries"][0]["shards"]["count"], 2);

    let r = h.run(&[night("b200")]);
    assert_eq!(r.run(0)["conclusion"], "success", "{}", r.diagnose(0));
    let l = legs(&r, 0);
    assert_eq!(l.len(), 2, "one leg per shard");
    assert!(l.iter().all(|x| x["result"] == "success"), "{l:?}");
    assert_eq!(l[0]["matrix"]["shard"], 1);
    assert_eq!(l[1]["matrix"]["shard"], 2);
    let runners: Vec<&str> = l.iter().map(|x| x["runner"].as_str().unwrap()).collect();
    assert!(
        runners.iter().all(|n| n.starts_with("b200-node-")),
        "{runners:?}"
    );
    assert_eq!(
        result(&r, 0, "publish-history"),
        "success",
        "{}",
        r.diagnose(0)
    );
    let idx = restored(&h, "b200").unwrap();
    let rows = idx["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one run for the whole night");
    assert_eq!(rows[1]["run_accepted"], true);
    let shards = &idx["summaries"][1]["shards"];
    assert_eq!(shards["complete"], true);
    assert_eq!(shards["shards"].as_array().unwrap().len(), 2);
    // Each shard's manifest records its runner's attestation (the combined one gathers them).
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let names = h.artifact_names(run_id);
    for want in [
        "tier1-b200-plan-",
        "tier1-b200-shard-",
        "tier1-b200-evidence-",
        "tier1-b200-history-",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(want)),
            "{want} in {names:?}"
        );
    }
    // The unnamed class's history (tier1-nightly.yml) has nothing of it.
    assert!(
        !names.iter().any(|n| n.starts_with("tier1-history-")),
        "{names:?}"
    );
}

#[test]
fn a_failed_shard_records_nothing_and_a_rerun_of_it_records_the_night() {
    let Some(h) = harness("a_failed_shard_then_its_rerun") else {
        return;
    };
    bootstrap_b200(&h);
    let r = h.run(&[
        night("b200").fail_at("shard#2", "measure"),
        RunSpec::rerun_legs(0, "shard", &[2]),
    ]);
    // Attempt 1: shard 2's runner lost; the combine step finds its package missing.
    let l = legs(&r, 0);
    assert_eq!(l[0]["result"], "success");
    assert_eq!(l[1]["result"], "failure");
    assert_eq!(result(&r, 0, "shard"), "failure");
    assert_eq!(result(&r, 0, "combine"), "failure", "{}", r.diagnose(0));
    let combine = r.step(0, "combine", "combine");
    assert!(
        r.log(0, "combine", "combine")
            .contains("incomplete night: shard 2 of 2"),
        "{combine}"
    );
    assert_eq!(
        r.step(0, "combine", "upload_evidence")["outcome"],
        "skipped"
    );
    assert_eq!(
        result(&r, 0, "publish-history"),
        "skipped",
        "nothing half-merged is published"
    );
    // Attempt 2 ("Re-run this job" on shard 2): shard 1 kept, shard 2 measured again, the night
    // combined and published once.
    let l = legs(&r, 1);
    assert_eq!(l[0]["carried"], true);
    assert_eq!(l[1]["carried"], false);
    assert_eq!(l[1]["result"], "success", "{}", r.diagnose(1));
    assert_eq!(result(&r, 1, "combine"), "success", "{}", r.diagnose(1));
    assert_eq!(
        result(&r, 1, "publish-history"),
        "success",
        "{}",
        r.diagnose(1)
    );
    let idx = restored(&h, "b200").unwrap();
    assert_eq!(idx["runs"].as_array().unwrap().len(), 2);
    let record = &idx["summaries"][1]["shards"]["shards"];
    let run_id = r.run(1)["id"].as_u64().unwrap();
    assert_eq!(
        record[0]["artifact"],
        format!("tier1-b200-shard-{run_id}-1-1")
    );
    assert_eq!(
        record[1]["artifact"],
        format!("tier1-b200-shard-{run_id}-2-2")
    );
}

#[test]
fn a_cancelled_shard_records_nothing() {
    let Some(h) = harness("a_cancelled_shard") else {
        return;
    };
    bootstrap_b200(&h);
    let r = h.run(&[night("b200").cancel_at("shard#1", "measure")]);
    let l = legs(&r, 0);
    assert_eq!(l[0]["result"], "cancelled");
    assert_eq!(l[1]["result"], "success");
    assert_eq!(result(&r, 0, "shard"), "cancelled");
    assert_eq!(result(&r, 0, "combine"), "failure", "{}", r.diagnose(0));
    assert!(
        r.log(0, "combine", "combine")
            .contains("incomplete night: shard 1 of 2")
    );
    assert_eq!(result(&r, 0, "publish-history"), "skipped");
    assert_eq!(
        restored(&h, "b200").unwrap()["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn two_runner_classes_publish_independently_under_their_own_locks() {
    let Some(h) = harness("two_runner_classes_publish_independently") else {
        return;
    };
    bootstrap_b200(&h);
    let r = h.run(&[bootstrap("h200")]);
    assert_eq!(
        result(&r, 0, "promote-history-anchor"),
        "success",
        "{}",
        r.diagnose(0)
    );
    // The b200 night keeps its publication lock until the h200 night's publication has started:
    // with one shared lock the h200 publication would wait for it, and the hold would time out.
    let r = h.run(&[
        night("b200").hold_until_started("publish-history", 1, "publish-history"),
        night("h200"),
    ]);
    for i in [0, 1] {
        assert_eq!(
            result(&r, i, "publish-history"),
            "success",
            "{}",
            r.diagnose(i)
        );
    }
    let groups: Vec<String> = r
        .trace()
        .iter()
        .filter(|e| e["kind"] == "started" && e["job"] == "publish-history")
        .map(|e| e["group"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        groups
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        2,
        "{groups:?}"
    );
    for class in ["b200", "h200"] {
        let idx = restored(&h, class).unwrap();
        assert_eq!(idx["runner_class"], class);
        assert_eq!(idx["runs"].as_array().unwrap().len(), 2, "{class}");
        for s in idx["summaries"].as_array().unwrap() {
            assert_eq!(s["environment"]["runner_class"], class);
        }
    }
    // The h200 shard ran on the h200 runner, attested for its class's labels.
    assert_eq!(legs(&r, 1)[0]["runner"], "h200-node-01");
}

/// An acceptance dispatch whose shard fails is never an anchor: the combine step records nothing
/// (its failure does not fail the job on the acceptance path), so the review is never asked for,
/// promotion never runs, and the class's anchor stays the one it had.
#[test]
fn an_acceptance_with_a_failed_shard_never_becomes_the_anchor() {
    let Some(h) = harness("an_acceptance_with_a_failed_shard") else {
        return;
    };
    let before = bootstrap_b200(&h);
    let r = h.run(&[dispatch(
        "b200",
        json!({"accept_history_anchor": true, "acceptance_note": "Renewal, reviewed by bob"}),
    )
    .review("approved")
    .fail_at("shard#2", "measure")]);
    assert_eq!(legs(&r, 0)[1]["result"], "failure");
    assert_eq!(r.step(0, "combine", "combine")["outcome"], "failure");
    assert!(
        r.log(0, "combine", "combine")
            .contains("incomplete night: shard 2 of 2"),
        "{}",
        r.diagnose(0)
    );
    assert_eq!(
        r.step(0, "combine", "upload_candidate")["outcome"],
        "skipped"
    );
    for job in [
        "publish-history",
        "authorize-history-anchor",
        "promote-history-anchor",
    ] {
        assert_eq!(result(&r, 0, job), "skipped", "{job}: {}", r.diagnose(0));
    }
    let after = restored(&h, "b200").unwrap();
    assert_eq!(
        after["runs"], before["runs"],
        "the anchor is the one it was"
    );
}

/// A bad dispatch of the sharded nightly is refused by its plan job's validation (the one-runner
/// nightly's script, `validate/validate-request.sh`) before anything is built or restored: no
/// shard job runs, nothing is uploaded.
#[test]
fn a_bad_sharded_dispatch_is_refused_before_anything_runs() {
    let Some(h) = harness("a_bad_sharded_dispatch") else {
        return;
    };
    let hex = "a".repeat(64);
    let bad = [
        (json!({"shards": "two"}), "shards must be a whole number"),
        (
            json!({"acceptance_note": "stray"}),
            "acceptance_note requires accept_history_anchor",
        ),
        (
            json!({"history_export": "tier1-b200-history-2026-09", "history_export_sha256": hex}),
            "history_export requires accept_history_anchor",
        ),
    ];
    let specs: Vec<RunSpec> = bad
        .iter()
        .map(|(i, _)| dispatch("b200", i.clone()))
        .collect();
    let r = h.run(&specs);
    for (i, (_, message)) in bad.iter().enumerate() {
        assert_eq!(result(&r, i, "plan"), "failure", "{}", r.diagnose(i));
        assert!(
            r.log(i, "plan", "Validate canonical request")
                .contains(message),
            "{message}: {}",
            r.diagnose(i)
        );
        assert_eq!(
            r.step(i, "plan", "Build tier1")["outcome"],
            "skipped",
            "{}",
            r.diagnose(i)
        );
        for job in [
            "shard",
            "combine",
            "publish-history",
            "promote-history-anchor",
        ] {
            let ran = &r.run(i)["jobs"][job]["result"];
            assert!(ran.is_null() || ran == "skipped", "{job}: {ran}");
        }
        let id = r.run(i)["id"].as_u64().unwrap();
        assert!(h.artifact_names(id).is_empty(), "nothing uploaded");
    }
    assert!(restored(&h, "b200").is_none(), "nothing published");
}
