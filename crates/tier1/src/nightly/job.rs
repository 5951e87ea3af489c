//! The local main job: the workflow's job chain against the local store, and its verdict.

use super::request::resolve_requester;
use super::{
    NightlyError, NightlyOutcome, NightlyRequest, history_out, housekeeping, jobs, validate_request,
};
use crate::exit::{Classify, Exit};
use crate::store::StoreError;
use crate::store::local::{LocalStore, NewRun};
use std::path::Path;

/// Artifact retention, as in the workflow.
pub(crate) const RETENTION_DAYS: u32 = 90;

/// The repository name a local store models: `local/<store dir name>`.
pub(crate) fn local_repository(store_dir: &Path) -> String {
    let name = store_dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| crate::fsx::is_safe_component(n))
        .unwrap_or_else(|| "store".into());
    format!("local/{name}")
}

/// Run the local main job.
pub fn run(req: &NightlyRequest) -> Result<NightlyOutcome, NightlyError> {
    let mut req = req.clone();
    validate_request(req.accept, req.bootstrap, req.note.as_deref())?;
    if let Some(r) = &req.requester {
        crate::promote::check_free_text("--requester", r).map_err(NightlyError::Request)?;
    }
    // A suite given by path is checked before anything runs (one found by discovery is checked
    // once the history that names it is restored).
    if let Some(path) = &req.suite_config {
        crate::suite::Suite::load(path)?;
    }
    // Refused before anything is recorded: a branch name git would refuse, a profile no suite of
    // this checkout defines.
    super::request::check_branch(&req.branch)?;
    if let Some(p) = &req.profile {
        super::request::check_profile(
            p,
            &crate::suite::Suite::candidates(req.suite_config.as_deref(), &req.repo_root)?,
        )?;
    }
    history_out::check(&history_out::Roots {
        store: &req.store_dir,
        history_out: req.history_out.as_deref(),
        checkout: &req.repo_root,
        suite: req.suite_config.as_deref(),
    })?;
    let mut names = crate::suite::run_names(
        req.workflow.as_deref(),
        req.artifact_prefix.as_deref(),
        req.suite_config.as_deref(),
        &req.repo_root,
    )?;
    let class = req.runner_class.clone();
    let shards = sharding(&req, class.as_deref())?;
    names.artifact_prefix = crate::suite::class_prefix(&names.artifact_prefix, class.as_deref())
        .map_err(NightlyError::Request)?;
    // The job's own outputs (the store, the history copy) do not make the checkout dirty.
    let outputs: Vec<&Path> = std::iter::once(req.store_dir.as_path())
        .chain(req.history_out.as_deref())
        .collect();
    let git = crate::run::detect_git(&req.repo_root, &outputs);
    let Some(commit) = git.commit.clone() else {
        return Err(NightlyError::Checkout(format!(
            "{}: not a git checkout: canonical history binds every run to a clean commit",
            req.repo_root.display()
        )));
    };
    if let Some(message) = git.dirty_message(&req.repo_root) {
        return Err(NightlyError::Checkout(message));
    }
    if let Some(c) = crate::process::requested() {
        return Err(NightlyError::Cancelled(c));
    }
    std::fs::create_dir_all(&req.store_dir).map_err(|e| StoreError::Io {
        path: req.store_dir.display().to_string(),
        source: e,
    })?;
    let mut store = LocalStore::create(&req.store_dir, &local_repository(&req.store_dir))?;
    if let Some(now) = req.now {
        store = store.with_now(now);
    }
    housekeeping::tidy(&store, req.history_out.as_deref())?;
    let published = store
        .load()?
        .artifacts
        .iter()
        .any(|a| names.artifact_prefix.history_suffix(&a.name).is_some());
    let mut auto_bootstrap = false;
    if !published && req.auto_bootstrap && !req.bootstrap {
        tracing::warn!(
            "no history has been published to the local store {} yet: this run establishes the first anchor (an automatic, recorded bootstrap)",
            req.store_dir.display()
        );
        req.bootstrap = true;
        auto_bootstrap = true;
        if !req.accept {
            req.accept = true;
            req.note = Some(
                "Local store initialised by tier1-nightly: first anchor of this machine".into(),
            );
        }
    }
    if req.requester.is_some() && !req.accept {
        return Err(NightlyError::Request(
            "--requester names who accepts an anchor, and this run accepts none: add --accept --note, or drop --requester".into(),
        ));
    }
    if req.accept {
        req.requester = Some(resolve_requester(req.requester.take()));
    }
    let mut new_run = NewRun::new(&names.workflow, &req.branch, &commit);
    new_run.event = if req.accept {
        "workflow_dispatch".into()
    } else {
        "schedule".into()
    };
    // From here on the run is recorded: whatever happens, it is completed below (or, if this
    // process is killed, by the next run, which finds its lease released).
    let (wf, lease) = store.create_run_leased(&new_run)?;
    let mut outcome = NightlyOutcome {
        workflow_run_id: wf.id,
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
        runner_class: class.clone(),
        shards: None,
        failure: None,
        verdict: crate::gate::Verdict {
            passed: false,
            failures: Vec::new(),
        },
        exit: Exit::Ok,
        ending: None,
    };
    let work = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::work_prefix(wf.id))
        .tempdir_in(&req.store_dir)
        .map_err(|e| jobs::JobError::Io {
            path: req.store_dir.display().to_string(),
            source: e,
        });
    let result = work.and_then(|work| {
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
            None => jobs::chain(&plan, &mut outcome),
        };
        if req.keep_work {
            let kept = housekeeping::keep_work(&req.store_dir, wf.id, work.keep());
            outcome.kept_work = Some(kept.display().to_string());
        }
        r
    });
    match &result {
        Ok(exit) => outcome.exit = *exit,
        Err(e) => {
            outcome.failure = Some(e.to_string());
            outcome.exit = e.exit();
        }
    }
    outcome.verdict = job_verdict(&outcome);
    outcome.conclusion = match outcome.exit {
        Exit::Ok => "success",
        Exit::Cancelled => "cancelled",
        _ => "failure",
    }
    .into();
    store.complete_run(wf.id, &outcome.conclusion)?;
    drop(lease);
    Ok(outcome)
}

