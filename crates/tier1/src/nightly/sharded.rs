//! A sharded night against the local store (docs/sharding.md §8), the same steps the sharded
//! workflow runs as jobs: the plan job (restore the class's history once, plan), the shard jobs
//! one after another (each measures its targets, packs its package, uploads it and verifies the
//! stored digest; a shard that fails is left without a package, as a failed matrix job is), the
//! combine job (fetch, verify, merge, gate, candidate, combined evidence upload) and then the
//! publication or promotion job, exactly as a single night's.

use super::jobs::{JobError, Plan, checkpoint, json, upload_verified};
use super::publication::{Produced, publish};
use super::{NightlyOutcome, decide, producer};
use crate::exit::{Classify, Exit};
use crate::fsx::fault::{self, Point};
use crate::shard::ShardError;
use crate::shard::combine::{CombineCommand, CombineOutcome, combine};
use crate::shard::plan_cmd::{PlanCommand, PlanOutcome, plan};
use crate::shard::run_cmd::{ShardRunCommand, run_shard};
use crate::store::{ArtifactMeta, ArtifactStore};
use crate::suite::Suite;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The plan, `shards` shard jobs, the combine job, then publication or promotion.
pub(super) fn chain(p: &Plan<'_>, shards: u32, out: &mut NightlyOutcome) -> Result<Exit, JobError> {
    let Plan {
        req,
        names,
        wf,
        work,
        ..
    } = *p;
    checkpoint()?;
    // The shards measure one after another on this machine: one producer at a time.
    let mut producer = super::locks::acquire(&req.store_dir, super::locks::PRODUCER)?;
    let suffix = format!("{}-{}", wf.id, wf.run_attempt);
    let history_dir = work.join("history");
    producer::restore_history(p, &history_dir, out)?;
    // Plan job.
    let run_id = producer::claim_run_id(p, &history_dir, &mut producer, out)?;
    let planned = plan_night(p, shards, &history_dir, &run_id)?;
    // Shard jobs, one after another (fail-fast off: a failed shard does not stop the others).
    let jobs = shard_jobs(p, &planned, &history_dir)?;
    drop(producer);
    // Combine job.
    checkpoint()?;
    let evidence_name = names.artifact_prefix.evidence(&suffix);
    let package = work.join("combined").join(&evidence_name);
    let combined = combine_night(p, &planned, &history_dir, &evidence_name, &package);
    out.shards = Some(json!({
        "plan_digest": planned.digest,
        "plan": planned.outcome.plan,
        "jobs": jobs,
        "record": combined.as_ref().ok().map(|c| &c.shards),
    }));
    let combined = combined?;
    let run_exit = combined.run.exit();
    out.run = json(&combined.run);
    out.ending = Some(combined.run.ending.clone());
    let Some(digest) = combined.digest.clone().filter(|_| combined.recorded) else {
        // An incomplete night records nothing (the shards' packages stay in the run).
        out.failure = combined.run.gate_message();
        return Ok(decide::incomplete_exit(run_exit));
    };
    let uploaded = upload_verified(p.store, wf.id, &evidence_name, &package, &digest)?;
    out.evidence = Some(json!({
        "name": evidence_name, "id": uploaded.id, "digest": digest,
        "shards": combined.shards.delivered().filter_map(|s| s.artifact.clone()).collect::<Vec<_>>(),
    }));
    producer::upload_candidate(p, &suffix, &history_dir)?;
    let shard_metas = delivered_shards(p, &combined)?;
    let suite = Suite::discover(
        req.suite_config.as_deref(),
        &req.repo_root,
        Some(&history_dir),
    )
    .map_err(crate::run::RunError::from)?
    .suite;
    publish(
        p,
        out,
        &Produced {
            history_dir,
            run_id,
            evidence_name,
            evidence: uploaded,
            evidence_digest: digest.to_string(),
            suffix,
            suite: &suite,
            run_exit,
            gate_message: combined.run.gate_message(),
            shards: shard_metas,
        },
    )
}

/// A night's plan: where it was written, its outcome and its digest.
struct Planned {
    /// `<work>/plan.json`.
    file: PathBuf,
    /// What the plan job printed.
    outcome: PlanOutcome,
    /// The plan's digest, which every later job expects.
    digest: String,
}

