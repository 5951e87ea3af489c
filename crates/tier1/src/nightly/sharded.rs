//! A sharded night against the local store (docs/sharding.md §8), the same steps the sharded
//! workflow runs as jobs: the plan job (restore the class's history once, plan), the shard jobs
//! one after another (each measures its targets, packs its package, uploads it and verifies the
//! stored digest; a shard that fails is left without a package, as a failed matrix job is), the
//! combine job (fetch, verify, merge, gate, candidate, combined evidence upload) and then the
//! publication or promotion job, exactly as a single night's.

use super::NightlyOutcome;
use super::jobs::{JobError, Plan, Produced, publish, restore_into, upload_verified};
use crate::exit::{Classify, Exit};
use crate::fsx::fault::{self, Point};
use crate::shard::ShardError;
use crate::shard::combine::{CombineCommand, combine};
use crate::shard::plan_cmd::{PlanCommand, plan};
use crate::shard::run_cmd::{ShardRunCommand, run_shard};
use crate::store::ArtifactStore;
use crate::suite::Suite;
use serde_json::json;

fn checkpoint() -> Result<(), JobError> {
    crate::process::requested().map_or(Ok(()), |c| Err(JobError::Cancelled(c)))
}

fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The plan, `shards` shard jobs, the combine job, then publication or promotion.
pub(super) fn chain(p: &Plan<'_>, shards: u32, out: &mut NightlyOutcome) -> Result<Exit, JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        work,
        class,
        ..
    } = *p;
    checkpoint()?;
    // The shards measure one after another on this machine: one producer at a time.
    let mut producer = super::locks::acquire(&req.store_dir, super::locks::PRODUCER)?;
    let suffix = format!("{}-{}", wf.id, wf.run_attempt);
    let history_dir = work.join("history");
    checkpoint()?;
    let restored = restore_into(p, &history_dir, req.accept, req.bootstrap)?;
    out.restore = serde_json::to_value(&restored).ok();
    std::fs::create_dir_all(&history_dir).map_err(io(&history_dir))?;

    // Plan job.
    let commit = p.git.commit.clone().unwrap_or_default();
    let run_id = super::jobs::fresh_run_id(&history_dir, &producer.note(), &commit);
    producer.set_note(&run_id).map_err(io(work))?;
    out.run_id = Some(run_id.clone());
    let plan_file = work.join("plan.json");
    let planned = plan(&PlanCommand {
        history_root: history_dir.clone(),
        output: plan_file.clone(),
        suite_config: req.suite_config.clone(),
        repo_root: req.repo_root.clone(),
        profile: req.profile.clone(),
        runner_class: class.map(str::to_string),
        shards: Some(shards),
        run_id: Some(run_id.clone()),
        workflow_run_id: wf.id,
        attempt: wf.run_attempt,
        artifact_prefix: req.artifact_prefix.clone(),
        anchor_candidate: req.accept,
    })?;
    let plan_digest = planned.plan.digest().to_string();

    // Shard jobs, one after another (fail-fast off: a failed shard does not stop the others).
    let mut jobs = Vec::new();
    for k in 1..=planned.plan.shards {
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
                    plan: plan_file.clone(),
                    expected_plan_digest: Some(plan_digest.clone()),
                    shard: k,
                    history_root: history_dir.clone(),
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
            Err(e) if e.exit() == Exit::Cancelled => return Err(e.into()),
            Err(e) => {
                tracing::error!(shard = k, "shard job {k} failed: {e}");
                jobs.push(json!({"shard": k, "result": "failure", "error": e.to_string()}));
            }
        }
    }
    drop(producer);

    // Combine job.
    checkpoint()?;
    let evidence_name = names.artifact_prefix.evidence(&suffix);
    let combined_dir = work.join("combined");
    let package = combined_dir.join(&evidence_name);
    let combined = combine(
        &CombineCommand {
            plan: plan_file.clone(),
            expected_plan_digest: Some(plan_digest.clone()),
            history_root: history_dir.clone(),
            evidence_root: combined_dir.join("runs"),
            package: package.clone(),
            evidence_artifact_name: evidence_name.clone(),
            suite_config: req.suite_config.clone(),
            repo_root: req.repo_root.clone(),
            current_attempt: wf.run_attempt,
        },
        store,
    );
    out.shards = Some(json!({
        "plan_digest": plan_digest,
        "plan": planned.plan,
        "jobs": jobs,
        "record": combined.as_ref().ok().map(|c| &c.shards),
    }));
    let combined = combined?;
    let run_exit = combined.run.exit();
    out.run = serde_json::to_value(&combined.run).ok();
    out.ending = Some(combined.run.ending.clone());
    let Some(digest) = combined.digest.clone().filter(|_| combined.recorded) else {
        // An incomplete night records nothing (the shards' packages stay in the run).
        out.failure = combined.run.gate_message();
        return Ok(if run_exit == Exit::Ok {
            Exit::Gate
        } else {
            run_exit
        });
    };
    let uploaded = upload_verified(store, wf.id, &evidence_name, &package, &digest)?;
    out.evidence = Some(json!({
        "name": evidence_name, "id": uploaded.id, "digest": digest,
        "shards": combined.shards.delivered().filter_map(|s| s.artifact.clone()).collect::<Vec<_>>(),
    }));
    store.upload_dir_zipped(
        wf.id,
        &names.artifact_prefix.candidate_history(&suffix),
        &history_dir,
        super::RETENTION_DAYS,
    )?;
    let delivered: Vec<String> = combined
        .shards
        .delivered()
        .filter_map(|s| s.artifact.clone())
        .collect();
    let listing =
        store.list_run_artifacts(wf.id, &crate::restore::provenance::artifact_rejection)?;
    let shard_metas = listing
        .items
        .into_iter()
        .filter(|a| delivered.contains(&a.name))
        .collect();
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
