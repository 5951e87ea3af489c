//! The attestation record `tier1-attest` prints: every check with its expected and found values,
//! and what the record proves ([`SCOPE`]).

use serde::{Deserialize, Serialize};

/// What an attestation proves and what it cannot, written into every record (`scope`).
pub(crate) const SCOPE: &str = "Checked on this machine: the process's OS and architecture, and the runner's version from its own Runner.Listener (when found). Reported by the runner: RUNNER_ENVIRONMENT, RUNNER_OS, RUNNER_ARCH, RUNNER_NAME. From the jobs API: the labels this job requested (its runs-on), not the labels the runner carries, which no job can read; that the runner carries them truthfully is the operator's label policy (docs/runbook.md §0). A runner older than 2.327.1 fails at \"Set up job\" in a job that uses node24 actions, before any step, so the version floor is enforced by that policy too; this record then proves the version of every runner that got this far. The GPUs are tier1-preflight's (NVML). Nothing here proves the machine's integrity.";

/// One check of the attestation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Check {
    /// Check name (`runner_environment`, `runner_os`, `runner_arch`, `machine_os`, `machine_arch`,
    /// `job`, `requested_labels`, `runner_version`).
    pub(crate) name: String,
    /// Whether it passed.
    pub(crate) passed: bool,
    /// What the policy requires.
    pub(crate) expected: String,
    /// What was found.
    pub(crate) found: String,
}

/// The attestation record printed by `tier1-attest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// Runner name (`RUNNER_NAME`).
    pub(crate) runner_name: String,
    /// The matched job's id, when one matched.
    pub(crate) job_id: Option<u64>,
    /// The labels the matched job requested, its `runs-on` (empty when none matched): what the
    /// workflow asked for, not what the runner carries.
    pub(crate) labels: Vec<String>,
    /// The runner version, when known.
    pub(crate) runner_version: Option<String>,
    /// Every check, in evaluation order.
    pub(crate) checks: Vec<Check>,
    /// True when every check passed.
    pub(crate) passed: bool,
    /// What this record proves and what it cannot ([`SCOPE`]).
    #[serde(default)]
    pub(crate) scope: String,
}

/// One check's record.
pub(super) fn check(
    name: &str,
    passed: bool,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> Check {
    Check {
        name: name.to_string(),
        passed,
        expected: expected.into(),
        found: found.into(),
    }
}