/// The plan job: the night's shards planned over the restored history.
fn plan_night(
    p: &Plan<'_>,
    shards: u32,
    history_dir: &Path,
    run_id: &str,
) -> Result<Planned, JobError> {
    let Plan {
        req,
        wf,
        work,
        class,
        ..
    } = *p;
    let file = work.join("plan.json");
    let outcome = plan(&PlanCommand {
        history_root: history_dir.to_path_buf(),
        output: file.clone(),
        suite_config: req.suite_config.clone(),
        repo_root: req.repo_root.clone(),
        profile: req.profile.clone(),
        runner_class: class.map(str::to_string),
        shards: Some(shards),
        run_id: Some(run_id.to_string()),
        workflow_run_id: wf.id,
        attempt: wf.run_attempt,
        artifact_prefix: req.artifact_prefix.clone(),
        anchor_candidate: req.accept,
    })?;
    let digest = outcome.plan.digest().to_string();
    Ok(Planned {
        file,
        outcome,
        digest,
    })
}

/// The shard jobs, one after another: each measures its targets and packs its package, which is
/// uploaded and its digest verified. A failed shard is recorded and left without a package
/// unless it was cancelled ([`decide::shard_failure_stops`]). Returns the jobs' records.
fn shard_jobs(p: &Plan<'_>, planned: &Planned, history_dir: &Path) -> Result<Vec<Value>, JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        work,
        ..
    } = *p;
    let mut jobs = Vec::new();
    for k in 1..=planned.outcome.plan.shards {
        checkpoint()?;
        let name = names.artifact_prefix.shard(wf.id, wf.run_attempt, k);
        let package = work.join(format!("shard-{k}")).join(&name);
        let ran = fault::hit(Point::Shard, &package)
            .map_err(|e| ShardError::Io {
                path: package.display().to_string(),
                source: e,
            })
            .and_then(|()| {
                run_shard(&ShardRunCommand {
                    plan: planned.file.clone(),
                    expected_plan_digest: Some(planned.digest.clone()),
                    shard: k,
                    history_root: history_dir.to_path_buf(),
                    evidence_root: work.join(format!("shard-{k}")).join("runs"),
                    package: package.clone(),
                    suite_config: req.suite_config.clone(),
                    repo_root: req.repo_root.clone(),
                    environment_json: Vec::new(),
                })
            });
        match ran {
            Ok(o) => {
                upload_verified(store, wf.id, &name, &package, &o.digest)?;
                jobs.push(json!({
                    "shard": k, "result": "success", "artifact": name, "digest": o.digest,
                    "targets": o.targets, "seconds": o.seconds,
                }));
            }
            Err(e) if decide::shard_failure_stops(e.exit()) => return Err(e.into()),
            Err(e) => {
                tracing::error!(shard = k, "shard job {k} failed: {e}");
                jobs.push(json!({"shard": k, "result": "failure", "error": e.to_string()}));
            }
        }
    }
    Ok(jobs)
}

/// The combine job: the shards' packages fetched, verified and merged into the night's run and
/// combined evidence `package`.
fn combine_night(
    p: &Plan<'_>,
    planned: &Planned,
    history_dir: &Path,
    evidence_name: &str,
    package: &Path,
) -> Result<CombineOutcome, ShardError> {
    let Plan {
        req,
        store,
        wf,
        work,
        ..
    } = *p;
    combine(
        &CombineCommand {
            plan: planned.file.clone(),
            expected_plan_digest: Some(planned.digest.clone()),
            history_root: history_dir.to_path_buf(),
            evidence_root: work.join("combined").join("runs"),
            package: package.to_path_buf(),
            evidence_artifact_name: evidence_name.to_string(),
            suite_config: req.suite_config.clone(),
            repo_root: req.repo_root.clone(),
            current_attempt: wf.run_attempt,
        },
        store,
    )
}

/// The delivered shards' packages as the store lists them (promotion downloads them).
fn delivered_shards(
    p: &Plan<'_>,
    combined: &CombineOutcome,
) -> Result<Vec<ArtifactMeta>, JobError> {
    let delivered: Vec<String> = combined
        .shards
        .delivered()
        .filter_map(|s| s.artifact.clone())
        .collect();
    let listing = p
        .store
        .list_run_artifacts(p.wf.id, &crate::restore::provenance::artifact_rejection)?;
    Ok(listing
        .items
        .into_iter()
        .filter(|a| delivered.contains(&a.name))
        .collect())
}
