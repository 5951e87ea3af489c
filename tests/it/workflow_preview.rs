//! `tier1-preview.yml`, run as GitHub would run it (the scenario harness, docs/workflow-tests.md):
//! a labelled pull request from this repository is measured on the GPU runner, compared with the
//! canonical anchor and answered with one comment, updated on the next run, while the store and
//! the canonical history stay as they were; a fork's pull request, or another label, runs nothing;
//! a preview never waits for the nightly's producer lock; a preview that cannot compare says so.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::workflow_harness;

use serde_json::{Value, json};
use workflow_harness::{Harness, REPOSITORY, Report, RunSpec, harness_or_skip};

const LABEL: &str = "tier1-preview";
const MARKER: &str = "<!-- tier1-preview -->";

fn result(r: &Report, i: usize, job: &str) -> String {
    r.job(i, job)["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The store's artifacts that restore could take (history and evidence), by id and digest.
fn canonical_artifacts(h: &Harness) -> Vec<(Value, Value, Value)> {
    h.store_state()["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| {
            let n = a["name"].as_str().unwrap();
            !n.starts_with("tier1-preview-")
        })
        .map(|a| (a["id"].clone(), a["name"].clone(), a["digest"].clone()))
        .collect()
}

fn run_url(r: &Report, i: usize) -> String {
    format!(
        "https://github.com/{REPOSITORY}/actions/runs/{}",
        r.run(i)["id"]
    )
}

#[test]
fn a_labelled_pull_request_is_previewed_and_its_comment_updated_on_the_next_run() {
    let Some(h) = harness_or_skip("a_labelled_pull_request_is_previewed") else {
        return;
    };
    let index = h.bootstrap_anchor();
    let anchor = index["runs"][0]["run_id"].as_str().unwrap().to_string();
    let canonical = canonical_artifacts(&h);
    let pr = h.branch_commit("faster-kernels", "NOTES.md", "a change under review\n");

    // First run: the pull request is 25 % slower on both targets.
    let spec = RunSpec::pull_request(7, "faster-kernels", &pr, &h.sha, LABEL)
        .env("TIER1_FAKE_SPEEDUP", "1.5");
    let r = h.run(&[spec]);
    assert_eq!(result(&r, 0, "preview"), "failure", "{}", r.diagnose(0));
    let compare = r.step(0, "preview", "compare");
    assert_eq!(
        compare["exit_code"],
        exit_code(Exit::Gate),
        "the nightly gate would fail: {}",
        r.diagnose(0)
    );
    assert_eq!(compare["outputs"]["verdict"], "fail");
    assert_eq!(r.step(0, "preview", "upload")["outcome"], "success");
    assert_eq!(result(&r, 0, "comment"), "success", "{}", r.diagnose(0));
    // The GPU job ran the pull request's commit; the commenting job built the base branch's tier1.
    assert_eq!(
        r.step(0, "preview", "Checkout the pull request")["outputs"]["commit"],
        pr
    );
    assert_eq!(
        r.step(0, "comment", "Checkout the base branch")["outputs"]["commit"],
        h.sha
    );
    let comments = h.fake.comments(7);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let first = &comments[0];
    let body = first["body"].as_str().unwrap();
    assert!(body.starts_with(&format!("{MARKER}\n### ❌ Tier-1 preview, not canonical: the nightly gate would fail this commit\n")), "{body}");
    assert!(
        body.contains(&format!(
            "Commit `{}` against the `main` anchor `{anchor}`",
            &pr[..8]
        )),
        "{body}"
    );
    assert!(
        body.contains(
            "| `fixed_a` | 2.00× · 5.00 ms | 1.50× · 6.67 ms | -25.0 % speedup | ❌ regression |"
        ),
        "{body}"
    );
    assert!(
        body.contains(&format!("[workflow run]({})", run_url(&r, 0))),
        "{body}"
    );
    assert_eq!(first["user"]["login"], "github-actions[bot]");

    // Nothing restore could take was uploaded; the history the next night restores is unchanged.
    assert_eq!(canonical_artifacts(&h), canonical);
    assert_eq!(h.restored_index().unwrap(), index);
    let run_id = r.run(0)["id"].as_u64().unwrap();
    assert_eq!(
        h.artifact_names(run_id),
        [format!("tier1-preview-{run_id}-1")]
    );

    // The label is added again after a fix: the same comment is updated, now passing.
    let r2 = h.run(&[RunSpec::pull_request(
        7,
        "faster-kernels",
        &pr,
        &h.sha,
        LABEL,
    )]);
    assert_eq!(result(&r2, 0, "preview"), "success", "{}", r2.diagnose(0));
    assert_eq!(result(&r2, 0, "comment"), "success", "{}", r2.diagnose(0));
    let comments = h.fake.comments(7);
    assert_eq!(comments.len(), 1, "updated, not posted again");
    assert_eq!(comments[0]["id"], first["id"]);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(
        body.contains(
            "### ✅ Tier-1 preview, not canonical: the nightly gate would pass this commit"
        ),
        "{body}"
    );
    assert!(
        body.contains(&format!("[workflow run]({})", run_url(&r2, 0))),
        "{body}"
    );
    assert_eq!(canonical_artifacts(&h), canonical);
    assert_eq!(h.restored_index().unwrap(), index);

    // The commenting job built only tier1-compare; every build used the pinned toolchain.
    let calls = h.toolchain_calls();
    assert!(
        calls.contains(&"cargo +1.95 build --release --locked --bin tier1-compare".to_string()),
        "{calls:#?}"
    );
}

/// Issue 20, defect 5: pull request code never runs on the canonical runner. The preview asks
/// for the `tier1-preview` runner class (a separate machine with its own tool cache, home and
/// toolchains) and never for `b200`, the canonical class; the nightly asks for `b200`.
#[test]
fn a_preview_runs_on_the_preview_runner_never_on_the_canonical_one() {
    let Some(h) = harness_or_skip("a_preview_runs_on_the_preview_runner") else {
        return;
    };
    let index = h.bootstrap_anchor();
    assert_eq!(index["runs"].as_array().unwrap().len(), 1);
    let pr = h.branch_commit("planted", "NOTES.md", "a change under review\n");
    let r = h.run(&[
        RunSpec::pull_request(9, "planted", &pr, &h.sha, LABEL),
        RunSpec::nightly(),
    ]);
    assert_eq!(
        r.job(0, "preview")["runner"],
        "b200-preview-01",
        "{}",
        r.diagnose(0)
    );
    assert_eq!(
        r.job(1, "tier1")["runner"],
        "b200-node-01",
        "{}",
        r.diagnose(1)
    );
    // The preview's attestation asked for the preview class.
    let attest = r.log(0, "preview", "Attest runner");
    assert!(attest.contains("tier1-preview"), "{attest}");
}

#[test]
fn a_fork_pull_request_or_another_label_runs_nothing() {
    let Some(h) = harness_or_skip("a_fork_pull_request_or_another_label_runs_nothing") else {
        return;
    };
    let index = h.bootstrap_anchor();
    let artifacts = h.store_state()["artifacts"].as_array().unwrap().len();
    // The jobs API records one job per job that reaches a runner.
    let assigned = || {
        h.fake
            .requests_to("/_harness/runs/")
            .iter()
            .filter(|q| q.path().ends_with("/jobs"))
            .count()
    };
    let assigned_before = assigned();
    let pr = h.branch_commit("from-a-fork", "NOTES.md", "untrusted\n");
    let r = h.run(&[
        // A maintainer labels a fork's pull request: the label alone is not enough.
        RunSpec::pull_request(11, "patch-1", &pr, &h.sha, LABEL).opened_from_fork("mallory/tier1"),
        // Another label on a pull request of this repository.
        RunSpec::pull_request(12, "from-a-fork", &pr, &h.sha, "documentation"),
    ]);
    for i in [0, 1] {
        assert_eq!(result(&r, i, "preview"), "skipped", "{}", r.diagnose(i));
        assert_eq!(result(&r, i, "comment"), "skipped", "{}", r.diagnose(i));
        assert!(r.job(i, "preview")["steps"].as_array().unwrap().is_empty());
        let started = r.0["trace"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["run"] == i as u64 && e["kind"] == "started")
            .count();
        assert_eq!(started, 0, "run {i}: a job started");
    }
    assert_eq!(
        assigned(),
        assigned_before,
        "a job of the pull requests reached a runner"
    );
    // The fork's run is recorded with the fork as its head repository.
    let runs = h.store_state()["runs"].as_array().unwrap().clone();
    let fork_run = runs.iter().find(|x| x["id"] == r.run(0)["id"]).unwrap();
    assert_eq!(fork_run["head_repository"], "mallory/tier1");
    assert_eq!(fork_run["head_branch"], "patch-1");
    assert!(h.fake.comments(11).is_empty() && h.fake.comments(12).is_empty());
    assert_eq!(
        h.store_state()["artifacts"].as_array().unwrap().len(),
        artifacts
    );
    assert_eq!(h.restored_index().unwrap(), index);
}

#[test]
fn a_preview_never_waits_for_the_nightly_producer_lock() {
    let Some(h) = harness_or_skip("a_preview_never_waits_for_the_nightly_producer_lock") else {
        return;
    };
    h.bootstrap_anchor();
    let pr = h.branch_commit("quick-look", "NOTES.md", "x\n");
    // The nightly holds tier1-nightly-producer until the preview's GPU job is queued.
    let night = RunSpec::nightly().hold_until_queued("tier1", 1, "preview");
    let preview = RunSpec::pull_request(3, "quick-look", &pr, &h.sha, LABEL);
    let r = h.run(&[night, preview]);
    assert_eq!(r.run(0)["conclusion"], "success", "{}", r.diagnose(0));
    assert_eq!(result(&r, 1, "preview"), "success", "{}", r.diagnose(1));
    let trace = r.0["trace"].as_array().unwrap();
    let at = |run: u64, job: &str, kind: &str| {
        trace
            .iter()
            .find(|e| e["run"] == run && e["job"] == job && e["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} of {run}/{job}"))
    };
    assert!(
        at(1, "preview", "started")["seq"].as_u64() < at(0, "tier1", "finished")["seq"].as_u64(),
        "the preview started while the nightly held its producer lock"
    );
    assert_eq!(at(1, "preview", "started")["group"], "tier1-preview");
    assert_eq!(
        at(1, "comment", "started")["group"],
        "tier1-preview-comment-3"
    );
    assert_eq!(h.fake.comments(3).len(), 1);
}

#[test]
fn a_preview_that_cannot_compare_says_so_in_the_comment() {
    let Some(h) = harness_or_skip("a_preview_that_cannot_compare_says_so") else {
        return;
    };
    // No canonical history yet: restore refuses (exit 5) before the suite runs.
    let pr = h.branch_commit("too-early", "NOTES.md", "x\n");
    let r = h.run(&[RunSpec::pull_request(4, "too-early", &pr, &h.sha, LABEL)]);
    assert_eq!(result(&r, 0, "preview"), "failure");
    let compare = r.step(0, "preview", "compare");
    assert_eq!(
        compare["exit_code"],
        exit_code(Exit::Unavailable),
        "{}",
        r.diagnose(0)
    );
    assert_eq!(r.step(0, "preview", "upload")["outcome"], "skipped");
    assert_eq!(result(&r, 0, "comment"), "success", "{}", r.diagnose(0));
    let comments = h.fake.comments(4);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with(&format!(
            "{MARKER}\n### ⚠️ Tier-1 preview, not canonical: the preview did not complete"
        )),
        "{body}"
    );
    assert!(
        body.contains(&format!("[the workflow run]({})", run_url(&r, 0))),
        "{body}"
    );
    assert!(h.store_state()["artifacts"].as_array().unwrap().is_empty());
}

