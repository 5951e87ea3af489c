//! Another repository adopts tier1 (issue 12): the fixture adopter of tests/fixtures/adopter (its
//! own two-target Python command suite, the artifact prefix `acme`, the evidence root
//! `.bench/evidence`, and the workflow docs/adoption.md shows) runs through the workflow scenario
//! harness. Its workflow names tier1's actions as `tier1-bench/tier1[/path]@<commit>` of a
//! repository made from this checkout, and the actions install the release the fake GitHub serves
//! (this test's binaries and SHA256SUMS). A bootstrap with an approved promotion, a passing night,
//! a failing night (recorded: evidence uploaded, the gate failure visible, the run published), and
//! a night that restores all of it. Issue 36, N12: a bad dispatch is refused by the template's first
//! step (the `validate` action, the nightly's own rules) before anything of the night runs.

use crate::support::workflow_harness;
use crate::support::workflow_release;

use serde_json::{Value, json};
use std::path::Path;
use workflow_harness::{Harness, Report, RunSpec, manifest_dir, ready_or_skip};

const WORKFLOW: &str = ".github/workflows/benchmarks.yml";
/// The placeholders of the guide's YAML: the commit of tier1's release tag and the SHA-256 of the
/// release tarball.
const COMMIT_PLACEHOLDER: &str = "<tier1 commit>";
const SHA256_PLACEHOLDER: &str = "<tier1 sha256>";

/// Copy the fixture tree `from` into `to`, the tier1 commit and the tarball digest filled in.
fn copy_fixture(from: &Path, to: &Path, (commit, sha256): (&str, &str)) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_fixture(&entry.path(), &dest, (commit, sha256));
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let text = text
                .replace(COMMIT_PLACEHOLDER, commit)
                .replace(SHA256_PLACEHOLDER, sha256);
            std::fs::write(&dest, text).unwrap();
        }
    }
}

pub(crate) fn adopter() -> Option<(Harness, tempfile::TempDir)> {
    if !ready_or_skip("workflow_adoption") {
        return None;
    }
    let tier1 = tempfile::tempdir().unwrap();
    let repo = tier1.path().join("tier1");
    std::fs::create_dir_all(&repo).unwrap();
    let commit = workflow_release::tier1_action_repository(&repo);
    let release = tier1.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    let assets = workflow_release::release_assets("0.1.0", &release);
    let sha256 = workflow_release::tarball_sha256(&assets);
    let fixture = manifest_dir().join("tests/fixtures/adopter");
    let mut h = Harness::with_source("acme/kernels", |src| {
        copy_fixture(&fixture, src, (&commit, &sha256))
    });
    // What release.yml's attestation step proves, for the `gh` stand-in.
    h.attest(
        &sha256,
        workflow_release::SIGNER_WORKFLOW,
        "refs/tags/v0.1.0",
    );
    workflow_release::publish_release(&h.fake, "0.1.0", assets);
    h.action_repositories.insert(
        workflow_release::TIER1_REPOSITORY.into(),
        json!(repo.display().to_string()),
    );
    h.artifact_prefix = "acme".into();
    h.producer_workflow = "benchmarks.yml".into();
    Some((h, tier1))
}

/// The adopter's first dispatch: bootstrap and accept, approved by bob.
fn bootstrap_dispatch() -> RunSpec {
    RunSpec::dispatch(json!({
        "bootstrap_history": true, "accept_history_anchor": true,
        "acceptance_note": "First ACME anchor, reviewed by bob"
    }))
    .workflow(WORKFLOW)
    .review("approved")
}

/// The gate failure is visible as an error annotation of run 0.
fn assert_gate_failure_visible(r: &Report) {
    assert!(
        r.errors(0)
            .iter()
            .any(|e| e.contains("release gate failed")),
        "the gate failure is not visible: {:?}",
        r.errors(0)
    );
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
    let bootstrap = bootstrap_dispatch();

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
            ("dashboard", "success"),
        ],
    );
    // A passing night: restored, produced and published.
    let passing = [
        ("benchmark", "success"),
        ("publish", "success"),
        ("dashboard", "success"),
    ];
    let r = h.run(&[nightly()]);
    assert_jobs(&r, "night 1", &passing);
    // The dashboard job restored the published history and uploaded the rendered page.
    let night_1 = r.run(0)["id"].as_u64().expect("run id");
    assert!(
        h.artifact_names(night_1)
            .iter()
            .any(|n| n.starts_with("acme-dashboard-")),
        "{}",
        r.diagnose(0)
    );
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
    assert_gate_failure_visible(&r);
    // Every install verified the release: the pinned digest, and the build provenance signed by
    // the release workflow at the tag (the `gh` stand-in accepts only that attestation).
    let verified: Vec<String> = h
        .toolchain_calls()
        .into_iter()
        .filter(|c| c.starts_with("gh attestation verify"))
        .collect();
    assert!(!verified.is_empty(), "{:?}", h.toolchain_calls());
    for call in &verified {
        assert!(
            call.contains("--cert-identity https://github.com/tier1-bench/tier1/.github/workflows/release.yml@refs/tags/v0.1.0"),
            "{call}"
        );
    }
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

