//! Runner attestation: what the machine itself shows (the runner's version from its own
//! `Runner.Listener`, the process's OS and architecture), what the runner reports (`RUNNER_*`), and
//! the labels the job requested (jobs API: its `runs-on`, never the runner's own labels), checked
//! against the policy a canonical run requires. Produces an [`Attestation`] record that says what
//! it proves ([`SCOPE`]).

pub mod jobs_api;
pub mod machine;
pub mod version;

pub use machine::Machine;

use crate::exit::{Classify, Exit};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use thiserror::Error;

/// Labels a canonical producer job must carry, in the order the workflow lists them.
pub const DEFAULT_REQUIRED_LABELS: [&str; 6] = [
    "self-hosted",
    "linux",
    "x64",
    "gpu",
    "b200",
    "node24-actions",
];

/// The label that promises a runner able to run node24 actions.
pub const NODE24_LABEL: &str = "node24-actions";

/// The oldest runner version node24 actions (upload-artifact v6+, download-artifact v7+) accept.
pub const MIN_NODE24_RUNNER_VERSION: semver::Version = semver::Version::new(2, 327, 1);

/// What an attestation proves and what it cannot, written into every record (`scope`).
pub const SCOPE: &str = "Checked on this machine: the process's OS and architecture, and the runner's version from its own Runner.Listener (when found). Reported by the runner: RUNNER_ENVIRONMENT, RUNNER_OS, RUNNER_ARCH, RUNNER_NAME. From the jobs API: the labels this job requested (its runs-on), not the labels the runner carries, which no job can read; that the runner carries them truthfully is the operator's label policy (docs/runbook.md §0). A runner older than 2.327.1 fails at \"Set up job\" in a job that uses node24 actions, before any step, so the version floor is enforced by that policy too; this record then proves the version of every runner that got this far. The GPUs are tier1-preflight's (NVML). Nothing here proves the machine's integrity.";

/// Failures of runner attestation.
#[derive(Debug, Error)]
pub enum RunnerError {
    /// One or more checks failed; the attestation records each of them.
    #[error("runner attestation failed: {}", .failed.join("; "))]
    Failed {
        /// One message per failed check, naming it with its expected and found values.
        failed: Vec<String>,
        /// The full record (printed on stdout even on refusal).
        attestation: Box<Attestation>,
    },
    /// A required input (environment variable or option) is missing or malformed.
    #[error("{what}: expected {expected}, found {found}")]
    Input {
        /// The variable, option or file.
        what: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// The API response is not a jobs API response.
    #[error("{source_name}: not a jobs API response: {message}")]
    Jobs {
        /// File path or URL.
        source_name: String,
        /// Parser message.
        message: String,
    },
    /// The jobs API call failed.
    #[error("jobs API {url}: {message}")]
    Remote {
        /// The URL requested.
        url: String,
        /// What failed (status and body excerpt, or transport error).
        message: String,
    },
    /// The runner version could not be determined.
    #[error("runner version: {0}")]
    Version(String),
    /// Reading or writing a JSON file failed.
    #[error(transparent)]
    Json(#[from] crate::json::JsonError),
}

impl Classify for RunnerError {
    fn exit(&self) -> Exit {
        match self {
            RunnerError::Failed { .. } | RunnerError::Version(_) => Exit::Attestation,
            RunnerError::Input { .. } | RunnerError::Jobs { .. } => Exit::Invalid,
            RunnerError::Remote { .. } => Exit::Remote,
            RunnerError::Json(e) => e.exit(),
        }
    }
}

/// One job of a jobs API response (only the fields attestation reads; others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Job id.
    pub id: u64,
    /// Job name.
    #[serde(default)]
    pub name: String,
    /// `queued`, `in_progress`, `completed`, ...
    #[serde(default)]
    pub status: String,
    /// Run attempt the job belongs to.
    #[serde(default)]
    pub run_attempt: Option<u32>,
    /// The labels the job requested (`runs-on`).
    #[serde(default)]
    pub labels: Vec<String>,
    /// The runner the job was assigned to (null until assigned).
    #[serde(default)]
    pub runner_name: Option<String>,
}

/// A jobs API response page: `{total_count, jobs}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobsPage {
    /// Jobs across all pages.
    pub total_count: u64,
    /// The jobs of this page.
    pub jobs: Vec<Job>,
}

/// The runner facts the job's environment gives (`RUNNER_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunnerEnv {
    /// `RUNNER_NAME`.
    pub name: String,
    /// `RUNNER_OS` (`Linux`, `Windows`, `macOS`).
    pub os: String,
    /// `RUNNER_ARCH` (`X64`, `ARM64`, ...).
    pub arch: String,
    /// `RUNNER_ENVIRONMENT` (`self-hosted` or `github-hosted`).
    pub environment: String,
}

