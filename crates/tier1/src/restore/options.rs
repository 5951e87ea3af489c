//! What restore is asked to do: the repository, workflow and branch the history must come from, the
//! destination, the two permissions (bootstrap, anchor renewal), and the discovery caps (contract §5.1).

use std::path::PathBuf;

/// At most this many runs (of every status) are scanned.
pub(crate) const MAX_RUNS_TO_SCAN: usize = 100;
/// At most this many history candidates are tried.
pub(crate) const MAX_ARTIFACT_CANDIDATES: usize = 20;
/// Default workflow file.
pub(crate) const DEFAULT_WORKFLOW: &str = "tier1-nightly.yml";
/// What to restore and where.
#[derive(Debug, Clone)]
pub struct RestoreOptions {
    /// `owner/name` the history must come from.
    pub repository: String,
    /// Workflow file name.
    pub workflow: String,
    /// Branch the history must come from.
    pub branch: String,
    /// The current run (never a candidate).
    pub current_run_id: Option<u64>,
    /// Destination directory: absent or empty.
    pub destination: PathBuf,
    /// Allow the bootstrap outcome when no usable history exists.
    pub allow_bootstrap: bool,
    /// Allow evidence 60 days old or older (protected renewal).
    pub allow_anchor_renewal: bool,
    /// The artifact prefix: candidates are `<prefix>-history-*` with `<prefix>-evidence-*`.
    pub artifact_prefix: crate::artifacts::ArtifactPrefix,
    /// The runner class whose history this is (docs/sharding.md): a package whose index names
    /// another class is refused (integrity); None: the unnamed class.
    pub runner_class: Option<String>,
}