/// Issue 20, defect 1: runbook §3.3 for an adopter. A confirmed regression fails the gate of the
/// accept dispatch too (the benchmark job fails at its last step, after the uploads); the reviewer
/// approves and the promotion ratifies the run with its note. On GitHub a failed job skips every
/// dependant whose `if:` names no status function, so `authorize` and `promote` must name one.
#[test]
fn an_adopter_ratifies_a_confirmed_regression_through_a_reviewed_accept_dispatch() {
    let Some((h, _tier1)) = adopter() else {
        return;
    };
    let bootstrap = bootstrap_dispatch();
    assert_jobs(&h.run(&[bootstrap]), "bootstrap", &[("promote", "success")]);
    let accept = RunSpec::dispatch(json!({
        "accept_history_anchor": true,
        "acceptance_note": "online_softmax is 1.5x slower on purpose (exact reduction); reviewed by bob"
    }))
    .workflow(WORKFLOW)
    .review("approved")
    .env("ACME_SLOWDOWN", "online_softmax:1.5")
    // The slowdown comes from the environment, not a commit: compared side by side with its own
    // commit it would (rightly) be cleared; the operator's switch turns that off for this run.
    .env("TIER1_SIDE_BY_SIDE", "off");
    let r = h.run(&[accept]);
    assert_jobs(
        &r,
        "the accept dispatch of a regressed run",
        &[
            ("benchmark", "failure"),
            ("publish", "skipped"),
            ("authorize", "success"),
            ("promote", "success"),
        ],
    );
    assert_gate_failure_visible(&r);
    let index = h
        .restored_index()
        .expect("the adopter's history is restorable");
    let rows = runs(&index);
    assert_eq!(rows.len(), 2, "{index:#}");
    let accepted = &rows[1];
    assert_eq!(
        accepted["run_id"],
        r.job(0, "benchmark")["outputs"]["run_id"],
        "{index:#}"
    );
    assert_eq!(accepted["baseline_eligible"], true, "{index:#}");
    assert_eq!(accepted["baseline_acceptance_reviewers"], json!(["bob"]));
}

#[test]
fn an_adopter_previews_a_labelled_pull_request_in_one_comment() {
    let Some((h, _tier1)) = adopter() else {
        return;
    };
    let bootstrap = RunSpec::dispatch(json!({
        "bootstrap_history": true, "accept_history_anchor": true,
        "acceptance_note": "First ACME anchor, reviewed by bob"
    }))
    .workflow(WORKFLOW)
    .review("approved");
    let r = h.run(&[bootstrap]);
    assert_eq!(result(&r, 0, "promote"), "success", "{}", r.diagnose(0));
    let pr = h.branch_commit("faster-softmax", "NOTES.md", "a change under review\n");
    let spec = RunSpec::pull_request(5, "faster-softmax", &pr, &h.sha, "benchmarks-preview")
        .in_repository("acme/kernels")
        .workflow(".github/workflows/benchmarks-preview.yml");
    let r = h.run(&[spec]);
    assert_eq!(result(&r, 0, "preview"), "success", "{}", r.diagnose(0));
    assert_eq!(result(&r, 0, "comment"), "success", "{}", r.diagnose(0));
    let comments = h.fake.comments(5);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.contains("preview, not canonical"), "{body}");
    assert!(
        body.contains("`online_softmax`") && body.contains("`fused_matmul`"),
        "{body}"
    );
    // Nothing restore could take: only the preview artifact was uploaded by this run.
    let run_id = r.run(0)["id"].as_u64().unwrap();
    assert_eq!(
        h.artifact_names(run_id),
        [format!("acme-preview-{run_id}-1")]
    );
}

/// Issue 36, N12: the template validates a dispatch as tier1's nightly does, in its first step,
/// before the checkout, the install and the GPU night: an acceptance without a note, a note or a
/// bootstrap without an acceptance, and a dispatch on another branch than the default one are
/// refused by name; nothing later runs and nothing is uploaded.
#[test]
fn an_adopter_s_bad_dispatch_is_refused_before_the_night() {
    let Some((h, _tier1)) = adopter() else {
        return;
    };
    let dispatch = |inputs: Value| RunSpec::dispatch(inputs).workflow(WORKFLOW);
    let cases = [
        (
            dispatch(json!({"accept_history_anchor": true, "acceptance_note": " \t "})),
            "A public acceptance note is required",
        ),
        (
            dispatch(json!({"acceptance_note": "stray"})),
            "acceptance_note requires accept_history_anchor",
        ),
        (
            dispatch(json!({"bootstrap_history": true})),
            "bootstrap_history requires protected anchor acceptance",
        ),
        (
            dispatch(json!({})).on_branch("feature"),
            "only run on the default branch main, found refs/heads/feature",
        ),
    ];
    let specs: Vec<RunSpec> = cases.iter().map(|(s, _)| s.clone()).collect();
    let calls_before = h.toolchain_calls().len();
    let r = h.run(&specs);
    for (i, (_, message)) in cases.iter().enumerate() {
        let outcomes = r.outcomes(i, "benchmark");
        assert_eq!(
            outcomes.first(),
            Some(&("validate".to_string(), "failure".to_string())),
            "case {i}: {outcomes:?}\n{}",
            r.diagnose(i)
        );
        assert!(
            outcomes[1..].iter().all(|(_, o)| o == "skipped"),
            "case {i}: steps after the refusal ran: {outcomes:?}"
        );
        assert!(
            r.errors(i).iter().any(|e| e.contains(message)),
            "case {i}: {message} not in {:?}",
            r.errors(i)
        );
        for job in ["publish", "authorize", "promote"] {
            assert_eq!(result(&r, i, job), "skipped", "case {i}: {job}");
        }
        let run_id = r.run(i)["id"].as_u64().unwrap();
        assert!(h.artifact_names(run_id).is_empty(), "case {i}: uploaded");
    }
    assert_eq!(
        h.toolchain_calls().len(),
        calls_before,
        "nothing was installed or verified: {:?}",
        h.toolchain_calls()
    );
}
