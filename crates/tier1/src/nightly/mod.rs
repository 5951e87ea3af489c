//! `tier1-nightly`: the workflow's job chain run locally against the local store, in the same
//! order: validate the request → restore → run → bind → pack → upload evidence → verify its digest →
//! upload the candidate → publish (normal) or promote (accept) after restoring live history again
//! → record the run's conclusion. The same core functions serve the GitHub jobs.

pub mod history_out;
mod housekeeping;
mod jobs;
pub mod locks;

use crate::exit::{Classify, Exit};
use crate::store::StoreError;
use crate::store::local::{LocalStore, NewRun};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use jobs::JobError;

/// Workflow file the local runs are recorded under unless the suite or `--workflow` names the
/// project's own ([`crate::suite::run_names`]).
pub const WORKFLOW_FILE: &str = crate::suite::DEFAULT_WORKFLOW;
/// Artifact retention, as in the workflow.
pub const RETENTION_DAYS: u32 = 90;

/// What the local main job is asked to do.
#[derive(Debug, Clone)]
pub struct NightlyRequest {
    /// The local store directory (created when absent).
    pub store_dir: PathBuf,
    /// `--suite-config`; None: [`crate::suite::Suite::discover`] after restore (the restored
    /// history's suite, else the checkout's only suite file, else the embedded suite).
    pub suite_config: Option<PathBuf>,
    /// Profile; None: [`crate::run::default_profile`] of the suite.
    pub profile: Option<String>,
    /// `--workflow`: the workflow file recorded; None: the suite's `workflow`, else
    /// [`WORKFLOW_FILE`].
    pub workflow: Option<String>,
    /// `--artifact-prefix`; None: the suite's `artifact_prefix`, else `tier1`.
    pub artifact_prefix: Option<String>,
    /// The checkout (commit and cleanliness).
    pub repo_root: PathBuf,
    /// Branch recorded for the run.
    pub branch: String,
    /// `--bootstrap`: establish the first anchor (requires accept).
    pub bootstrap: bool,
    /// `--accept`: ratify this run as the new anchor through promotion.
    pub accept: bool,
    /// Public acceptance note (required with accept, refused without).
    pub note: Option<String>,
    /// Who requests the acceptance.
    pub requester: Option<String>,
    /// Bootstrap automatically while no history has been published to the store.
    pub auto_bootstrap: bool,
    /// Copy of the published history for inspection.
    pub history_out: Option<PathBuf>,
    /// Clock override for the store (tests of renewal and expiry).
    pub now: Option<DateTime<Utc>>,
    /// Keep the job's work directory.
    pub keep_work: bool,
}

/// What the job did, printed as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct NightlyOutcome {
    /// The local workflow run id.
    pub workflow_run_id: u64,
    /// The workflow file the run is recorded under.
    pub workflow: String,
    /// The artifact prefix of its artifacts.
    pub artifact_prefix: String,
    /// `success` or `failure`.
    pub conclusion: String,
    /// The tier1 run id.
    pub run_id: Option<String>,
    /// Bootstrap was used (explicitly or because the store was new).
    pub bootstrap: bool,
    /// The acceptance path ran.
    pub accept: bool,
    /// Who the acceptance is recorded for (accepting runs only).
    pub requester: Option<String>,
    /// Restore's status.
    pub restore: Option<serde_json::Value>,
    /// The run's result.
    pub run: Option<serde_json::Value>,
    /// Evidence artifact name and digest.
    pub evidence: Option<serde_json::Value>,
    /// The publish or promote result.
    pub publication: Option<serde_json::Value>,
    /// The history artifact published.
    pub history_artifact: Option<String>,
    /// Where the published history was copied.
    pub history_out: Option<String>,
    /// Why the job failed, when it did.
    pub failure: Option<String>,
    /// The job's verdict: `passed` exactly when the exit code is 0, with every failing condition
    /// (the run's gate and whatever later step failed), so the JSON never disagrees with the
    /// exit code.
    pub verdict: crate::gate::Verdict,
    /// The exit code (not serialized).
    #[serde(skip)]
    pub exit: Exit,
}

