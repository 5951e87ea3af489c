//! What the job did, printed as JSON.

use crate::exit::Exit;
use serde::Serialize;

/// What the job did, printed as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct NightlyOutcome {
    /// The local workflow run id.
    pub(crate) workflow_run_id: u64,
    /// The workflow file the run is recorded under.
    pub(crate) workflow: String,
    /// The artifact prefix of its artifacts.
    pub(crate) artifact_prefix: String,
    /// `success` or `failure`.
    pub(crate) conclusion: String,
    /// The tier1 run id.
    pub run_id: Option<String>,
    /// Bootstrap was used (explicitly or because the store was new).
    pub(crate) bootstrap: bool,
    /// The acceptance path ran.
    pub(crate) accept: bool,
    /// Who the acceptance is recorded for (accepting runs only).
    pub(crate) requester: Option<String>,
    /// Restore's status.
    pub(crate) restore: Option<serde_json::Value>,
    /// The run's result.
    pub run: Option<serde_json::Value>,
    /// Evidence artifact name and digest.
    pub(crate) evidence: Option<serde_json::Value>,
    /// The publish or promote result.
    pub(crate) publication: Option<serde_json::Value>,
    /// The history artifact published.
    pub(crate) history_artifact: Option<String>,
    /// Where the published history was copied.
    pub(crate) history_out: Option<String>,
    /// Where `--keep-work` kept the job's work directory (`<store>/kept-work/run-<id>`), until
    /// the operator removes it.
    pub(crate) kept_work: Option<String>,
    /// What the vault step stored (`tier1-vault`, as the workflow's vault job runs it).
    pub(crate) vault: Option<serde_json::Value>,
    /// The runner class (absent: the unnamed class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runner_class: Option<String>,
    /// A sharded night's plan, shard jobs and shards record (docs/sharding.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<serde_json::Value>,
    /// Why the job failed, when it did.
    pub failure: Option<String>,
    /// The job's verdict: `passed` exactly when the exit code is 0, with every failing condition
    /// (the run's gate and whatever later step failed), so the JSON never disagrees with the
    /// exit code.
    pub(crate) verdict: crate::gate::Verdict,
    /// The exit code (not serialized).
    #[serde(skip)]
    pub exit: Exit,
    /// The run's table for people (not serialized; absent when the run did not complete).
    #[serde(skip)]
    pub(crate) ending: Option<crate::run::ending::Ending>,
}

impl NightlyOutcome {
    /// The ending for people: the run's table of compared targets (when the run completed) and
    /// what the job's exit code means (docs/tier1-nightly.md, "The ending").
    pub fn ending(&self) -> String {
        let gate = (!self.verdict.passed)
            .then(|| format!("gate failed: {}", self.verdict.failures.join("; ")));
        match &self.ending {
            Some(e) => e.text(self.exit, gate.as_deref()),
            None => crate::run::ending::exit_line(self.exit, gate.as_deref()) + "\n",
        }
    }
}
