//! What a preview found, printed as JSON.

use super::rows::{Counts, TargetRow};
use crate::exit::Exit;
use crate::gate::Verdict;
use crate::restore::RestoreOutcome;
use serde::Serialize;

/// What a preview found, printed as JSON and written as `preview.json`.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewOutcome {
    /// Always "preview, not canonical".
    pub notice: &'static str,
    /// Always false: nothing of a preview is canonical.
    pub canonical: bool,
    /// The preview's run id.
    pub run_id: String,
    /// The checked-out commit.
    pub commit: Option<String>,
    /// Profile.
    pub profile: String,
    /// Backend.
    pub backend: String,
    /// The branch whose canonical history was compared with.
    pub branch: String,
    /// What restore found (the same status `tier1-restore` prints).
    pub restore: RestoreOutcome,
    /// The anchor compared with.
    pub anchor_run_id: String,
    /// The anchor's commit.
    pub anchor_commit: Option<String>,
    /// The nightly gate's verdict on this commit against that anchor.
    pub gate: Verdict,
    /// Counts of the target verdicts.
    pub counts: Counts,
    /// One row per target, most serious first.
    pub targets: Vec<TargetRow>,
    /// Notes about the comparison (anchor due for renewal, ...).
    pub notes: Vec<String>,
    /// Link to the workflow run.
    pub run_url: Option<String>,
    /// The output directory.
    pub output: String,
    /// Characters of `comment.md` (GitHub allows 65,536).
    pub comment_chars: usize,
    /// Table rows in the comment (the rest did not fit).
    pub comment_rows: usize,
}

impl PreviewOutcome {
    /// 0 when the nightly gate would pass this commit, 1 when it would fail.
    pub fn exit(&self) -> Exit {
        self.gate.exit()
    }
}
