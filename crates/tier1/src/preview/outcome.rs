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
    pub(crate) notice: &'static str,
    /// Always false: nothing of a preview is canonical.
    pub(crate) canonical: bool,
    /// The preview's run id.
    pub(crate) run_id: String,
    /// The checked-out commit.
    pub(crate) commit: Option<String>,
    /// Profile.
    pub(crate) profile: String,
    /// Backend.
    pub(crate) backend: String,
    /// The branch whose canonical history was compared with.
    pub(crate) branch: String,
    /// What restore found (the same status `tier1-restore` prints).
    pub(crate) restore: RestoreOutcome,
    /// The anchor compared with.
    pub(crate) anchor_run_id: String,
    /// The anchor's commit.
    pub(crate) anchor_commit: Option<String>,
    /// The nightly gate's verdict on this commit against that anchor.
    pub(crate) gate: Verdict,
    /// Counts of the target verdicts.
    pub(crate) counts: Counts,
    /// One row per target, most serious first.
    pub(crate) targets: Vec<TargetRow>,
    /// Notes about the comparison (anchor due for renewal, ...).
    pub(crate) notes: Vec<String>,
    /// Link to the workflow run.
    pub(crate) run_url: Option<String>,
    /// The output directory.
    pub(crate) output: String,
    /// Characters of `comment.md` (GitHub allows 65,536).
    pub(crate) comment_chars: usize,
    /// Table rows in the comment (the rest did not fit).
    pub(crate) comment_rows: usize,
}

impl PreviewOutcome {
    /// 0 when the nightly gate would pass this commit, 1 when it would fail.
    pub fn exit(&self) -> Exit {
        self.gate.exit()
    }
}