/// The shape GitHub enforces before any scenario: the trigger, the guards, least privilege per
/// job, its own locks, and what the jobs build and upload.
#[test]
fn the_workflow_is_guarded_least_privileged_and_uploads_no_history() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".github/workflows/tier1-preview.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let wf: Value = serde_saphyr::from_str(&text).unwrap();
    // Only a label on a pull request; never pull_request_target (the base's token and secrets).
    assert_eq!(wf["on"], json!({"pull_request": {"types": ["labeled"]}}));
    assert!(!text.contains("pull_request_target"));
    assert_eq!(wf["permissions"], json!({}));
    let jobs = wf["jobs"].as_object().unwrap();
    assert_eq!(jobs.keys().collect::<Vec<_>>(), ["preview", "comment"]);
    for (name, job) in jobs {
        let cond = job["if"].as_str().unwrap();
        for guard in [
            "github.event.label.name == 'tier1-preview'",
            "github.event.pull_request.head.repo.full_name == github.repository",
        ] {
            assert!(cond.contains(guard), "{name}: {cond}");
        }
        assert_ne!(job["concurrency"]["group"], "tier1-nightly-producer");
        assert_ne!(job["concurrency"]["group"], "tier1-history-publication");
        assert_eq!(job["concurrency"]["cancel-in-progress"], false);
        assert_eq!(job["concurrency"]["queue"], "max");
    }
    let (preview, comment) = (&jobs["preview"], &jobs["comment"]);
    assert_eq!(
        preview["permissions"],
        json!({"actions": "read", "contents": "read"})
    );
    assert_eq!(
        comment["permissions"],
        json!({"contents": "read", "pull-requests": "write"})
    );
    assert_eq!(preview["concurrency"]["group"], "tier1-preview");
    assert_eq!(
        comment["concurrency"]["group"],
        "tier1-preview-comment-${{ github.event.pull_request.number }}"
    );
    // Never the canonical runner class (issue 20): the preview asks for `tier1-preview` and not
    // `b200`, the nightly for `b200` and not `tier1-preview`; both are attested and preflighted.
    let nightly: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(path.with_file_name("tier1-nightly.yml")).unwrap(),
    )
    .unwrap();
    let labels = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    };
    let preview_labels = labels(&preview["runs-on"]);
    let nightly_labels = labels(&nightly["jobs"]["tier1"]["runs-on"]);
    assert!(
        preview_labels.contains(&"tier1-preview".into())
            && !preview_labels.contains(&"b200".into())
    );
    assert!(
        nightly_labels.contains(&"b200".into())
            && !nightly_labels.contains(&"tier1-preview".into())
    );
    let attest_labels = preview["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Attest runner")
        .unwrap()["env"]["TIER1_REQUIRED_LABELS"]
        .as_str()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect::<Vec<_>>();
    assert_eq!(
        attest_labels, preview_labels,
        "attested as the class it asked for"
    );
    let runs: Vec<&str> = preview["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    let all = runs.join("\n");
    for bin in ["tier1-attest\"", "tier1-preflight\"", "tier1-compare\" run"] {
        assert!(all.contains(bin), "{bin}");
    }
    for never in [
        "tier1-run",
        "tier1-evidence",
        "tier1-publish",
        "tier1-promote",
        "tier1-restore",
    ] {
        assert!(!all.contains(never), "the preview job runs {never}");
    }
    // Its one upload is the comparison, named so that restore can never take it.
    let uploads: Vec<&Value> = jobs
        .values()
        .flat_map(|j| j["steps"].as_array().unwrap())
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .collect();
    assert_eq!(uploads.len(), 1);
    let name = uploads[0]["with"]["name"].as_str().unwrap();
    assert!(name.starts_with("tier1-preview-"), "{name}");
    // The job with the write token builds tier1 from the base commit, and only the comment tool.
    let steps = comment["steps"].as_array().unwrap();
    assert_eq!(
        steps[0]["with"]["ref"],
        "${{ github.event.pull_request.base.sha }}"
    );
    assert!(
        steps[1]["run"]
            .as_str()
            .unwrap()
            .contains("--bin tier1-compare\n")
    );
}

