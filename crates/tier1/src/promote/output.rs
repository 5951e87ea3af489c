//! What a promotion records and writes (contract §6.3, §6.4): the ratified row, appended to live
//! history or, after a bootstrap reset, to a new chain that records the reset; the package is
//! compacted like a publication; and the JSON `tier1-promote` prints.

use super::error::{PromoteError, history};
use super::request::{Checked, PromoteRequest};
use crate::history::model::{Acceptance, ChainReset, IndexRow};
use crate::history::package::IndexDoc;
use crate::history_check::ValidatedHistory;
use crate::suite::Suite;
use serde::Serialize;

/// The JSON `tier1-promote` prints (contract §6.4 plus `bootstrap_reset`).
#[derive(Debug, Clone, Serialize)]
pub struct PromoteOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// The ratified run.
    pub(crate) run_id: String,
    /// Always `accept_history_anchor`.
    pub(crate) baseline_acceptance: Acceptance,
    /// Confirmed regressions accepted through this path.
    pub(crate) accepted_regression_count: usize,
    /// The live anchor the candidate was compared with (None after a bootstrap reset).
    pub(crate) prior_anchor_run_id: Option<String>,
    /// True when live history was reset and a new chain started.
    pub(crate) bootstrap_reset: bool,
    /// Always `"."`.
    pub(crate) history_root: String,
}

/// Contract §6.3: the candidate's row as ratified (accepted, eligible, with the acceptance's
/// actor, note, workflow run, reviewers and evidence digest), to be chained again.
pub(super) fn ratified_row(r: &PromoteRequest, row: &IndexRow, c: &Checked) -> IndexRow {
    let mut e = row.clone();
    e.chain_sha256 = None;
    e.run_accepted = Some(true);
    e.baseline_eligible = Some(true);
    e.baseline_acceptance = Some(Acceptance::AcceptHistoryAnchor);
    e.baseline_acceptance_actor = Some(r.requester.trim().to_string());
    e.baseline_acceptance_actor_role = Some("requester".into());
    e.baseline_acceptance_note = Some(r.note.trim().to_string());
    e.baseline_acceptance_workflow_run = Some(r.workflow_run.trim().to_string());
    e.baseline_acceptance_reviewers = r.reviewers.iter().map(|s| s.trim().to_string()).collect();
    e.baseline_evidence_digest = Some(c.digest.as_str().to_string());
    e
}

/// Contract §6.4: write live history plus `entry` (chained) to the output root. Live history is
/// taken over, not cloned (a long history's index is large); after a bootstrap reset a new chain
/// of the ratified runner class starts, recording the reset (`chain_reset`).
pub(super) fn write(
    r: &PromoteRequest,
    suite: &Suite,
    live: Option<ValidatedHistory>,
    bootstrap_reset: bool,
    entry: &IndexRow,
) -> Result<(), PromoteError> {
    let hist = history("canonical");
    let (mut doc, base) = match (live, bootstrap_reset) {
        (Some(l), false) => (l.doc, r.canonical_history_root.as_deref()),
        _ => {
            let mut doc = IndexDoc::new_chained(&suite.suite_name, suite.version);
            doc.set_runner_class(r.runner_class.as_deref())
                .map_err(&hist)?;
            (doc, None)
        }
    };
    if bootstrap_reset {
        let reset = ChainReset {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            reason: r.note.trim().to_string(),
            actor: r.requester.trim().to_string(),
            first_run_id: r.run_id.clone(),
        };
        doc.set_field(
            "chain_reset",
            serde_json::to_value(&reset).unwrap_or_default(),
        )
        .map_err(&hist)?;
    }
    doc.adopt_chain().map_err(&hist)?;
    doc.push_row(entry).map_err(&hist)?;
    let trend_paths = |_: &crate::history::model::Index| vec![entry.trend_snapshot_path.clone()];
    crate::compaction::write_package(crate::compaction::PackagePlan {
        dest: &r.output_history_root,
        base,
        runs: vec![(&r.history_root, &r.run_id)],
        doc,
        trend_paths: &trend_paths,
        policy: crate::compaction::Policy::for_window(suite.thresholds.history_window as usize),
    })?;
    Ok(())
}
