//! Another repository adopts tier1 (issue 12): the fixture adopter of tests/fixtures/adopter (its
//! own two-target Python command suite, the artifact prefix `acme`, the evidence root
//! `.bench/evidence`, and the workflow docs/adoption.md shows) runs through the workflow scenario
//! harness. Its workflow names tier1's actions as `tier1-bench/tier1[/path]@<commit>` of a
//! repository made from this checkout, and the actions install the release the fake GitHub serves
//! (this test's binaries and SHA256SUMS). A bootstrap with an approved promotion, a passing night,
//! a failing night (recorded: evidence uploaded, the gate failure visible, the run published), and
//! a night that restores all of it.

use crate::support::workflow_harness;
use crate::support::workflow_release;

use serde_json::{Value, json};
use std::path::Path;
use workflow_harness::{Harness, Report, RunSpec, manifest_dir, ready_or_skip};

const WORKFLOW: &str = ".github/workflows/benchmarks.yml";
/// The one placeholder of the guide's YAML: the commit of tier1's release tag.
const COMMIT_PLACEHOLDER: &str = "<tier1 commit>";

/// Copy the fixture tree `from` into `to`, the tier1 commit filled in.
fn copy_fixture(from: &Path, to: &Path, commit: &str) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_fixture(&entry.path(), &dest, commit);
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(&dest, text.replace(COMMIT_PLACEHOLDER, commit)).unwrap();
        }
    }
}

fn adopter() -> Option<(Harness, tempfile::TempDir)> {
    if !ready_or_skip("workflow_adoption") {
        return None;
    }
    let tier1 = tempfile::tempdir().unwrap();
    let repo = tier1.path().join("tier1");
    std::fs::create_dir_all(&repo).unwrap();
    let commit = workflow_release::tier1_action_repository(&repo);
    let fixture = manifest_dir().join("tests/fixtures/adopter");
    let mut h = Harness::with_source("acme/kernels", |src| copy_fixture(&fixture, src, &commit));
    h.action_repositories.insert(
        workflow_release::TIER1_REPOSITORY.into(),
        json!(repo.display().to_string()),
    );
    h.artifact_prefix = "acme".into();
    h.producer_workflow = "benchmarks.yml".into();
    let release = tier1.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    let assets = workflow_release::release_assets("0.1.0", &release);
    workflow_release::publish_release(&h.fake, "0.1.0", assets);
    Some((h, tier1))
}

/// Each job of the (only) run of `r` ended as expected.
fn assert_jobs(r: &Report, what: &str, expected: &[(&str, &str)]) {
    for (job, want) in expected {
        assert_eq!(
            result(r, 0, job),
            *want,
            "{what}, job {job}: {}",
            r.diagnose(0)
        );
    }
}

fn result(r: &Report, i: usize, job: &str) -> String {
    r.job(i, job)["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn runs(index: &Value) -> Vec<Value> {
    index["runs"].as_array().cloned().unwrap_or_default()
}

#[test]
fn an_adopter_bootstraps_publishes_records_a_failing_night_and_restores() {
    let Some((h, _tier1)) = adopter() else {
        return;
    };
    let nightly = || RunSpec::nightly().workflow(WORKFLOW);
    let bootstrap = RunSpec::dispatch(json!({
        "bootstrap_history": true, "accept_history_anchor": true,
        "acceptance_note": "First ACME anchor, reviewed by bob"
    }))
    .workflow(WORKFLOW)
    .review("approved");

    // The bootstrap: produced, approved, promoted (publish is for the nightly path).
    let r = h.run(&[bootstrap]);
    assert_jobs(
        &r,
        "bootstrap",
        &[
            ("benchmark", "success"),
            ("publish", "skipped"),
            ("authorize", "success"),
            ("promote", "success"),
        ],
    );
    // A passing night: restored, produced and published.
    let passing = [("benchmark", "success"), ("publish", "success")];
    assert_jobs(&h.run(&[nightly()]), "night 1", &passing);
    // The failing night: the gate fails the job at its end, after the evidence and the candidate
    // history were uploaded; the run is published (as ineligible evidence).
    let r = h.run(&[nightly().env("ACME_FAIL_TARGET", "online_softmax")]);
    assert_jobs(
        &r,
        "the failing night",
        &[("benchmark", "failure"), ("publish", "success")],
    );
    let evidence = r.job(0, "benchmark")["outputs"]["evidence_artifact_name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(evidence.starts_with("acme-evidence-"), "{}", r.diagnose(0));
    let failing_run = r.run(0)["id"].as_u64().expect("run id");
    let names = h.artifact_names(failing_run);
    for prefix in ["acme-evidence-", "acme-candidate-history-", "acme-history-"] {
        assert!(
            names.iter().any(|n| n.starts_with(prefix)),
            "the failing night uploaded no {prefix}*: {names:?}"
        );
    }
    assert!(
        r.errors(0)
            .iter()
            .any(|e| e.contains("release gate failed")),
        "the gate failure is not visible: {:?}",
        r.errors(0)
    );
    // The next night restored everything and passed.
    assert_jobs(&h.run(&[nightly()]), "night 3", &passing);
    let index = h
        .restored_index()
        .expect("the adopter's history is restorable");
    let rows = runs(&index);
    assert_eq!(
        rows.len(),
        4,
        "bootstrap, two passing nights, the failing one: {index:#}"
    );
    assert_eq!(index["suite_name"], "acme-kernels", "{index:#}");
}
