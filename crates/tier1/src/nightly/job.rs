//! The local main job: the workflow's job chain against the local store, and its verdict, as a
//! list of steps ([`prepare`](super::prepare) before the run is recorded, the chain of
//! [`jobs`](super::jobs) or [`sharded`](super::sharded) after); what they decide is in
//! [`decide`](super::decide).

use super::{NightlyError, NightlyOutcome, NightlyRequest, decide, housekeeping, jobs, prepare};
use crate::exit::{Classify, Exit};
use crate::store::local::NewRun;
use crate::suite::RunNames;

/// Artifact retention, as in the workflow.
pub(crate) const RETENTION_DAYS: u32 = 90;

/// Run the local main job.
pub fn run(req: &NightlyRequest) -> Result<NightlyOutcome, NightlyError> {
    let mut req = req.clone();
    // 1. The request, the run's names and shard count, the checkout: refused before anything is
    // recorded.
    prepare::check_request(&req)?;
    let class = req.runner_class.clone();
    let (names, shards) = prepare::names_and_shards(&req, class.as_deref())?;
    let (git, commit) = prepare::clean_checkout(&req)?;
    if let Some(c) = crate::process::requested() {
        return Err(NightlyError::Cancelled(c));
    }
    // 2. The store; the first anchor of an empty one; who accepts.
    let store = prepare::open_store(&req)?;
    let auto_bootstrap = prepare::first_anchor(&mut req, &store, &names)?;
    prepare::resolve_acceptance(&mut req)?;
    // 3. The run recorded: from here on, whatever happens, it is completed below (or, if this
    // process is killed, by the next run, which finds its lease released).
    let mut new_run = NewRun::new(&names.workflow, &req.branch, &commit);
    new_run.event = decide::event(req.accept).into();
    let (wf, lease) = store.create_run_leased(&new_run)?;
    let mut outcome = new_outcome(&req, &names, wf.id, class.clone());
    // 4. The chain (sharded when the night is), in a work directory of the store.
    let result = work_dir(&req, wf.id).and_then(|work| {
        let plan = jobs::Plan {
            req: &req,
            names: &names,
            store: &store,
            wf: &wf,
            git: &git,
            work: work.path(),
            auto_bootstrap,
            class: class.as_deref(),
        };
        let r = match shards {
            Some(n) => super::sharded::chain(&plan, n, &mut outcome),
            None => super::single::chain(&plan, &mut outcome),
        };
        if req.keep_work {
            let kept = housekeeping::keep_work(&req.store_dir, wf.id, work.keep());
            outcome.kept_work = Some(kept.display().to_string());
        }
        r
    });
    // 5. The job's verdict, and the run completed with its conclusion.
    finish(&mut outcome, &result);
    store.complete_run(wf.id, &outcome.conclusion)?;
    drop(lease);
    Ok(outcome)
}

/// The outcome of a recorded run before its chain: failed until the chain says otherwise.
fn new_outcome(
    req: &NightlyRequest,
    names: &RunNames,
    workflow_run_id: u64,
    runner_class: Option<String>,
) -> NightlyOutcome {
    NightlyOutcome {
        workflow_run_id,
        workflow: names.workflow.clone(),
        artifact_prefix: names.artifact_prefix.to_string(),
        conclusion: "failure".into(),
        run_id: None,
        bootstrap: req.bootstrap,
        accept: req.accept,
        requester: req.requester.clone(),
        restore: None,
        run: None,
        evidence: None,
        publication: None,
        history_artifact: None,
        history_out: None,
        kept_work: None,
        vault: None,
        runner_class,
        shards: None,
        failure: None,
        verdict: crate::gate::Verdict {
            passed: false,
            failures: Vec::new(),
        },
        exit: Exit::Ok,
        ending: None,
    }
}

/// The job's work directory, fresh in the store (kept with `--keep-work`, else removed).
fn work_dir(req: &NightlyRequest, wf_id: u64) -> Result<tempfile::TempDir, jobs::JobError> {
    tempfile::Builder::new()
        .prefix(&crate::fsx::stale::work_prefix(wf_id))
        .tempdir_in(&req.store_dir)
        .map_err(|e| jobs::JobError::Io {
            path: req.store_dir.display().to_string(),
            source: e,
        })
}

/// The job's exit, failure, verdict and conclusion from the chain's result.
fn finish(outcome: &mut NightlyOutcome, result: &Result<Exit, jobs::JobError>) {
    match result {
        Ok(exit) => outcome.exit = *exit,
        Err(e) => {
            outcome.failure = Some(e.to_string());
            outcome.exit = e.exit();
        }
    }
    outcome.verdict = decide::job_verdict(outcome);
    outcome.conclusion = decide::conclusion(outcome.exit).into();
}
