//! The walk over candidates, newest first (contract §5.4-§5.6): the first usable one is installed;
//! for each failure and at the end of the list, [`decide`] says skip, refuse
//! or bootstrap.

use super::attempt::try_candidate;
use super::decide::{Decision, Failure, Refusal, RunVerdict, Situation, Walk, decide};
use super::discovery::{self, Candidate};
use super::error::{CandidateError, NO_CANDIDATE_MESSAGE, RestoreError, io_err};
use super::options::RestoreOptions;
use super::outcome::{Rejection, RestoreOutcome, bootstrap};
use crate::fsx;
use crate::store::ArtifactStore;
use std::path::Path;

fn reset_dir(dir: &Path) -> Result<(), RestoreError> {
    std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
    std::fs::create_dir(dir).map_err(io_err(dir))
}

/// Restore the newest valid canonical history from `store` into `opts.destination`, or report
/// bootstrap. On any error the destination is left absent or empty.
pub fn restore(
    store: &dyn ArtifactStore,
    opts: &RestoreOptions,
) -> Result<RestoreOutcome, RestoreError> {
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
    let dest = &opts.destination;
    let own = store.own_paths();
    let inputs: Vec<(&str, &Path)> = own.iter().map(|p| ("local store", p.as_path())).collect();
    fsx::check_output_root(dest, &inputs)?;
    fsx::stale::tidy_beside(&[dest]);
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
    let walk = Walk {
        allow_bootstrap: opts.allow_bootstrap,
        truncated: found.truncated,
    };
    if found.candidates.is_empty() {
        return match decide(Situation::NoCandidates, walk) {
            Decision::Refuse(_) => Err(RestoreError::Unavailable {
                message: format!("{NO_CANDIDATE_MESSAGE} {}", store.bootstrap_hint()),
            }),
            Decision::Skip | Decision::Bootstrap => {
                Ok(bootstrap(found.rejections, found.truncated))
            }
        };
    }
    let staged = fsx::StagedDir::new(dest).map_err(io_err(dest))?;
    let mut rejections = found.rejections.clone();
    for cand in &found.candidates {
        let h = &cand.history;
        tracing::debug!(artifact = %h.name, id = h.id, run = cand.run.id, "trying candidate");
        let err = match try_candidate(store, cand, opts, staged.path()) {
            Ok(r) => {
                staged.commit().map_err(io_err(dest))?;
                return Ok(RestoreOutcome {
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
                    discovery_truncated: found.truncated,
                    vault: (r.vault != Default::default()).then_some(r.vault),
                });
            }
            Err(e) => e,
        };
        reset_dir(staged.path())?;
        let (failure, message) = match err {
            CandidateError::Fatal(e) => return Err(e),
            CandidateError::Integrity(m) => (Failure::Integrity, m),
            CandidateError::Renewal(m) => (Failure::Renewal, m),
            CandidateError::Structural(m) => (Failure::Structural, m),
            CandidateError::Unavailable(m) => (Failure::Unavailable, m),
        };
        let run = RunVerdict::of(cand.run.conclusion.as_deref());
        match decide(Situation::Failed { failure, run }, walk) {
            Decision::Refuse(refusal) => return Err(refused(refusal, cand, message)),
            Decision::Skip => {
                if failure == Failure::Structural {
                    tracing::warn!(artifact = %h.name, %message, "skipping structurally bad package from a non-success run");
                } else {
                    tracing::warn!(artifact = %h.name, %message, "skipping: evidence unavailable, run did not succeed");
                }
                rejections.push(rejection(cand, message));
            }
            Decision::Bootstrap => {
                rejections.push(rejection(cand, message));
                return Ok(bootstrap(rejections, found.truncated));
            }
        }
    }
    match decide(Situation::Exhausted, walk) {
        Decision::Refuse(Refusal::Truncated) => Err(RestoreError::DiscoveryTruncated {
            message: format!(
                "no candidate of the first {} could be restored and more may exist",
                found.candidates.len()
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
        Decision::Skip | Decision::Bootstrap => Ok(bootstrap(rejections, found.truncated)),
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
