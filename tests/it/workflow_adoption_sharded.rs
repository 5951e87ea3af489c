//! The adopter's sharded template (docs/adoption.md "Sharded nights and runner classes", the file
//! tests/fixtures/adopter/.github/workflows/benchmarks-sharded.yml the guide shows verbatim), run
//! by the scenario harness with tier1's actions and release as another repository sees them: the
//! class's first anchor through the reviewed dispatch, then a night split over two B200 runners,
//! combined and published once under the class's artifact names.

use serde_json::{Value, json};
use workflow_harness::{Harness, Report, RunSpec};

use crate::support::workflow_harness;

const WORKFLOW: &str = ".github/workflows/benchmarks-sharded.yml";
const B200: [&str; 6] = [
    "self-hosted",
    "linux",
    "x64",
    "gpu",
    "b200",
    "node24-actions",
];

fn result(r: &Report, job: &str) -> String {
    r.job(0, job)["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn restored(h: &Harness) -> Value {
    crate::support::class_history::restored(
        &h.store_dir,
        &h.repository,
        ("benchmarks-sharded.yml", "acme", "b200"),
    )
    .expect("the class's history is restorable")
}

#[test]
fn an_adopter_shards_its_nights_over_a_runner_class() {
    let Some((mut h, _tier1)) = crate::workflow_adoption::adopter() else {
        return;
    };
    h.extra_machines = vec![h.gpu_machine("b200-node-02", &B200, "b200_x8")];
    let bootstrap = RunSpec::dispatch(json!({
        "runner_class": "b200", "bootstrap_history": true, "accept_history_anchor": true,
        "acceptance_note": "First ACME B200 anchor, reviewed by bob"
    }))
    .workflow(WORKFLOW)
    .review("approved");
    let r = h.run(&[bootstrap]);
    for (job, want) in [
        ("plan", "success"),
        ("shard", "success"),
        ("combine", "success"),
        ("publish", "skipped"),
        ("authorize", "success"),
        ("promote", "success"),
    ] {
        assert_eq!(result(&r, job), want, "bootstrap {job}: {}", r.diagnose(0));
    }
    let r = h.run(&[RunSpec::nightly().workflow(WORKFLOW)]);
    for (job, want) in [
        ("plan", "success"),
        ("shard", "success"),
        ("combine", "success"),
        ("publish", "success"),
    ] {
        assert_eq!(result(&r, job), want, "night {job}: {}", r.diagnose(0));
    }
    let legs = r.job(0, "shard")["legs"].as_array().cloned().unwrap();
    assert_eq!(legs.len(), 2, "the class's shards: 2");
    let idx = restored(&h);
    assert_eq!(idx["suite_name"], "acme-kernels");
    assert_eq!(idx["runner_class"], "b200");
    let rows = idx["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["baseline_eligible"], true);
    assert_eq!(rows[1]["run_accepted"], true);
    assert_eq!(idx["summaries"][1]["shards"]["complete"], true);
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let names = h.artifact_names(run_id);
    assert!(
        names.iter().any(|n| n.starts_with("acme-b200-history-")),
        "{names:?}"
    );
}
