//! The local main job's steps before its run is recorded ([`run`](super::job::run)): the request
//! refused early, the run's names and shard count, a clean checkout, the store opened and tidied,
//! the first anchor and the acceptance resolved. What they decide is in [`decide`](super::decide).

use super::decide;
use super::request::resolve_requester;
use super::{NightlyError, NightlyRequest, history_out, housekeeping, validate_request};
use crate::evidence::git::GitInfo;
use crate::store::StoreError;
use crate::store::local::LocalStore;
use crate::suite::RunNames;
use std::path::Path;

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

/// Refused before anything is recorded: the request's flags and free text, a suite given by path,
/// a branch name git would refuse, a profile no suite of this checkout defines, and where the
/// history is copied.
pub(super) fn check_request(req: &NightlyRequest) -> Result<(), NightlyError> {
    validate_request(req.accept, req.bootstrap, req.note.as_deref())?;
    if let Some(r) = &req.requester {
        crate::promote::check_free_text("--requester", r).map_err(NightlyError::Request)?;
    }
    // A suite given by path is checked before anything runs (one found by discovery is checked
    // once the history that names it is restored).
    if let Some(path) = &req.suite_config {
        crate::suite::Suite::load(path)?;
    }
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
    Ok(())
}

/// The workflow and artifact names of this suite's runs (the artifact prefix the class's), and
/// the shard count of a sharded night.
pub(super) fn names_and_shards(
    req: &NightlyRequest,
    class: Option<&str>,
) -> Result<(RunNames, Option<u32>), NightlyError> {
    let mut names = crate::suite::run_names(
        req.workflow.as_deref(),
        req.artifact_prefix.as_deref(),
        req.suite_config.as_deref(),
        &req.repo_root,
    )?;
    let shards = sharding(req, class)?;
    names.artifact_prefix =
        crate::suite::class_prefix(&names.artifact_prefix, class).map_err(NightlyError::Request)?;
    Ok((names, shards))
}

/// The shard count of a sharded night, or None for one job ([`decide::shard_count`]). The class
/// must be one the suite declares, with the profile asked (if any) its own.
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
    decide::shard_count(req.shards, suite.shards_for(class))
}

/// The checkout, clean and at a commit (returned with it); the job's own outputs (the store, the
/// history copy) do not make it dirty.
pub(super) fn clean_checkout(req: &NightlyRequest) -> Result<(GitInfo, String), NightlyError> {
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
    Ok((git, commit))
}

/// The local store, created if absent, at the request's clock, with what earlier jobs left tidied.
pub(super) fn open_store(req: &NightlyRequest) -> Result<LocalStore, NightlyError> {
    std::fs::create_dir_all(&req.store_dir).map_err(|e| StoreError::Io {
        path: req.store_dir.display().to_string(),
        source: e,
    })?;
    let mut store = LocalStore::create(&req.store_dir, &local_repository(&req.store_dir))?;
    if let Some(now) = req.now {
        store = store.with_now(now);
    }
    housekeeping::tidy(&store, req.history_out.as_deref())?;
    Ok(store)
}

/// With nothing published to the store yet and `--auto-bootstrap`, this run establishes the first
/// anchor ([`decide::first_anchor`]): bootstrap and accept (with the note of a first anchor)
/// are turned on in `req`. Returns whether it was.
pub(super) fn first_anchor(
    req: &mut NightlyRequest,
    store: &LocalStore,
    names: &RunNames,
) -> Result<bool, NightlyError> {
    let published = store
        .load()?
        .artifacts
        .iter()
        .any(|a| names.artifact_prefix.history_suffix(&a.name).is_some());
    if !decide::first_anchor(published, req.auto_bootstrap, req.bootstrap) {
        return Ok(false);
    }
    tracing::warn!(
        "no history has been published to the local store {} yet: this run establishes the first anchor (an automatic, recorded bootstrap)",
        req.store_dir.display()
    );
    req.bootstrap = true;
    if !req.accept {
        req.accept = true;
        req.note =
            Some("Local store initialised by tier1-nightly: first anchor of this machine".into());
    }
    Ok(true)
}

/// `--requester` only with an acceptance, which records who accepts (the one named, else the
/// resolved user).
pub(super) fn resolve_acceptance(req: &mut NightlyRequest) -> Result<(), NightlyError> {
    decide::requester_needs_accept(req.requester.is_some(), req.accept)?;
    if req.accept {
        req.requester = Some(resolve_requester(req.requester.take()));
    }
    Ok(())
}
