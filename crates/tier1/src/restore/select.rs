//! The walk over candidates, newest first (contract §5.4-§5.6): the first usable one is installed;
//! for each failure and at the end of the list, [`decide`] says skip, refuse
//! or bootstrap. [`restore`] is the list of its steps.

use super::attempt::{Restored, try_candidate};
use super::decide::{Decision, Failure, Refusal, RunVerdict, Situation, Walk, decide};
use super::discovery::{self, Candidate};
use super::error::{CandidateError, NO_CANDIDATE_MESSAGE, RestoreError, io_err};
use super::options::RestoreOptions;
use super::outcome::{Rejection, RestoreOutcome, bootstrap};
use crate::fsx;
use crate::store::ArtifactStore;
use std::path::Path;

/// Restore the newest valid canonical history from `store` into `opts.destination`, or report
/// bootstrap. On any error the destination is left absent or empty.
pub fn restore(
    store: &dyn ArtifactStore,
    opts: &RestoreOptions,
) -> Result<RestoreOutcome, RestoreError> {
    // 1. The options, and the destination before anything is read.
    check_options(opts)?;
    let dest = &opts.destination;
    prepare_destination(store, dest)?;
    // 2. The candidates, newest first (§5.3); none at all is bootstrap or a refusal (§5.4).
    let found = discover(store, opts)?;
    let walk = Walk {
        allow_bootstrap: opts.allow_bootstrap,
        truncated: found.truncated,
    };
    if found.candidates.is_empty() {
        return no_candidates(store, walk, found.rejections);
    }
    // 3. Each candidate tried into the staged destination until one is restored, or skip, refuse
    // or bootstrap as its failure decides (§5.5, §5.6).
    let staged = fsx::StagedDir::new(dest).map_err(io_err(dest))?;
    let mut rejections = found.rejections.clone();
    for cand in &found.candidates {
        match try_next(store, cand, opts, staged.path(), walk)? {
            Tried::Restored(r) => {
                staged.commit().map_err(io_err(dest))?;
                return Ok(restored(cand, r, rejections, found.truncated));
            }
            Tried::Skipped(rejection) => rejections.push(rejection),
            Tried::Bootstrap(rejection) => {
                rejections.push(rejection);
                return Ok(bootstrap(rejections, found.truncated));
            }
        }
    }
    // 4. Every candidate skipped.
    exhausted(store, walk, found.candidates.len(), rejections)
}

/// The repository, workflow and branch are named.
fn check_options(opts: &RestoreOptions) -> Result<(), RestoreError> {
    for (name, v) in [
        ("repository", &opts.repository),
        ("workflow", &opts.workflow),
        ("branch", &opts.branch),
    ] {
        if v.trim().is_empty() {
            return Err(RestoreError::Invalid(format!(
                "--{name}: expected a non-empty value, found {v:?}"
            )));
        }
    }
    Ok(())
}

/// The destination is usable and outside the store's own files; stale staging beside it goes.
fn prepare_destination(store: &dyn ArtifactStore, dest: &Path) -> Result<(), RestoreError> {
    let own = store.own_paths();
    let inputs: Vec<(&str, &Path)> = own.iter().map(|p| ("local store", p.as_path())).collect();
    fsx::check_output_root(dest, &inputs)?;
    fsx::stale::tidy_beside(&[dest]);
    Ok(())
}

/// The candidates of the options' workflow, branch and artifact prefix ([`discovery::discover`]).
fn discover(
    store: &dyn ArtifactStore,
    opts: &RestoreOptions,
) -> Result<discovery::Discovery, RestoreError> {
    let found = discovery::discover(
        store,
        &opts.workflow,
        &opts.branch,
        opts.current_run_id,
        &opts.artifact_prefix,
    )?;
    tracing::debug!(
        candidates = found.candidates.len(),
        runs = found.runs_scanned,
        truncated = found.truncated,
        "discovery"
    );
    Ok(found)
}

/// What trying one candidate came to.
enum Tried {
    /// Its history is in the staged tree.
    Restored(Restored),
    /// It failed and the walk goes on to the next, older one.
    Skipped(Rejection),
    /// It failed and restore reports bootstrap.
    Bootstrap(Rejection),
}

/// Try `cand` into `tree`; on a failure the tree is emptied and [`decide`] says skip, refuse (the
/// error) or bootstrap.
fn try_next(
    store: &dyn ArtifactStore,
    cand: &Candidate,
    opts: &RestoreOptions,
    tree: &Path,
    walk: Walk,
) -> Result<Tried, RestoreError> {
    let h = &cand.history;
    tracing::debug!(artifact = %h.name, id = h.id, run = cand.run.id, "trying candidate");
    let err = match try_candidate(store, cand, opts, tree) {
        Ok(r) => return Ok(Tried::Restored(r)),
        Err(e) => e,
    };
    reset_dir(tree)?;
    let (failure, message) = failure_of(err)?;
    let run = RunVerdict::of(cand.run.conclusion.as_deref());
    match decide(Situation::Failed { failure, run }, walk) {
        Decision::Refuse(refusal) => Err(refused(refusal, cand, message)),
        Decision::Skip => {
            if failure == Failure::Structural {
                tracing::warn!(artifact = %h.name, %message, "skipping structurally bad package from a non-success run");
            } else {
                tracing::warn!(artifact = %h.name, %message, "skipping: evidence unavailable, run did not succeed");
            }
            Ok(Tried::Skipped(rejection(cand, message)))
        }
        Decision::Bootstrap => Ok(Tried::Bootstrap(rejection(cand, message))),
    }
}

