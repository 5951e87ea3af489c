//! A single night's chain: the producer job (restore, run, bind, pack, upload the evidence and
//! verify its digest, upload the candidate), then [`publication`](super::publication), step by
//! step as the workflow runs it; the steps shared with a sharded night are in
//! [`producer`](super::producer).

use super::jobs::{JobError, Plan, checkpoint, json, upload_verified};
use super::publication::{Produced, publish};
use super::{NightlyOutcome, producer};
use crate::evidence::{bind, pack};
use crate::exit::Exit;
use crate::run::{self, RunRequest};
use crate::store::ArtifactMeta;
use crate::suite::Suite;
use std::path::Path;

/// Producer job, then publication or promotion. Returns the job's verdict.
pub(super) fn chain(plan: &Plan<'_>, out: &mut NightlyOutcome) -> Result<Exit, JobError> {
    let Plan {
        req,
        names,
        wf,
        work,
        ..
    } = *plan;
    checkpoint()?;
    let mut producer = super::locks::acquire(&req.store_dir, super::locks::PRODUCER)?;
    let suffix = format!("{}-{}", wf.id, wf.run_attempt);
    let evidence_name = names.artifact_prefix.evidence(&suffix);
    let history_dir = work.join("history");
    let runs_dir = work.join("runs");
    // Producer: restore before anything runs.
    producer::restore_history(plan, &history_dir, out)?;
    // Run the suite (continue-on-error on the acceptance path, as the workflow does).
    let dirs = RunDirs {
        history: &history_dir,
        runs: &runs_dir,
        evidence_name: &evidence_name,
    };
    let (suite, run_id, ran) = run_suite(plan, &dirs, &mut producer, out)?;
    // Bind, pack, upload evidence, verify its digest; the candidate only after that.
    let (uploaded, digest) = deliver_evidence(plan, &dirs, &run_id, out)?;
    producer::upload_candidate(plan, &suffix, &history_dir)?;
    drop(producer);
    publish(
        plan,
        out,
        &Produced {
            history_dir,
            run_id,
            evidence_name,
            evidence: uploaded,
            evidence_digest: digest,
            suffix,
            suite: &suite,
            run_exit: ran.exit(),
            gate_message: ran.gate_message(),
            shards: Vec::new(),
        },
    )
}

/// Where a single night's producer works.
struct RunDirs<'a> {
    /// The restored, then candidate, history.
    history: &'a Path,
    /// The run's evidence.
    runs: &'a Path,
    /// The evidence artifact's name.
    evidence_name: &'a str,
}

/// The suite discovered in the restored history, the run id claimed, and the suite run with the
/// class's profile. Returns the suite, the run id and the run's outcome.
fn run_suite(
    plan: &Plan<'_>,
    dirs: &RunDirs<'_>,
    producer: &mut super::locks::GroupLock,
    out: &mut NightlyOutcome,
) -> Result<(Suite, String, run::RunOutcome), JobError> {
    let Plan {
        req, git, class, ..
    } = *plan;
    let discovered = Suite::discover(
        req.suite_config.as_deref(),
        &req.repo_root,
        Some(dirs.history),
    )
    .map_err(run::RunError::from)?;
    let suite = discovered.suite;
    let profile = suite
        .class_profile(class, req.profile.as_deref())
        .map_err(|message| run::RunError::from(crate::suite::SuiteError::Choice { message }))?
        .unwrap_or_else(|| run::default_profile(&suite));
    let run_id = producer::claim_run_id(plan, dirs.history, producer, out)?;
    let backend = run::backend_for(&suite, &profile).map_err(run::RunError::from)?;
    let run_req = RunRequest {
        suite: &suite,
        suite_source: discovered.source,
        profile,
        run_id: run_id.clone(),
        history_root: dirs.history.to_path_buf(),
        evidence_root: dirs.runs.to_path_buf(),
        backend,
        anchor_candidate: req.accept,
        attestation: None,
        git: git.clone(),
        repo_root: req.repo_root.clone(),
        allow_dirty: false,
        evidence_artifact_name: Some(dirs.evidence_name.to_string()),
        hook: None,
        passes: None,
        runner_class: class.map(str::to_string),
        shard: None,
    };
    checkpoint()?;
    let ran = run::run(&run_req)?;
    out.run = json(&ran);
    out.ending = Some(ran.ending.clone());
    checkpoint()?;
    Ok((suite, run_id, ran))
}

/// The run's evidence bound to the commit, packed, uploaded and its stored digest verified.
/// Returns the uploaded artifact and its digest.
fn deliver_evidence(
    plan: &Plan<'_>,
    dirs: &RunDirs<'_>,
    run_id: &str,
    out: &mut NightlyOutcome,
) -> Result<(ArtifactMeta, String), JobError> {
    let git = plan.git;
    let commit = git.commit.clone().unwrap_or_default();
    bind::bind(&bind::BindRequest {
        run_id,
        evidence_root: dirs.runs,
        history_root: dirs.history,
        commit: &commit,
        dirty: git.dirty.unwrap_or(true),
        dirty_files: &git.dirty_files,
        evidence_artifact_name: Some(dirs.evidence_name),
    })?;
    let zip = plan.work.join(format!("{}.zip", dirs.evidence_name));
    let packed = pack::pack(dirs.runs, run_id, &zip)?;
    let uploaded = upload_verified(
        plan.store,
        plan.wf.id,
        dirs.evidence_name,
        &zip,
        &packed.digest,
    )?;
    out.evidence = Some(
        serde_json::json!({"name": dirs.evidence_name, "id": uploaded.id, "digest": packed.digest, "bytes": packed.bytes}),
    );
    Ok((uploaded, packed.digest.to_string()))
}
