//! Re-run safety of the jobs that publish a history (issue 20, defect 10; issue 36, N4): artifact
//! names are unique per run across attempts, and a name an upload reserved with `CreateArtifact`
//! stays taken even when that upload failed and nothing lists it (upload-artifact: HTTP 409). So
//! each such job and action publishes under a name of its own attempt
//! (`<prefix>-history-<suffix>-publication-<attempt>`), looks first, on a re-run, for any attempt's
//! publication (`download-artifact` by `pattern`, then a check that fails, `continue-on-error`,
//! when nothing came), and runs every later step only when none was found; the restore there
//! includes the job's own run (an earlier attempt's publication is live history). The scenarios
//! that run this are in workflow_github_behaviours.rs (`re_running_…`) and
//! workflow_github_defaults.rs (`a_re_run_after_an_upload_failed_on_a_reserved_name_…`).

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
        let (look, guard) = (&steps[0], &steps[1]);
        assert!(
            look["uses"]
                .as_str()
                .unwrap_or_default()
                .starts_with("actions/download-artifact@"),
            "{rel}: the first step looks for it: {look}"
        );
        assert_eq!(look["if"], "github.run_attempt != '1'", "{rel}");
        let pattern = look["with"]["pattern"].as_str().unwrap_or_default();
        let suffix = [
            "${{ env.TIER1_ARTIFACT_SUFFIX }}",
            "${{ inputs.artifact_suffix }}",
            "${{ inputs.artifact-suffix }}",
        ]
        .into_iter()
        .find(|x| pattern.ends_with(&format!("-history-{x}{{,-publication-*}}")))
        .unwrap_or_else(|| panic!("{rel}: looks for any attempt's publication, found {pattern}"));
        assert_eq!(
            guard["id"], "earlier",
            "{rel}: the second step says what it found"
        );
        assert_eq!(guard["if"], "github.run_attempt != '1'", "{rel}");
        assert_eq!(guard["continue-on-error"], true, "{rel}");
        assert!(
            guard["run"]
                .as_str()
                .unwrap_or_default()
                .contains("tier1-earlier-publication"),
            "{rel}: {guard}"
        );
        let up = steps
            .iter()
            .find(|s| s["name"] == upload)
            .unwrap_or_else(|| panic!("{rel}: no step {upload}"));
        let uploaded = up["with"]["name"].as_str().unwrap_or_default();
        // The upload names its own attempt, directly or through an earlier step's output.
        let named_here = uploaded
            == "${{ env.TIER1_ARTIFACT_PREFIX }}-history-${{ env.TIER1_ARTIFACT_SUFFIX }}-publication-${{ github.run_attempt }}"
            || uploaded.ends_with(&format!(
                "-history-{suffix}-publication-${{{{ github.run_attempt }}}}"
            ));
        let named_by_output = uploaded.starts_with("${{ steps.")
            && steps.iter().any(|s| {
                s["run"].as_str().unwrap_or_default().contains(
                    "-history-$TIER1_ARTIFACT_SUFFIX-publication-$GITHUB_RUN_ATTEMPT\" >> \"$GITHUB_OUTPUT\"",
                )
            });
        assert!(
            named_here || named_by_output,
            "{rel}: uploads {uploaded}, not a name of its own attempt"
        );
        for s in &steps[2..] {
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
