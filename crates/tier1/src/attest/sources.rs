//! Where the jobs and the runner version come from (a file, the jobs API, the runner's own
//! binary), gathered before [`attest`](super::attest()).

use super::checks::{RunnerEnv, attest};
use super::error::RunnerError;
use super::jobs::read_jobs_file;
use super::machine::Machine;
use super::policy::Policy;
use super::record::Attestation;
use super::{jobs_api, version};
use std::path::PathBuf;

/// Where the job list comes from.
#[derive(Debug, Clone)]
pub enum JobsSource {
    /// A saved jobs API response.
    File(PathBuf),
    /// The live jobs API for this run attempt.
    Api(jobs_api::JobsRequest),
}

/// Where the runner version comes from.
#[derive(Debug, Clone)]
pub enum VersionSource {
    /// Given verbatim (`--runner-version`).
    Given(String),
    /// `<root>/bin/Runner.Listener --version` (`--runner-root`).
    RunnerRoot(PathBuf),
    /// The `Runner.Worker` among this process's ancestors.
    Discover,
}

/// Gather the jobs and (when the policy needs it) the version, then `attest`.
pub fn attest_from(
    policy: &Policy,
    env: &RunnerEnv,
    jobs: &JobsSource,
    version: &VersionSource,
) -> Result<Attestation, RunnerError> {
    let jobs = match jobs {
        JobsSource::File(path) => read_jobs_file(path)?,
        JobsSource::Api(req) => jobs_api::fetch(req)?,
    };
    let found = match version {
        VersionSource::Given(text) => version::parse(text).map_err(|e| e.to_string()),
        _ if !policy.requires_node24() => Err("not required".to_string()),
        VersionSource::RunnerRoot(root) => version::discover(Some(root)).map_err(|e| e.to_string()),
        VersionSource::Discover => version::discover(None).map_err(|e| e.to_string()),
    };
    attest(
        policy,
        (env, &Machine::this()),
        &jobs,
        found.as_ref().map_err(String::as_str),
    )
}