/// One check of the attestation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Check name (`runner_environment`, `runner_os`, `runner_arch`, `machine_os`, `machine_arch`,
    /// `job`, `requested_labels`, `runner_version`).
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// What the policy requires.
    pub expected: String,
    /// What was found.
    pub found: String,
}

/// The attestation record printed by `tier1-attest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// Runner name (`RUNNER_NAME`).
    pub runner_name: String,
    /// The matched job's id, when one matched.
    pub job_id: Option<u64>,
    /// The labels the matched job requested, its `runs-on` (empty when none matched): what the
    /// workflow asked for, not what the runner carries.
    pub labels: Vec<String>,
    /// The runner version, when known.
    pub runner_version: Option<String>,
    /// Every check, in evaluation order.
    pub checks: Vec<Check>,
    /// True when every check passed.
    pub passed: bool,
    /// What this record proves and what it cannot ([`SCOPE`]).
    #[serde(default)]
    pub scope: String,
}

/// What to attest against.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Labels the job must carry (compared case-insensitively, as GitHub does).
    pub required_labels: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            required_labels: DEFAULT_REQUIRED_LABELS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
}

impl Policy {
    /// Whether the policy requires the node24 label (and therefore the minimum runner version).
    pub fn requires_node24(&self) -> bool {
        self.required_labels
            .iter()
            .any(|l| l.eq_ignore_ascii_case(NODE24_LABEL))
    }
}

fn check(name: &str, passed: bool, expected: impl Into<String>, found: impl Into<String>) -> Check {
    Check {
        name: name.to_string(),
        passed,
        expected: expected.into(),
        found: found.into(),
    }
}

/// Pick this runner's job: the jobs assigned to `runner_name`, preferring the one in progress.
fn find_job<'a>(jobs: &'a [Job], runner_name: &str) -> Result<&'a Job, String> {
    let mine: Vec<&Job> = jobs
        .iter()
        .filter(|j| j.runner_name.as_deref() == Some(runner_name))
        .collect();
    let running: Vec<&Job> = mine
        .iter()
        .copied()
        .filter(|j| j.status == "in_progress")
        .collect();
    match (mine.as_slice(), running.as_slice()) {
        ([], _) => Err(format!("no job of {} assigned to this runner", jobs.len())),
        ([one], _) | (_, [one]) => Ok(one),
        (_, []) => Err(format!(
            "{} jobs on this runner, none in progress",
            mine.len()
        )),
        (_, many) => Err(format!("{} jobs in progress on this runner", many.len())),
    }
}

