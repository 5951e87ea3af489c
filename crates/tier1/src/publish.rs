//! Normal publication (`tier1-publish`, contract §6.5 with tier1's extensions): merge a producer's
//! candidate run into live canonical history as evidence. It never publishes an anchor; a candidate
//! compared against a superseded anchor is kept as stale, ineligible evidence. The output index extends
//! the live hash chain (live rows unchanged as a prefix); the output tree is staged, compacted when
//! it would approach restore's caps (`compaction`), checked to be restorable, then renamed.

use crate::exit::{Classify, Exit};
use crate::history::chain::ChainState;
use crate::history::error::HistoryError;
use crate::history::model::{IndexRow, Summary};
use crate::history::package;
use crate::history::trend;
use crate::history_check::validate_history_root;
use crate::suite::Suite;
use serde::Serialize;
use std::path::PathBuf;

/// Why a merge was refused.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The request or the candidate breaks a publication rule.
    #[error("{0}")]
    Invalid(String),
    /// The output root holds data, or the run id is already published.
    #[error("{0}")]
    Conflict(String),
    /// A history root fails validation (structural or integrity).
    #[error("{which} history: {source}")]
    History {
        /// `candidate` or `canonical`.
        which: &'static str,
        /// The validation failure.
        source: HistoryError,
    },
    /// The output root is unusable (a symbolic link, occupied, or inside an input tree).
    #[error(transparent)]
    OutputRoot(#[from] crate::fsx::OutputRootError),
    /// The merged package would break a limit restore applies (member count, expanded size):
    /// nothing is written.
    #[error(transparent)]
    Unpublishable(#[from] crate::archive::ArchiveError),
    /// Writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The output root.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The output package could not be compacted, or restore would refuse it.
    #[error(transparent)]
    Package(#[from] crate::compaction::package::PackageError),
}

impl Classify for PublishError {
    fn exit(&self) -> Exit {
        match self {
            PublishError::Invalid(_) => Exit::Invalid,
            PublishError::Conflict(_) => Exit::Conflict,
            PublishError::History { source, .. } => source.exit(),
            PublishError::Io { source, .. } => crate::exit::of_io(source),
            PublishError::OutputRoot(e) => e.exit(),
            PublishError::Unpublishable(e) => e.exit(),
            PublishError::Package(e) => e.exit(),
        }
    }
}

/// What to merge.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// The producer's candidate history tree (read only).
    pub candidate_root: PathBuf,
    /// The live canonical history, restored again under the publication lock (read only).
    pub canonical_root: PathBuf,
    /// Where the merged tree goes (must not exist or be empty).
    pub output_root: PathBuf,
    /// The run to publish: the candidate's newest row.
    pub run_id: String,
    /// The runner class published (docs/sharding.md): the candidate, its run and the live
    /// history must all be of it; None: the unnamed class.
    pub runner_class: Option<String>,
}

/// The JSON `tier1-publish` prints.
#[derive(Debug, Clone, Serialize)]
pub struct MergeOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// The merged run.
    pub(crate) run_id: String,
    /// The candidate was compared against an anchor that is no longer the latest live anchor.
    pub(crate) stale_baseline: bool,
    /// `run_accepted` as recorded in the output.
    pub(crate) run_accepted: bool,
    /// Always false: normal publication never makes a run eligible once an anchor exists.
    pub baseline_eligible: bool,
    /// The latest live anchor.
    pub(crate) anchor_run_id: String,
    /// The candidate's `baseline_run_id`.
    pub(crate) candidate_baseline_run_id: Option<String>,
    /// Runs in the output history (live and sealed).
    pub(crate) run_count: usize,
    /// Live runs in the output index.
    pub(crate) live_run_count: usize,
    /// Sealed segments in the output.
    pub(crate) segment_count: usize,
    /// Segments this publication sealed (compaction), oldest first.
    pub(crate) segments_sealed: Vec<String>,
    /// Runs this publication sealed.
    pub(crate) runs_sealed: usize,
    /// True when the live index was a legacy (unchained) one and the output starts its chain.
    pub(crate) chain_adopted: bool,
    /// Always `"."`.
    pub(crate) history_root: String,
}