/// A request the job refuses before doing anything.
#[derive(Debug, thiserror::Error)]
pub enum NightlyError {
    /// The request breaks a rule of the workflow's request validation.
    #[error("{0}")]
    Request(String),
    /// The checkout cannot be bound.
    #[error("{0}")]
    Checkout(String),
    /// The store could not be opened or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An output root (`--store`, `--history-out`) is unusable: the message names it and the
    /// input it collides with; the exit code is the output-root rule's.
    #[error("{0}")]
    Output(String, Exit),
    /// SIGINT or SIGTERM arrived before the run was recorded.
    #[error("{0}")]
    Cancelled(crate::process::Cancelled),
    /// `--suite-config` is unreadable or invalid, or the workflow or artifact prefix (flag or
    /// suite field) is not usable.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
}

impl Classify for NightlyError {
    fn exit(&self) -> Exit {
        match self {
            NightlyError::Request(_) | NightlyError::Checkout(_) => Exit::Invalid,
            NightlyError::Store(e) => e.exit(),
            NightlyError::Output(_, exit) => *exit,
            NightlyError::Cancelled(_) => Exit::Cancelled,
            NightlyError::Suite(e) => e.exit(),
        }
    }
}

/// The workflow's "Validate canonical request" step, and the promotion's rules for the free text
/// it will record (the note, the requester), checked before anything runs.
pub fn validate_request(
    accept: bool,
    bootstrap: bool,
    note: Option<&str>,
) -> Result<(), NightlyError> {
    if let Some(n) = note {
        crate::promote::check_free_text("--note", n).map_err(NightlyError::Request)?;
    }
    let note_blank = note.is_none_or(|n| n.trim().is_empty());
    if accept && note_blank {
        return Err(NightlyError::Request(
            "A public acceptance note is required (--note) with --accept".into(),
        ));
    }
    if !accept && !note_blank {
        return Err(NightlyError::Request(
            "--note requires --accept (acceptance_note requires accept_history_anchor)".into(),
        ));
    }
    if bootstrap && !accept {
        return Err(NightlyError::Request(
            "--bootstrap requires protected anchor acceptance (--accept with --note)".into(),
        ));
    }
    Ok(())
}

/// The repository name a local store models: `local/<store dir name>`.
pub fn local_repository(store_dir: &Path) -> String {
    let name = store_dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| crate::fsx::is_safe_component(n))
        .unwrap_or_else(|| "store".into());
    format!("local/{name}")
}

/// Who accepts: `--requester`, else `$GITHUB_ACTOR`, else `$USER`; else `local-operator`, said
/// out loud.
fn resolve_requester(given: Option<String>) -> String {
    let from_env = || {
        ["GITHUB_ACTOR", "USER"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|s| !s.trim().is_empty()))
    };
    given.or_else(from_env).unwrap_or_else(|| {
        tracing::warn!(
            "no --requester, $GITHUB_ACTOR or $USER: the acceptance is recorded for \"local-operator\""
        );
        "local-operator".into()
    })
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
    history_out::check(&history_out::Roots {
        store: &req.store_dir,
        history_out: req.history_out.as_deref(),
        checkout: &req.repo_root,
        suite: req.suite_config.as_deref(),
    })?;
    let names = crate::suite::run_names(
        req.workflow.as_deref(),
        req.artifact_prefix.as_deref(),
        req.suite_config.as_deref(),
        &req.repo_root,
    )?;
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
        failure: None,
        verdict: crate::gate::Verdict {
            passed: false,
            failures: Vec::new(),
        },
        exit: Exit::Ok,
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
        };
        let r = jobs::chain(&plan, &mut outcome);
        if req.keep_work {
            let kept = work.keep();
            tracing::info!(dir = %kept.display(), "work directory kept");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_validation_matches_the_workflow() {
        assert!(validate_request(false, false, None).is_ok());
        assert!(validate_request(true, false, Some("why")).is_ok());
        assert!(validate_request(true, true, Some("why")).is_ok());
        let e = validate_request(true, false, Some("  "))
            .unwrap_err()
            .to_string();
        assert!(e.contains("acceptance note is required"), "{e}");
        let e = validate_request(false, false, Some("why"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--note requires --accept"), "{e}");
        let e = validate_request(false, true, None).unwrap_err().to_string();
        assert!(e.contains("--bootstrap requires"), "{e}");
    }
}
