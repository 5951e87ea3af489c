//! Discovery of history candidates (contract §5.3): runs of the workflow on the branch, newest
//! first and capped, each history artifact paired with its run's evidence artifact. Runs of every
//! status count (not only completed ones, as the contract has it): a run whose publication job just
//! released the lock is still in progress for some seconds, and the next publisher must see its
//! history (docs/github-store.md, "Why runs of every status"). An
//! artifact record the store skipped is a recorded rejection; a skipped history or evidence record
//! also marks discovery incomplete (a newer candidate may hide behind it: never bootstrap over it).

use super::provenance;
use super::{MAX_ARTIFACT_CANDIDATES, MAX_RUNS_TO_SCAN, Rejection, RestoreError};
use crate::artifacts::ArtifactPrefix;
use crate::store::{ArtifactMeta, ArtifactStore, WorkflowRun};

/// A history artifact with its run; the same run also holds the evidence artifact of the same
/// suffix (discovery keeps only such pairs; the anchor's evidence is checked on its own).
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// The history artifact.
    pub(crate) history: ArtifactMeta,
    /// The run that uploaded both.
    pub(crate) run: WorkflowRun,
}

/// What discovery found.
#[derive(Debug, Clone)]
pub(crate) struct Discovery {
    /// Candidates, newest history artifact first, at most [`MAX_ARTIFACT_CANDIDATES`].
    pub(crate) candidates: Vec<Candidate>,
    /// True when a cap was hit or a listing was incomplete: more candidates may exist.
    pub(crate) truncated: bool,
    /// Runs scanned.
    pub(crate) runs_scanned: usize,
    /// Artifact records the store skipped, as rejections.
    pub(crate) rejections: Vec<Rejection>,
}

/// Of several artifacts with one name in a run (re-run attempts), the one with the highest id.
fn latest_named<'a>(arts: &'a [ArtifactMeta], name: &str) -> Option<&'a ArtifactMeta> {
    arts.iter()
        .filter(|a| a.name == name && !a.expired)
        .max_by_key(|a| a.id)
}

/// Find history candidates (`<prefix>-history-<suffix>[-publication-<attempt>]` paired with
/// `<prefix>-evidence-<suffix>`)
/// of `workflow` on `branch`, skipping `current_run_id`.
pub(crate) fn discover(
    store: &dyn ArtifactStore,
    workflow: &str,
    branch: &str,
    current_run_id: Option<u64>,
    prefix: &ArtifactPrefix,
) -> Result<Discovery, RestoreError> {
    // One more than the scan cap: a longer list proves the scan is truncated.
    let repository = store.repository().to_string();
    let keep = |run: &WorkflowRun| match provenance::run_rejection(run, &repository) {
        Some(why) => {
            tracing::warn!("run {} rejected: {why}", run.id);
            false
        }
        None => true,
    };
    let listing = store.list_runs_where(workflow, branch, MAX_RUNS_TO_SCAN + 1, &keep)?;
    let mut truncated = listing.truncated;
    let mut runs: Vec<WorkflowRun> = listing
        .items
        .into_iter()
        .filter(|r| r.id > 0 && Some(r.id) != current_run_id)
        .collect();
    runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    if runs.len() > MAX_RUNS_TO_SCAN {
        truncated = true;
        runs.truncate(MAX_RUNS_TO_SCAN);
    }
    let mut candidates = Vec::new();
    let mut rejections = Vec::new();
    for run in &runs {
        let arts = store.list_run_artifacts(run.id, &provenance::artifact_rejection)?;
        truncated |= arts.truncated;
        for s in &arts.skipped {
            truncated |=
                s.name.starts_with(&prefix.history("")) || s.name.starts_with(&prefix.evidence(""));
            rejections.push(Rejection {
                artifact_id: s.id,
                artifact_name: s.name.clone(),
                workflow_run_id: run.id,
                workflow_run_conclusion: run.conclusion.clone(),
                reason: format!("artifact record skipped: {}", s.reason),
            });
        }
        let mut names: Vec<(&str, &str)> = arts
            .items
            .iter()
            .filter(|a| !a.expired)
            .filter_map(|a| Some((a.name.as_str(), prefix.history_suffix(&a.name)?)))
            .collect();
        names.sort_unstable();
        names.dedup();
        for (name, suffix) in names {
            // A publication attempt's history pairs with its night's evidence.
            let evidence_name = prefix.evidence(crate::artifacts::night_suffix(suffix));
            let (Some(history), Some(_evidence)) = (
                latest_named(&arts.items, name),
                latest_named(&arts.items, &evidence_name),
            ) else {
                tracing::debug!(run = run.id, artifact = name, "no unexpired evidence pair");
                continue;
            };
            candidates.push(Candidate {
                history: history.clone(),
                run: run.clone(),
            });
        }
    }
    candidates.sort_by(|a, b| {
        b.history
            .created_at
            .cmp(&a.history.created_at)
            .then(b.history.id.cmp(&a.history.id))
    });
    if candidates.len() > MAX_ARTIFACT_CANDIDATES {
        truncated = true;
        candidates.truncate(MAX_ARTIFACT_CANDIDATES);
    }
    if truncated && candidates.is_empty() {
        let skipped: Vec<String> = rejections
            .iter()
            .map(|r: &Rejection| {
                format!(
                    "{} (id {}, run {}): {}",
                    r.artifact_name, r.artifact_id, r.workflow_run_id, r.reason
                )
            })
            .collect();
        return Err(RestoreError::DiscoveryTruncated {
            message: format!(
                "the run scan of {workflow} on {branch} was truncated after {} runs and found no history candidate{}",
                runs.len(),
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!("; skipped: {}", skipped.join("; "))
                }
            ),
        });
    }
    Ok(Discovery {
        candidates,
        truncated,
        runs_scanned: runs.len(),
        rejections,
    })
}