/// The acceptance fields a normal publication must not carry.
pub(crate) fn acceptance_fields(row: &IndexRow) -> Vec<&'static str> {
    let mut v = Vec::new();
    let present = [
        ("baseline_acceptance", row.baseline_acceptance.is_some()),
        (
            "baseline_acceptance_actor",
            row.baseline_acceptance_actor.is_some(),
        ),
        (
            "baseline_acceptance_actor_role",
            row.baseline_acceptance_actor_role.is_some(),
        ),
        (
            "baseline_acceptance_note",
            row.baseline_acceptance_note.is_some(),
        ),
        (
            "baseline_acceptance_workflow_run",
            row.baseline_acceptance_workflow_run.is_some(),
        ),
        (
            "baseline_acceptance_reviewers",
            !row.baseline_acceptance_reviewers.is_empty(),
        ),
        (
            "baseline_evidence_digest",
            row.baseline_evidence_digest.is_some(),
        ),
    ];
    for (name, here) in present {
        if here {
            v.push(name);
        }
    }
    v
}

/// Check that a row's four paths are `<run_id>/...`.
pub(crate) fn check_paths_bound(row: &IndexRow) -> Result<(), String> {
    let prefix = format!("{}/", row.run_id);
    for (field, rel) in package::row_paths(row) {
        if !rel.starts_with(&prefix) {
            return Err(format!(
                "run {:?}: `{field}` must be bound to {prefix:?}, found {rel:?}",
                row.run_id
            ));
        }
    }
    Ok(())
}

/// Check a history's and a summary's suite identity against the suite config.
pub(crate) fn check_suite_identity(
    what: &str,
    name: &str,
    version: u32,
    suite: &Suite,
) -> Result<(), String> {
    if name != suite.suite_name || version != suite.version {
        return Err(format!(
            "{what}: suite identity expected {}/v{}, found {name}/v{version}",
            suite.suite_name, suite.version
        ));
    }
    Ok(())
}

