//! The checks of a runner against the policy: what the environment reports (`RUNNER_*`), what the
//! machine shows, the job's requested labels and the runner version.

use super::error::RunnerError;
use super::jobs::{Job, find_job};
use super::machine::Machine;
use super::policy::{MIN_NODE24_RUNNER_VERSION, NODE24_LABEL, Policy};
use super::record::{Attestation, SCOPE, check};
use serde::{Deserialize, Serialize};

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

/// Check the runner against the policy. `version` is read only when the policy requires node24;
/// `Err(reason)` (unknown version) then fails the version check with that reason.
pub(crate) fn attest(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attest::DEFAULT_REQUIRED_LABELS;
    use crate::exit::{Classify, Exit};

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
