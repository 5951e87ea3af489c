//! The steps both producers share, a single night's ([`jobs::chain`](super::jobs::chain)) and a
//! sharded night's plan and combine jobs ([`sharded::chain`](super::sharded::chain)): the
//! class's live history restored before anything runs, the run id claimed under the producer
//! lock, and the candidate history uploaded once the evidence is verified.

use super::NightlyOutcome;
use super::jobs::{JobError, Plan, checkpoint, io, json, restore_into};
use super::locks::GroupLock;
use std::path::Path;

/// Restore the class's live history into `history_dir` before anything runs (renewal and
/// bootstrap as the request allows), recording restore's status.
pub(super) fn restore_history(
    plan: &Plan<'_>,
    history_dir: &Path,
    out: &mut NightlyOutcome,
) -> Result<(), JobError> {
    checkpoint()?;
    let restored = restore_into(plan, history_dir, plan.req.accept, plan.req.bootstrap)?;
    out.restore = json(&restored);
    std::fs::create_dir_all(history_dir).map_err(io(history_dir))
}

/// The run's id ([`fresh_run_id`]), noted on the producer lock so the next producer does not
/// take it, and recorded in the outcome.
pub(super) fn claim_run_id(
    plan: &Plan<'_>,
    history_dir: &Path,
    producer: &mut GroupLock,
    out: &mut NightlyOutcome,
) -> Result<String, JobError> {
    let commit = plan.git.commit.clone().unwrap_or_default();
    let run_id = fresh_run_id(history_dir, &producer.note(), &commit);
    producer.set_note(&run_id).map_err(io(plan.work))?;
    out.run_id = Some(run_id.clone());
    Ok(run_id)
}

/// Upload the candidate history (`<prefix>candidate-history-<suffix>`), only after the evidence
/// was uploaded and verified.
pub(super) fn upload_candidate(
    plan: &Plan<'_>,
    suffix: &str,
    history_dir: &Path,
) -> Result<(), JobError> {
    plan.store.upload_dir_zipped(
        plan.wf.id,
        &plan.names.artifact_prefix.candidate_history(suffix),
        history_dir,
        super::RETENTION_DAYS,
    )?;
    Ok(())
}

/// The reference run id `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>`; it has one-second resolution, so
/// when the restored history already holds this second's id, or the previous producer took it
/// (back-to-back or queued local runs), wait for the next second rather than change the format.
pub(super) fn fresh_run_id(history_dir: &Path, previous: &str, commit: &str) -> String {
    let mut id = crate::run::default_run_id_now(Some(commit));
    for _ in 0..3 {
        if id != previous && !history_dir.join(&id).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1000));
        id = crate::run::default_run_id_now(Some(commit));
    }
    id
}
