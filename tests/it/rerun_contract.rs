//! Re-run safety of the jobs that publish a history (issue 20, defect 10): artifact names are
//! unique per run across attempts, so re-running a publication or promotion that succeeded would
//! meet its own `<prefix>-history-<suffix>` (upload-artifact: HTTP 409). Each such job and action
//! looks for that name first on a re-run (`download-artifact` by name, `continue-on-error`), and
//! every later step runs only when it was not found; the restore there includes the job's own run
//! (an earlier attempt's publication is live history). The scenarios that run this are in
//! workflow_scenarios.rs (`re_running_…`).

use crate::support::repo_files::yaml;
use serde_json::Value;

/// (file, path of the steps list, the upload step's name).
const PUBLISHERS: [(&str, &[&str], &str); 4] = [
    (
        ".github/workflows/tier1-nightly.yml",
        &["jobs", "publish-history", "steps"],
        "Upload published history",
    ),
    (
        ".github/workflows/tier1-promote.yml",
        &["jobs", "promote", "steps"],
        "Upload ratified history",
    ),
    (
        "publish/action.yml",
        &["runs", "steps"],
        "Upload published history",
    ),
    (
        "promote/action.yml",
        &["runs", "steps"],
        "Upload ratified history",
    ),
];

const GATE: &str = "steps.earlier.outcome != 'success'";

fn steps_of(rel: &str, path: &[&str]) -> Vec<Value> {
    let mut v = yaml(rel);
    for p in path {
        v = v[*p].clone();
    }
    v.as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{rel}: no steps at {path:?}"))
}

#[test]
fn every_publisher_skips_a_publication_an_earlier_attempt_of_its_run_made() {
    for (rel, path, upload) in PUBLISHERS {
        let steps = steps_of(rel, path);
        let guard = &steps[0];
        assert_eq!(guard["id"], "earlier", "{rel}: the first step looks for it");
        assert_eq!(guard["if"], "github.run_attempt != '1'", "{rel}");
        assert_eq!(guard["continue-on-error"], true, "{rel}");
        assert!(
            guard["uses"]
                .as_str()
                .unwrap_or_default()
                .starts_with("actions/download-artifact@"),
            "{rel}: {guard}"
        );
        let up = steps
            .iter()
            .find(|s| s["name"] == upload)
            .unwrap_or_else(|| panic!("{rel}: no step {upload}"));
        let uploaded = up["with"]["name"].as_str().unwrap_or_default();
        let looked_for = guard["with"]["name"].as_str().unwrap_or_default();
        // The upload may name it through an earlier step's output; both end in the suffix.
        assert!(
            looked_for.ends_with("-history-${{ env.TIER1_ARTIFACT_SUFFIX }}")
                || looked_for.ends_with("-history-${{ inputs.artifact_suffix }}")
                || looked_for.ends_with("-history-${{ inputs.artifact-suffix }}"),
            "{rel}: looks for {looked_for}, uploads {uploaded}"
        );
        for s in &steps[1..] {
            let cond = s["if"].as_str().unwrap_or_default();
            assert!(
                cond.contains(GATE),
                "{rel}: step {} runs after an earlier attempt published (if: {cond:?})",
                s["name"]
            );
        }
        let restore = steps
            .iter()
            .find(|s| {
                s["run"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("/tier1-restore\"")
            })
            .unwrap_or_else(|| panic!("{rel}: no restore"));
        let script = restore["run"].as_str().unwrap();
        assert!(script.contains("--include-current-run"), "{rel}: {script}");
        assert!(!script.contains("--current-run-id"), "{rel}: {script}");
    }
}
