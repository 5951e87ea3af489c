//! The run's summary.json from its results file.

use super::RunError;
use crate::bench::result::{self, ResultsFile};
use crate::evidence;
use crate::evidence::git::GitInfo;
use crate::history::model::Summary;
use crate::suite::Suite;

/// The run's `summary.json` from its results file: targets by [`result::summarize`], aggregates by
/// [`crate::aggregate::compute`], identity from the suite and the checkout.
pub(crate) fn build_summary(
    suite: &Suite,
    results: &ResultsFile,
    git: &GitInfo,
    evidence_artifact_name: Option<&str>,
) -> Result<Summary, RunError> {
    let targets = result::summarize(results, suite)?;
    let run_id = &results.run_id;
    Ok(Summary {
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        description: suite.description.trim().to_string(),
        run_id: run_id.clone(),
        generated_at: results.timestamp.clone(),
        source_result_json: Some(evidence::results_rel(run_id)),
        source_manifest_json: Some(evidence::manifest_rel(run_id)),
        source_markdown_report: Some(evidence::report_rel(run_id)),
        source_git_commit: git.commit.clone(),
        source_git_dirty: git.dirty,
        source_manifest_git_commit: git.commit.clone(),
        evidence_artifact_name: evidence_artifact_name.map(str::to_string),
        environment: Some(results.environment.clone()),
        profile: Some(results.profile.clone()),
        summary: crate::aggregate::compute(&targets),
        targets,
        shards: None,
        extra: Default::default(),
    })
}
