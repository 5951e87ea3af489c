//! What the local main job is asked to do, and the workflow's request validation (the note, the
//! requester).

use super::NightlyError;
use chrono::{DateTime, Utc};
use std::path::PathBuf;

/// What the local main job is asked to do.
#[derive(Debug, Clone)]
pub struct NightlyRequest {
    /// The local store directory (created when absent).
    pub store_dir: PathBuf,
    /// `--suite-config`; None: [`crate::suite::Suite::discover`] after restore (the restored
    /// history's suite, else the checkout's only suite file, else the embedded suite).
    pub suite_config: Option<PathBuf>,
    /// Profile; None: `crate::run::default_profile` of the suite.
    pub profile: Option<String>,
    /// `--workflow`: the workflow file recorded; None: the suite's `workflow`, else
    /// `tier1-nightly.yml` (`crate::suite::DEFAULT_WORKFLOW`).
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
    /// `--shards N`: a sharded night (docs/sharding.md): plan, N shard jobs one after another,
    /// combine; None: the runner class's `shards`, else the suite's (a single job when 1).
    pub shards: Option<u32>,
    /// `--class NAME`: the runner class (its profile, history and artifact names).
    pub runner_class: Option<String>,
}

/// The workflow's "Validate canonical request" step, and the promotion's rules for the free text
/// it will record (the note, the requester), checked before anything runs.
pub(crate) fn validate_request(
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

/// `--branch`: a name git accepts for a branch (`git check-ref-format --branch`'s rules).
pub(crate) fn check_branch(branch: &str) -> Result<(), NightlyError> {
    let bad_char = branch
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(*c));
    let why = if branch.is_empty() {
        Some("it is empty".to_string())
    } else if let Some(c) = bad_char {
        Some(format!("it holds {c:?}"))
    } else if branch.starts_with(['-', '/', '.'])
        || branch.ends_with(['/', '.'])
        || branch.ends_with(".lock")
        || branch.contains("..")
        || branch.contains("//")
        || branch.contains("@{")
        || branch.contains("/.")
        || branch == "@"
    {
        Some("git does not accept it as a branch name".to_string())
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(NightlyError::Request(format!(
            "--branch: expected a branch name (as `git check-ref-format --branch` accepts), found {branch:?}: {why}; nothing was recorded"
        ))),
    }
}

/// `--profile`: a profile that one of the suites this run may use defines.
pub(crate) fn check_profile(
    profile: &str,
    suites: &[crate::suite::Suite],
) -> Result<(), NightlyError> {
    if suites.iter().any(|s| s.profile(profile).is_some()) {
        return Ok(());
    }
    let known: std::collections::BTreeSet<&str> = suites
        .iter()
        .flat_map(|s| s.profiles.keys().map(String::as_str))
        .collect();
    Err(NightlyError::Request(format!(
        "--profile: expected a profile of the suite ({}), found {profile:?}; nothing was recorded",
        known.into_iter().collect::<Vec<_>>().join(", ")
    )))
}

/// Who accepts: `--requester`, else `$GITHUB_TRIGGERING_ACTOR` (who started this attempt: on a
/// re-run `$GITHUB_ACTOR` is still the run's first actor), else `$GITHUB_ACTOR`, else `$USER`;
/// else `local-operator`, said out loud.
pub(super) fn resolve_requester(given: Option<String>) -> String {
    let from_env = || {
        ["GITHUB_TRIGGERING_ACTOR", "GITHUB_ACTOR", "USER"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|s| !s.trim().is_empty()))
    };
    given.or_else(from_env).unwrap_or_else(|| {
        tracing::warn!(
            "no --requester, $GITHUB_TRIGGERING_ACTOR, $GITHUB_ACTOR or $USER: the acceptance is recorded for \"local-operator\""
        );
        "local-operator".into()
    })
}

#[cfg(test)]
mod tests;