/// Merge the candidate's newest run into live history, writing the result to `output_root`.
pub fn merge(req: &MergeRequest, suite: &Suite) -> Result<MergeOutcome, PublishError> {
    let invalid = |m: String| Err(PublishError::Invalid(m));
    if !crate::fsx::is_safe_run_id(&req.run_id) {
        return invalid(format!(
            "--run-id {:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
            req.run_id
        ));
    }
    crate::fsx::check_output_root(
        &req.output_root,
        &[
            ("candidate history root", req.candidate_root.as_path()),
            ("canonical history root", req.canonical_root.as_path()),
        ],
    )?;
    crate::fsx::stale::tidy_beside(&[&req.output_root]);
    // Both trees are validated whole, side by side (read only; the candidate's failure is reported
    // first, as when they ran one after the other).
    let live_index_present = req
        .canonical_root
        .join(crate::history::INDEX_FILE)
        .is_file();
    let (cand, live) = std::thread::scope(|s| {
        let live =
            s.spawn(|| live_index_present.then(|| validate_history_root(&req.canonical_root)));
        let cand = validate_history_root(&req.candidate_root);
        let live = live
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (cand, live)
    });
    let cand = cand.map_err(|source| PublishError::History {
        which: "candidate",
        source,
    })?;
    // Only the newest row and its files are needed from the candidate: the rest (a long history's
    // index, parsed twice) is dropped before the output is built.
    let Some(row) = cand.index.runs.last().cloned() else {
        return invalid("candidate history has no runs".into());
    };
    let (cand_suite, cand_version) = (cand.index.suite_name.clone(), cand.index.suite_version);
    let cand_class = cand.index.runner_class.clone();
    drop(cand);
    let row = &row;
    if row.run_id != req.run_id {
        return invalid(format!(
            "candidate's newest run must be --run-id {:?}, found {:?}",
            req.run_id, row.run_id
        ));
    }
    if row.is_eligible() || !acceptance_fields(row).is_empty() {
        return invalid(format!(
            "evidence merge cannot publish a canonical anchor: run {:?} carries baseline_eligible={:?} and acceptance fields {:?}",
            row.run_id,
            row.baseline_eligible,
            acceptance_fields(row)
        ));
    }
    check_suite_identity("candidate index", &cand_suite, cand_version, suite)
        .map_err(PublishError::Invalid)?;
    check_paths_bound(row).map_err(PublishError::Invalid)?;
    let files =
        package::load_run(&req.candidate_root, row).map_err(|source| PublishError::History {
            which: "candidate",
            source,
        })?;
    check_summary_identity(&files.summary, suite).map_err(PublishError::Invalid)?;
    let run_class = files
        .summary
        .environment
        .as_ref()
        .and_then(|e| e.runner_class.clone());
    check_runner_class("candidate index", cand_class.as_deref(), req)?;
    check_runner_class(
        &format!("{}/summary.json environment", req.run_id),
        run_class.as_deref(),
        req,
    )?;

    let Some(live) = live else {
        return invalid(format!(
            "canonical history {} has no index.json: normal publication needs an eligible anchor (bootstrap goes through tier1-promote)",
            req.canonical_root.display()
        ));
    };
    let live = live.map_err(|source| PublishError::History {
        which: "canonical",
        source,
    })?;
    check_suite_identity(
        "canonical index",
        &live.index.suite_name,
        live.index.suite_version,
        suite,
    )
    .map_err(PublishError::Invalid)?;
    check_runner_class("canonical index", live.index.runner_class.as_deref(), req)?;
    if live.doc.contains_run(&req.run_id) {
        return Err(PublishError::Conflict(format!(
            "run {:?} is already in canonical history",
            req.run_id
        )));
    }
    let Some(anchor) = live.latest_anchor.clone() else {
        return invalid("canonical history has no eligible anchor".into());
    };
    let stale = files.regression.baseline_run_id.as_deref() != Some(anchor.run_id.as_str());
    let mut new_row = row.clone();
    new_row.chain_sha256 = None;
    new_row.baseline_eligible = Some(false);
    if stale {
        new_row.run_accepted = Some(false);
    }
    let chain_adopted = live.chain == ChainState::Unchained;
    // The live index is taken over (the validated copy of it dropped here, not cloned).
    let mut doc = {
        let live = live;
        live.doc
    };
    doc.adopt_chain().map_err(|source| PublishError::History {
        which: "canonical",
        source,
    })?;
    doc.push_row(&new_row)
        .map_err(|source| PublishError::History {
            which: "canonical",
            source,
        })?;
    // The new run's trend snapshot, and the latest run's when that is another run.
    let trend_paths = |index: &crate::history::model::Index| {
        let mut paths = vec![new_row.trend_snapshot_path.clone()];
        if let Some(latest) = trend::sorted_by_time(&index.runs).last()
            && latest.run_id != req.run_id
        {
            paths.push(latest.trend_snapshot_path.clone());
        }
        paths
    };
    let written = crate::compaction::write_package(crate::compaction::PackagePlan {
        dest: &req.output_root,
        base: Some(&req.canonical_root),
        runs: vec![(&req.candidate_root, &req.run_id)],
        doc,
        trend_paths: &trend_paths,
        policy: crate::compaction::Policy::for_window(suite.thresholds.history_window as usize),
    })?;
    tracing::info!(run_id = %req.run_id, stale, "merged candidate into canonical history");
    Ok(MergeOutcome {
        success: true,
        run_id: req.run_id.clone(),
        stale_baseline: stale,
        run_accepted: new_row.is_accepted(),
        baseline_eligible: false,
        anchor_run_id: anchor.run_id.clone(),
        candidate_baseline_run_id: files.regression.baseline_run_id.clone(),
        run_count: written.run_count,
        live_run_count: written.live_run_count,
        segment_count: written.segment_count,
        segments_sealed: written.segments_sealed,
        runs_sealed: written.runs_sealed,
        chain_adopted,
        history_root: ".".into(),
    })
}

/// A history's or run's runner class against the class published (docs/sharding.md): one class's
/// run is never published into another's history.
fn check_runner_class(
    what: &str,
    found: Option<&str>,
    req: &MergeRequest,
) -> Result<(), PublishError> {
    let want = req.runner_class.as_deref();
    if found == want {
        return Ok(());
    }
    Err(PublishError::Invalid(format!(
        "{what}: runner_class expected {want:?} (--runner-class), found {found:?}: a run of one runner class is never published into another class's history"
    )))
}

/// The summary's suite identity against the config.
pub(crate) fn check_summary_identity(s: &Summary, suite: &Suite) -> Result<(), String> {
    check_suite_identity(
        &format!("{}/summary.json", s.run_id),
        &s.suite_name,
        s.suite_version,
        suite,
    )
}
