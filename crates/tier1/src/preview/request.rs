//! What to preview.

use crate::bench::backend::Backend;
use crate::evidence::git::GitInfo;
use crate::suite::Suite;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// What to preview.
pub struct PreviewRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// How the suite was chosen ([`Suite::discover`]).
    pub suite_source: crate::suite::SuiteSource,
    /// Profile name.
    pub profile: String,
    /// Run id of the preview (safe pattern).
    pub run_id: String,
    /// Backend to measure on.
    pub backend: Arc<dyn Backend>,
    /// Attestation records to embed in the (scratch) manifest.
    pub attestation: Option<Value>,
    /// The checkout.
    pub git: GitInfo,
    /// The checkout's directory.
    pub repo_root: PathBuf,
    /// Artifact prefix of the canonical history (`<prefix>-history-*`).
    pub artifact_prefix: crate::artifacts::ArtifactPrefix,
    /// `owner/name` whose canonical history is restored.
    pub repository: String,
    /// The producer workflow file whose runs hold that history.
    pub workflow: String,
    /// The default branch, whose history is the canonical one.
    pub branch: String,
    /// Output directory (absent or empty).
    pub output: PathBuf,
    /// Link to this workflow run, for the comment.
    pub run_url: Option<String>,
    /// The runner class compared (docs/sharding.md): its history (`<prefix>-<class>-*`) and
    /// anchor; None: the unnamed class.
    pub runner_class: Option<String>,
}

impl std::fmt::Debug for PreviewRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewRequest")
            .field("run_id", &self.run_id)
            .field("branch", &self.branch)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}
