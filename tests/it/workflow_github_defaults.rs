//! GitHub's defaults, run on the real workflows (issue 36): the default `actions/checkout` is a
//! depth-1 clone without tags (N1: side by side must still run and confirm a committed slowdown),
//! and an artifact name is taken in its run as soon as `CreateArtifact` reserved it, even when the
//! upload then failed and nothing was ever listed (N4: a re-run must still publish the night).
//! Helpers come from workflow_scenarios.rs.

use crate::support::nightly_repo::git;
use crate::support::workflow_harness;
use crate::workflow_scenarios::{bootstrap, conclusion, result, rows};

use serde_json::Value;
use workflow_harness::{Harness, RunSpec, ready_or_skip};

/// The restored history's regression summary of night `run_id`.
fn regression_summary(h: &Harness, run_id: &str) -> Value {
    let dest = tempfile::tempdir().unwrap();
    let root = dest.path().join("history");
    assert!(h.restore_to(&root), "a history to restore");
    let p = root.join(run_id).join("regression_summary.json");
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

/// Issue 36, N1: the nightly's checkout is GitHub's default (depth 1, no tags), so the anchor's
/// commit, one commit back, is not in it. A slowdown committed since the anchor must still be
/// compared side by side with the anchor's own code — tier1 fetches that commit from the
/// checkout's remote with the job's token — and confirmed.
#[test]
fn a_night_on_the_default_depth_1_checkout_confirms_a_committed_slowdown_side_by_side() {
    if !ready_or_skip("a_night_on_the_default_depth_1_checkout_confirms_a_committed_slowdown") {
        return;
    }
    let h = Harness::with_suite(|suite| {
        suite
            .replace("side_by_side: off\n", "side_by_side: auto\n")
            .replace(
                "    timeout_s: 60\n",
                "    timeout_s: 60\n    budget_s: 1\n    anchor_passes: 1\n",
            )
    });
    bootstrap(&h);
    let anchor = h.sha.clone();
    let target = h.source.join("fixtures/fixed_target.py");
    let code = std::fs::read_to_string(&target).unwrap();
    let slowed = code.replace(
        "os.environ.get(\"TIER1_FAKE_BASELINE_MS\", \"10\")",
        "os.environ.get(\"TIER1_FAKE_BASELINE_MS\", \"13\")",
    );
    assert_ne!(slowed, code);
    let slow = h.main_commit("fixtures/fixed_target.py", &slowed);
    let r = h.run(&[RunSpec::nightly().at(&slow)]);

    // The checkout GitHub makes by default: the night's commit alone, on branch main, no tag.
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let ws = h.workspace(0, run_id, "tier1");
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), slow);
    assert_eq!(git(&ws, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(git(&ws, &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(git(&ws, &["tag"]), "");

    // The gate fails on a regression confirmed side by side, and the night is published.
    assert_eq!(
        r.step(0, "tier1", "run_tier1")["outcome"],
        "failure",
        "{}",
        r.diagnose(0)
    );
    assert_eq!(
        result(&r, 0, "publish-history"),
        "success",
        "{}",
        r.diagnose(0)
    );
    let night = r.job(0, "tier1")["outputs"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = regression_summary(&h, &night)["side_by_side"].clone();
    assert_eq!(
        b["enabled"],
        true,
        "{b}\n{}",
        r.log(0, "tier1", "run_tier1")
    );
    assert_eq!(b["anchor_commit"], anchor.as_str());
    assert!(
        b["reason"].as_str().unwrap().contains("fetched alone"),
        "{b}"
    );
    let checks = b["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{b}");
    for c in checks {
        assert_eq!(c["verdict"], "worse", "{c}");
    }
}

/// Issue 36, N4: the publication's upload failed after `CreateArtifact` reserved the history's
/// name (the runner lost its connection mid-upload). "Re-run this job": the earlier attempt
/// published nothing the probe can see, and the same name again is GitHub's 409 — unless each
/// attempt publishes under a name of its own. The night must be merged.
#[test]
fn a_re_run_after_an_upload_failed_on_a_reserved_name_publishes_the_night() {
    let Some(h) = workflow_harness::harness_or_skip("a_re_run_after_an_upload_failed") else {
        return;
    };
    let before = bootstrap(&h);
    h.fake.fail_next_artifact_upload("tier1-history-");
    let r = h.run(&[RunSpec::nightly(), RunSpec::rerun(0, "publish-history")]);
    assert_eq!(
        result(&r, 0, "publish-history"),
        "failure",
        "{}",
        r.diagnose(0)
    );
    let run_id = r.run(0)["id"].as_u64().unwrap();
    let reserved = h.fake.reserved_artifact_names(run_id);
    assert_eq!(
        reserved.len(),
        1,
        "the failed upload's reservation: {reserved:?}"
    );
    assert!(
        !h.artifact_names(run_id).contains(&reserved[0]),
        "a reservation is never listed"
    );
    assert_eq!(r.run(1)["attempt"], 2);
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    let index = h.restored_index().unwrap();
    assert_eq!(
        rows(&index).len(),
        rows(&before).len() + 1,
        "the night is merged"
    );
    let night = r.job(0, "tier1")["outputs"]["run_id"].as_str().unwrap();
    assert!(
        rows(&index).iter().any(|x| x["run_id"] == night),
        "{index:#}"
    );
}