/// Check the runner against the policy. `version` is read only when the policy requires node24;
/// `Err(reason)` (unknown version) then fails the version check with that reason.
pub fn attest(
    policy: &Policy,
    (env, machine): (&RunnerEnv, &Machine),
    jobs: &[Job],
    version: Result<&semver::Version, &str>,
) -> Result<Attestation, RunnerError> {
    let mut checks = vec![
        check(
            "runner_environment",
            env.environment == "self-hosted",
            "self-hosted",
            env.environment.as_str(),
        ),
        check("runner_os", env.os == "Linux", "Linux", env.os.as_str()),
        check("runner_arch", env.arch == "X64", "X64", env.arch.as_str()),
    ];
    checks.extend(machine.checks());
    let job = find_job(jobs, &env.name);
    checks.push(match &job {
        Ok(j) => check(
            "job",
            true,
            format!("a job on runner {:?}", env.name),
            format!("job {} {:?}", j.id, j.name),
        ),
        Err(why) => check(
            "job",
            false,
            format!("a job on runner {:?}", env.name),
            why.as_str(),
        ),
    });
    let labels: Vec<String> = job.as_ref().map(|j| j.labels.clone()).unwrap_or_default();
    let missing: Vec<&str> = policy
        .required_labels
        .iter()
        .filter(|r| !labels.iter().any(|l| l.eq_ignore_ascii_case(r)))
        .map(String::as_str)
        .collect();
    checks.push(check(
        "requested_labels",
        missing.is_empty(),
        format!(
            "the job's runs-on includes {}",
            policy.required_labels.join(",")
        ),
        if missing.is_empty() {
            labels.join(",")
        } else {
            format!("{} (missing {})", labels.join(","), missing.join(","))
        },
    ));
    if policy.requires_node24() {
        let expected = format!(">= {MIN_NODE24_RUNNER_VERSION} (required by {NODE24_LABEL})");
        checks.push(match version {
            Ok(v) => check(
                "runner_version",
                *v >= MIN_NODE24_RUNNER_VERSION,
                expected,
                v.to_string(),
            ),
            Err(why) => check(
                "runner_version",
                false,
                expected,
                format!("unknown ({why})"),
            ),
        });
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: expected {}, found {}", c.name, c.expected, c.found))
        .collect();
    let attestation = Attestation {
        runner_name: env.name.clone(),
        job_id: job.ok().map(|j| j.id),
        labels,
        runner_version: version.ok().map(|v| v.to_string()),
        passed: failed.is_empty(),
        checks,
        scope: SCOPE.to_string(),
    };
    if failed.is_empty() {
        Ok(attestation)
    } else {
        Err(RunnerError::Failed {
            failed,
            attestation: Box::new(attestation),
        })
    }
}

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

/// Gather the jobs and (when the policy needs it) the version, then [`attest`].
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

/// Parse a saved jobs API response (`{total_count, jobs}`) from a file.
pub fn read_jobs_file(path: &std::path::Path) -> Result<Vec<Job>, RunnerError> {
    Ok(crate::json::read::<JobsPage>(path)?.jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> RunnerEnv {
        RunnerEnv {
            name: "gpu-1".into(),
            os: "Linux".into(),
            arch: "X64".into(),
            environment: "self-hosted".into(),
        }
    }

    fn job(id: u64, runner: &str, status: &str, labels: &[&str]) -> Job {
        Job {
            id,
            name: "tier1".into(),
            status: status.into(),
            run_attempt: Some(1),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            runner_name: Some(runner.into()),
        }
    }

    const ALL: [&str; 6] = DEFAULT_REQUIRED_LABELS;

    fn linux() -> Machine {
        Machine {
            os: "linux".into(),
            arch: "x86_64".into(),
        }
    }

    #[test]
    fn accepts_full_labels_and_new_runner() {
        let v = semver::Version::new(2, 327, 1);
        let jobs = [
            job(1, "other", "in_progress", &[]),
            job(2, "gpu-1", "in_progress", &ALL),
        ];
        let a = attest(&Policy::default(), (&env(), &linux()), &jobs, Ok(&v)).unwrap();
        assert!(a.passed);
        assert_eq!(a.job_id, Some(2));
        assert_eq!(a.checks.len(), 8);
    }

    #[test]
    fn refuses_old_runner_and_missing_label_naming_both() {
        let v = semver::Version::new(2, 327, 0);
        let jobs = [job(2, "gpu-1", "in_progress", &ALL[..5])];
        let err = attest(&Policy::default(), (&env(), &linux()), &jobs, Ok(&v)).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("labels:") && msg.contains("missing node24-actions"),
            "{msg}"
        );
        assert!(
            msg.contains("runner_version: expected >= 2.327.1") && msg.contains("found 2.327.0"),
            "{msg}"
        );
        assert_eq!(err.exit(), Exit::Attestation);
    }

    #[test]
    fn version_not_needed_without_node24_label() {
        let policy = Policy {
            required_labels: vec!["self-hosted".into(), "GPU".into()],
        };
        let jobs = [job(2, "gpu-1", "in_progress", &["self-hosted", "gpu"])];
        let a = attest(&policy, (&env(), &linux()), &jobs, Err("x")).unwrap();
        assert!(a.checks.iter().all(|c| c.name != "runner_version"));
    }

    #[test]
    fn refuses_hosted_runner_and_unmatched_job() {
        let mut e = env();
        e.environment = "github-hosted".into();
        e.arch = "ARM64".into();
        let err = attest(&Policy::default(), (&e, &linux()), &[], Err("x")).unwrap_err();
        let msg = err.to_string();
        for name in [
            "runner_environment",
            "runner_arch",
            "job:",
            "labels",
            "runner_version",
        ] {
            assert!(msg.contains(name), "{name} in {msg}");
        }
        assert!(!msg.contains("runner_os"), "{msg}");
    }

    #[test]
    fn prefers_the_job_in_progress() {
        let jobs = [
            job(1, "gpu-1", "completed", &[]),
            job(2, "gpu-1", "in_progress", &ALL),
        ];
        let v = semver::Version::new(2, 330, 0);
        assert_eq!(
            attest(&Policy::default(), (&env(), &linux()), &jobs, Ok(&v))
                .unwrap()
                .job_id,
            Some(2)
        );
        let two = [
            job(1, "gpu-1", "completed", &ALL),
            job(2, "gpu-1", "completed", &ALL),
        ];
        assert!(attest(&Policy::default(), (&env(), &linux()), &two, Ok(&v)).is_err());
    }
}
