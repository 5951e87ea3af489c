//! What `tier1-run` and `tier1-compare run` both do before they measure: choose the suite and the
//! profile, read the checkout's identity and the attestations, and pick the backend.

use super::RunError;
use crate::bench::backend::Backend;
use crate::evidence::git::GitInfo;
use crate::suite::{Suite, SuiteSource};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The inputs of [`prepare`].
pub(crate) struct SetupRequest<'a> {
    /// `--suite-config`; None: [`Suite::discover`]'s rule.
    pub(crate) suite_config: Option<&'a Path>,
    /// `--profile`; None: [`super::default_profile`] of the suite.
    pub(crate) profile: Option<String>,
    /// The checkout whose commit and cleanliness are recorded.
    pub(crate) repo_root: &'a Path,
    /// The history whose recorded suite is the default, if the binary reads one.
    pub(crate) history_root: Option<&'a Path>,
    /// The trees the run writes (left out of the checkout's cleanliness).
    pub(crate) outputs: &'a [&'a Path],
    /// Attestation JSON files to embed in the manifest.
    pub(crate) environment_json: &'a [PathBuf],
    /// The runner class (docs/sharding.md); its profile is the run's.
    pub(crate) runner_class: Option<&'a str>,
}

/// The suite, profile, checkout identity, attestations and backend of a measuring run.
pub struct Setup {
    /// The suite.
    pub suite: Suite,
    /// How the suite was chosen.
    pub suite_source: SuiteSource,
    /// The profile.
    pub profile: String,
    /// The checkout's commit and cleanliness.
    pub git: GitInfo,
    /// The attestations, merged ([`super::read_attestations`]).
    pub attestation: Option<Value>,
    /// The backend the profile runs on.
    pub backend: Arc<dyn Backend>,
    /// The runner class, checked against the suite.
    pub runner_class: Option<String>,
}

/// Choose the suite ([`Suite::discover`]) and the profile, detect the checkout, read the
/// attestations and pick the backend, in that order (the first failure is the one reported).
pub(crate) fn prepare(req: &SetupRequest) -> Result<Setup, RunError> {
    let discovered = Suite::discover(req.suite_config, req.repo_root, req.history_root)?;
    let suite = discovered.suite;
    let profile = suite
        .class_profile(req.runner_class, req.profile.as_deref())
        .map_err(|message| crate::suite::SuiteError::Choice { message })?
        .unwrap_or_else(|| super::default_profile(&suite));
    let git = super::detect_git(req.repo_root, req.outputs);
    let attestation = super::read_attestations(req.environment_json)?;
    let backend = super::backend_for(&suite, &profile)?;
    Ok(Setup {
        suite,
        suite_source: discovered.source,
        profile,
        git,
        attestation,
        backend,
        runner_class: req.runner_class.map(str::to_string),
    })
}