/// The shard count of a sharded night, or None for one job: `--shards` (1 to 64), else the
/// class's or the suite's `shards` when more than 1. The class must be one the suite declares,
/// with the profile asked (if any) its own.
fn sharding(req: &NightlyRequest, class: Option<&str>) -> Result<Option<u32>, NightlyError> {
    if class.is_none() && req.shards.is_none() {
        let suite =
            crate::suite::Suite::discover(req.suite_config.as_deref(), &req.repo_root, None);
        return Ok(suite
            .ok()
            .map(|d| d.suite.shards_for(None))
            .filter(|n| *n > 1));
    }
    let suite =
        crate::suite::Suite::discover(req.suite_config.as_deref(), &req.repo_root, None)?.suite;
    if let Some(c) = class {
        suite
            .class_profile(Some(c), req.profile.as_deref())
            .map_err(NightlyError::Request)?;
    }
    match req.shards {
        Some(n) if !(1..=crate::suite::classes::MAX_SHARDS).contains(&n) => {
            Err(NightlyError::Request(format!(
                "--shards: expected 1 to {}, found {n}",
                crate::suite::classes::MAX_SHARDS
            )))
        }
        Some(n) => Ok(Some(n)),
        None => Ok(Some(suite.shards_for(class)).filter(|n| *n > 1)),
    }
}

/// The job's verdict: the run's gate failures, then the failure of whatever step ended the job;
/// `passed` exactly when the exit code is 0.
fn job_verdict(outcome: &NightlyOutcome) -> crate::gate::Verdict {
    let mut failures: Vec<String> = outcome
        .run
        .as_ref()
        .and_then(|r| r.get("verdict"))
        .and_then(|v| v.get("failures"))
        .and_then(|f| f.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(f) = &outcome.failure {
        failures.push(f.clone());
    }
    let passed = outcome.exit == Exit::Ok;
    if passed {
        // An accept dispatch ratifies a run whose own gate failed: the job passed.
        failures.clear();
    } else if failures.is_empty() {
        failures.push(format!("the job exited {}", outcome.exit.code()));
    }
    crate::gate::Verdict { passed, failures }
}