/// `action.yml` with `preview: "true"`: the canonical steps (restore into the history path, run,
/// bind, pack) are skipped and `tier1-compare run` compares with the default branch's anchor.
#[test]
fn the_action_preview_input_compares_instead_of_producing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
    let a: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(a["inputs"]["preview"]["default"], "false");
    assert_eq!(
        a["outputs"]["preview-path"]["value"],
        "${{ steps.preview.outputs.output }}"
    );
    let steps = a["runs"]["steps"].as_array().unwrap();
    let named = |name: &str| {
        steps
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    for canonical in [
        "Restore history",
        "Run the suite",
        "Bind evidence identity",
        "Pack evidence",
    ] {
        assert_eq!(
            named(canonical)["if"],
            "inputs.preview != 'true'",
            "{canonical}"
        );
    }
    for both in ["Install tier1", "Attest runner"] {
        assert!(named(both).get("if").is_none(), "{both} runs in both modes");
    }
    // The GPU preflight runs in both modes too, unless the caller skips it for CPU runners.
    assert_eq!(
        named("GPU preflight")["if"],
        "inputs.gpu-preflight != 'false'"
    );
    let compare = named("Compare with the canonical anchor (preview, not canonical)");
    assert_eq!(compare["if"], "inputs.preview == 'true'");
    assert_eq!(compare["id"], "preview");
    assert_eq!(
        compare["env"]["TIER1_DEFAULT_BRANCH"],
        "${{ github.event.repository.default_branch }}"
    );
    let run = compare["run"].as_str().unwrap();
    assert!(
        run.contains("\"$TIER1_BIN/tier1-compare\" run --workflow \"$TIER1_WORKFLOW\""),
        "{run}"
    );
    assert!(
        run.contains("[[ -n \"$TIER1_WORKFLOW\" ]]"),
        "the producer workflow is required: {run}"
    );
    for json in ["tier1-attestation.json", "tier1-environment.json"] {
        assert!(
            run.contains(&format!("--environment-json \"$RUNNER_TEMP/{json}\"")),
            "{run}"
        );
    }
    let at = |name: &str| steps.iter().position(|s| s["name"] == name).unwrap();
    assert!(at("GPU preflight") < at("Compare with the canonical anchor (preview, not canonical)"));
}
