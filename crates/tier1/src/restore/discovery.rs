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
    // 1. The runs to scan, newest first and capped.
    let (runs, mut truncated) = scan_runs(store, workflow, branch, current_run_id)?;
    // 2. Each run's history and evidence pairs, and the records the store skipped.
    let mut candidates = Vec::new();
    let mut rejections = Vec::new();
    for run in &runs {
        let found = run_candidates(store, run, prefix)?;
        truncated |= found.truncated;
        candidates.extend(found.candidates);
        rejections.extend(found.rejections);
    }
    // 3. The candidates newest first and capped; none found by a truncated scan is a refusal.
    truncated |= newest_first(
        &mut candidates,
        |c| (c.history.created_at, c.history.id),
        MAX_ARTIFACT_CANDIDATES,
    );
    if truncated && candidates.is_empty() {
        return Err(nothing_found(workflow, branch, runs.len(), &rejections));
    }
    Ok(Discovery {
        candidates,
        truncated,
        runs_scanned: runs.len(),
        rejections,
    })
}

/// The runs of `workflow` on `branch` that can be provenance (the others rejected with a
/// warning), without `current_run_id`, newest first, at most [`MAX_RUNS_TO_SCAN`]. Returns them
/// and whether the listing was incomplete or the cap was hit.
fn scan_runs(
    store: &dyn ArtifactStore,
    workflow: &str,
    branch: &str,
    current_run_id: Option<u64>,
) -> Result<(Vec<WorkflowRun>, bool), RestoreError> {
    let repository = store.repository().to_string();
    let keep = |run: &WorkflowRun| match provenance::run_rejection(run, &repository) {
        Some(why) => {
            tracing::warn!("run {} rejected: {why}", run.id);
            false
        }
        None => true,
    };
    // One more than the scan cap: a longer list proves the scan is truncated.
    let listing = store.list_runs_where(workflow, branch, MAX_RUNS_TO_SCAN + 1, &keep)?;
    let mut runs: Vec<WorkflowRun> = listing
        .items
        .into_iter()
        .filter(|r| scanned(r.id, current_run_id))
        .collect();
    let capped = newest_first(&mut runs, |r| (r.created_at, r.id), MAX_RUNS_TO_SCAN);
    Ok((runs, listing.truncated || capped))
}

/// What one run holds.
struct RunFinds {
    /// Its history artifacts paired with unexpired evidence.
    candidates: Vec<Candidate>,
    /// The records the store skipped, as rejections.
    rejections: Vec<Rejection>,
    /// Its listing was incomplete, or a skipped record may hide a candidate.
    truncated: bool,
}

/// The candidates of one run: each unexpired history artifact whose night's evidence artifact is
/// in the run too (the latest attempt of each name), and the records the store skipped.
fn run_candidates(
    store: &dyn ArtifactStore,
    run: &WorkflowRun,
    prefix: &ArtifactPrefix,
) -> Result<RunFinds, RestoreError> {
    let arts = store.list_run_artifacts(run.id, &provenance::artifact_rejection)?;
    let mut truncated = arts.truncated;
    let mut rejections = Vec::new();
    for s in &arts.skipped {
        truncated |= may_hide_candidate(&s.name, prefix);
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
    let mut candidates = Vec::new();
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
    Ok(RunFinds {
        candidates,
        rejections,
        truncated,
    })
}

/// A run is scanned unless its id is not a real run's (0) or it is the current run.
fn scanned(id: u64, current_run_id: Option<u64>) -> bool {
    id > 0 && Some(id) != current_run_id
}

/// A skipped artifact record named as a history or evidence artifact may hide a newer candidate:
/// discovery is then incomplete.
fn may_hide_candidate(name: &str, prefix: &ArtifactPrefix) -> bool {
    name.starts_with(&prefix.history("")) || name.starts_with(&prefix.evidence(""))
}

/// Sort `items` newest first by `key` (creation time, then id) and keep at most `cap`. Returns
/// whether any were cut.
fn newest_first<T, K: Ord>(items: &mut Vec<T>, key: impl Fn(&T) -> K, cap: usize) -> bool {
    items.sort_by_key(|i| std::cmp::Reverse(key(i)));
    let cut = items.len() > cap;
    items.truncate(cap);
    cut
}

/// The refusal of a truncated scan that found no candidate, naming the records skipped.
fn nothing_found(
    workflow: &str,
    branch: &str,
    runs: usize,
    rejections: &[Rejection],
) -> RestoreError {
    let skipped: Vec<String> = rejections
        .iter()
        .map(|r: &Rejection| {
            format!(
                "{} (id {}, run {}): {}",
                r.artifact_name, r.artifact_id, r.workflow_run_id, r.reason
            )
        })
        .collect();
    RestoreError::DiscoveryTruncated {
        message: format!(
            "the run scan of {workflow} on {branch} was truncated after {runs} runs and found no history candidate{}",
            if skipped.is_empty() {
                String::new()
            } else {
                format!("; skipped: {}", skipped.join("; "))
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanned_and_hiding_rows() {
        for (id, current, want) in [
            (7, None, true),
            (7, Some(8), true),
            (7, Some(7), false),
            (0, None, false),
        ] {
            assert_eq!(scanned(id, current), want, "run {id}, current {current:?}");
        }
        let p = ArtifactPrefix::default();
        for (name, hides) in [
            ("tier1-history-7-1", true),
            ("tier1-history-7-1-publication-2", true),
            ("tier1-evidence-7-1", true),
            ("tier1-candidate-history-7-1", false),
            ("tier1-shard-7-1-1", false),
            ("other-history-7-1", false),
        ] {
            assert_eq!(may_hide_candidate(name, &p), hides, "{name}");
        }
    }

    #[test]
    fn newest_first_rows() {
        // (created, id): newest first, the higher id first at one time; cut to the cap.
        /// Items as (created, id).
        type Items = Vec<(u32, u64)>;
        let rows: [(Items, usize, Items, bool); 4] = [
            (vec![], 2, vec![], false),
            (
                vec![(1, 1), (3, 2), (2, 3)],
                3,
                vec![(3, 2), (2, 3), (1, 1)],
                false,
            ),
            (vec![(1, 1), (1, 5), (1, 3)], 2, vec![(1, 5), (1, 3)], true),
            (
                vec![(2, 9), (5, 1), (5, 2), (4, 4)],
                3,
                vec![(5, 2), (5, 1), (4, 4)],
                true,
            ),
        ];
        for (mut items, cap, want, cut) in rows {
            assert_eq!(newest_first(&mut items, |i| *i, cap), cut);
            assert_eq!(items, want);
        }
    }
}