/// A candidate's failure class and message; a failure of the store or the disk is not the
/// candidate's and is restore's error.
fn failure_of(err: CandidateError) -> Result<(Failure, String), RestoreError> {
    Ok(match err {
        CandidateError::Fatal(e) => return Err(e),
        CandidateError::Integrity(m) => (Failure::Integrity, m),
        CandidateError::Renewal(m) => (Failure::Renewal, m),
        CandidateError::Structural(m) => (Failure::Structural, m),
        CandidateError::Unavailable(m) => (Failure::Unavailable, m),
    })
}

/// Empty a candidate's tree for the next one.
fn reset_dir(dir: &Path) -> Result<(), RestoreError> {
    std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
    std::fs::create_dir(dir).map_err(io_err(dir))
}

/// The status of a restored candidate.
fn restored(
    cand: &Candidate,
    r: Restored,
    rejections: Vec<Rejection>,
    truncated: bool,
) -> RestoreOutcome {
    let h = &cand.history;
    RestoreOutcome {
        status: "restored",
        history_restored: true,
        artifact_id: Some(h.id),
        artifact_name: Some(h.name.clone()),
        evidence_artifact_id: Some(r.evidence.id),
        evidence_artifact_name: Some(r.evidence.name.clone()),
        anchor_renewal_required: Some(r.renewal_required),
        rejections,
        workflow_run_id: Some(cand.run.id),
        anchor_run_id: Some(r.anchor_run_id),
        discovery_truncated: truncated,
        vault: (r.vault != Default::default()).then_some(r.vault),
    }
}

/// Discovery found no candidate at all (§5.4): bootstrap when allowed, else nothing restorable.
fn no_candidates(
    store: &dyn ArtifactStore,
    walk: Walk,
    rejections: Vec<Rejection>,
) -> Result<RestoreOutcome, RestoreError> {
    match decide(Situation::NoCandidates, walk) {
        Decision::Refuse(_) => Err(RestoreError::Unavailable {
            message: format!("{NO_CANDIDATE_MESSAGE} {}", store.bootstrap_hint()),
        }),
        Decision::Skip | Decision::Bootstrap => Ok(bootstrap(rejections, walk.truncated)),
    }
}

/// Every one of `tried` candidates was skipped (§5.6): refuse when discovery was truncated,
/// bootstrap when allowed, else nothing restorable (naming the rejected candidates).
fn exhausted(
    store: &dyn ArtifactStore,
    walk: Walk,
    tried: usize,
    rejections: Vec<Rejection>,
) -> Result<RestoreOutcome, RestoreError> {
    match decide(Situation::Exhausted, walk) {
        Decision::Refuse(Refusal::Truncated) => Err(RestoreError::DiscoveryTruncated {
            message: format!(
                "no candidate of the first {tried} could be restored and more may exist"
            ),
        }),
        Decision::Refuse(_) => {
            let reasons: Vec<String> = rejections
                .iter()
                .map(|r| {
                    format!(
                        "{} (run {}): {}",
                        r.artifact_name, r.workflow_run_id, r.reason
                    )
                })
                .collect();
            Err(RestoreError::Unavailable {
                message: format!(
                    "{NO_CANDIDATE_MESSAGE} {} Rejected candidates: {}",
                    store.bootstrap_hint(),
                    reasons.join("; ")
                ),
            })
        }
        Decision::Skip | Decision::Bootstrap => Ok(bootstrap(rejections, walk.truncated)),
    }
}

/// The rejection recorded for a skipped candidate (URLs redacted from the reason).
fn rejection(cand: &Candidate, reason: String) -> Rejection {
    Rejection {
        artifact_id: cand.history.id,
        artifact_name: cand.history.name.clone(),
        workflow_run_id: cand.run.id,
        workflow_run_conclusion: cand.run.conclusion.clone(),
        reason: crate::text::redact_urls(&reason).into_owned(),
    }
}

/// The error of a refusal met on a failed candidate.
fn refused(refusal: Refusal, cand: &Candidate, message: String) -> RestoreError {
    let h = &cand.history;
    match refusal {
        Refusal::Integrity => RestoreError::Integrity {
            artifact: h.name.clone(),
            artifact_id: h.id,
            run_id: cand.run.id,
            message,
        },
        Refusal::Renewal => RestoreError::RenewalRequired { message },
        Refusal::Structural => RestoreError::Structural {
            artifact: h.name.clone(),
            artifact_id: h.id,
            run_id: cand.run.id,
            conclusion: cand
                .run
                .conclusion
                .clone()
                .unwrap_or_else(|| "unknown".into()),
            message,
        },
        Refusal::Truncated => RestoreError::DiscoveryTruncated {
            message: format!("baseline evidence unavailable for {}: {message}", h.name),
        },
        Refusal::EvidenceUnavailable | Refusal::NothingRestorable => RestoreError::Unavailable {
            message: format!(
                "Tier-1 baseline evidence is unavailable for history artifact {} (id {}, run {}, conclusion {}): {message}. An operator must use the audited bootstrap recovery path.",
                h.name,
                h.id,
                cand.run.id,
                cand.run.conclusion.as_deref().unwrap_or("unknown")
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_of_rows() {
        let rows = [
            (
                CandidateError::Integrity("i".into()),
                Failure::Integrity,
                "i",
            ),
            (CandidateError::Renewal("r".into()), Failure::Renewal, "r"),
            (
                CandidateError::Structural("s".into()),
                Failure::Structural,
                "s",
            ),
            (
                CandidateError::Unavailable("u".into()),
                Failure::Unavailable,
                "u",
            ),
        ];
        for (err, failure, message) in rows {
            assert_eq!(failure_of(err).unwrap(), (failure, message.to_string()));
        }
        let fatal = failure_of(CandidateError::Fatal(RestoreError::Invalid("disk".into())));
        assert!(matches!(fatal, Err(RestoreError::Invalid(m)) if m == "disk"));
    }
}
