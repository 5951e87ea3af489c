//! [`merge`]: a normal publication's rules in order (docs/tier1-publish.md, "Rules (in order)"),
//! one named step each, then the write. The steps read the trees; what they decide is in
//! [`checks`](super::checks).

use super::checks::{self, check_paths_bound, check_suite_identity, check_summary_identity};
use super::error::{PublishError, history};
use super::request::{MergeOutcome, MergeRequest};
use crate::compaction::package::PackageReport;
use crate::history::chain::ChainState;
use crate::history::error::HistoryError;
use crate::history::model::{Index, IndexRow};
use crate::history::package::{self, IndexDoc, RunFiles};
use crate::history_check::{AnchorRef, ValidatedHistory, validate_history_root};
use crate::suite::Suite;

/// A history root's validation.
type Validation = Result<ValidatedHistory, HistoryError>;

/// Merge the candidate's newest run into live history, writing the result to `output_root`.
pub fn merge(req: &MergeRequest, suite: &Suite) -> Result<MergeOutcome, PublishError> {
    // 1. The run id, and the output root before anything is read.
    checks::run_id(&req.run_id)?;
    prepare_output_root(req)?;
    // 2. Both trees, validated side by side.
    let (cand, live) = validate_trees(req);
    // 3-5. The candidate's newest run: the one asked for, evidence, of this suite and class.
    let (row, files) = candidate_run(req, cand, suite)?;
    // 6. Live history: of this suite and class, without the run, with an eligible anchor.
    let (live, anchor) = live_history(req, live, suite)?;
    // 7. The row as merged, stale when its baseline is not the latest anchor.
    let candidate_baseline_run_id = files.regression.baseline_run_id;
    let (new_row, stale) =
        checks::published_row(&row, &anchor.run_id, candidate_baseline_run_id.as_deref());
    // 8. The live index extended by the row (a legacy index adopts a chain).
    let chain_adopted = live.chain == ChainState::Unchained;
    let doc = extended_index(live, &new_row)?;
    // 9-11. The output tree: compacted, trend snapshots rebuilt, restorable, renamed into place.
    let written = write_output(req, suite, doc, &new_row)?;
    tracing::info!(run_id = %req.run_id, stale, "merged candidate into canonical history");
    Ok(MergeOutcome {
        success: true,
        run_id: req.run_id.clone(),
        stale_baseline: stale,
        run_accepted: new_row.is_accepted(),
        baseline_eligible: false,
        anchor_run_id: anchor.run_id,
        candidate_baseline_run_id,
        run_count: written.run_count,
        live_run_count: written.live_run_count,
        segment_count: written.segment_count,
        segments_sealed: written.segments_sealed,
        runs_sealed: written.runs_sealed,
        chain_adopted,
        history_root: ".".into(),
    })
}

/// Rule 1: the output root is usable and outside both input trees; stale staging beside it goes.
fn prepare_output_root(req: &MergeRequest) -> Result<(), PublishError> {
    crate::fsx::check_output_root(
        &req.output_root,
        &[
            ("candidate history root", req.candidate_root.as_path()),
            ("canonical history root", req.canonical_root.as_path()),
        ],
    )?;
    crate::fsx::stale::tidy_beside(&[&req.output_root]);
    Ok(())
}

/// Rule 2: both trees validated whole, side by side (read only; the candidate's failure is
/// reported first, as when they ran one after the other). The live one is None when it has no
/// index.
fn validate_trees(req: &MergeRequest) -> (Validation, Option<Validation>) {
    let live_index_present = req
        .canonical_root
        .join(crate::history::INDEX_FILE)
        .is_file();
    std::thread::scope(|s| {
        let live =
            s.spawn(|| live_index_present.then(|| validate_history_root(&req.canonical_root)));
        let cand = validate_history_root(&req.candidate_root);
        let live = live
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (cand, live)
    })
}

/// Rules 3 to 5: the candidate's newest row and its files. Only they are kept: the rest of the
/// candidate (a long history's index, parsed twice) is dropped before the run's files are read.
fn candidate_run(
    req: &MergeRequest,
    cand: Validation,
    suite: &Suite,
) -> Result<(IndexRow, RunFiles), PublishError> {
    let cand = cand.map_err(history("candidate"))?;
    let row = checks::newest_row(&cand.index.runs, &req.run_id)?.clone();
    let (cand_suite, cand_version) = (cand.index.suite_name.clone(), cand.index.suite_version);
    let cand_class = cand.index.runner_class.clone();
    drop(cand);
    checks::not_an_anchor(&row)?;
    check_suite_identity("candidate index", &cand_suite, cand_version, suite)
        .map_err(PublishError::Invalid)?;
    check_paths_bound(&row).map_err(PublishError::Invalid)?;
    let files = package::load_run(&req.candidate_root, &row).map_err(history("candidate"))?;
    check_summary_identity(&files.summary, suite).map_err(PublishError::Invalid)?;
    let want = req.runner_class.as_deref();
    checks::runner_class("candidate index", cand_class.as_deref(), want)?;
    let run_class = files
        .summary
        .environment
        .as_ref()
        .and_then(|e| e.runner_class.as_deref());
    checks::runner_class(
        &format!("{}/summary.json environment", req.run_id),
        run_class,
        want,
    )?;
    Ok((row, files))
}

/// Rule 6: the canonical history exists, validates, is of the suite and the class, does not hold
/// the run yet, and has an eligible anchor (returned).
fn live_history(
    req: &MergeRequest,
    live: Option<Validation>,
    suite: &Suite,
) -> Result<(ValidatedHistory, AnchorRef), PublishError> {
    let live = checks::live_index(live, &req.canonical_root)?.map_err(history("canonical"))?;
    check_suite_identity(
        "canonical index",
        &live.index.suite_name,
        live.index.suite_version,
        suite,
    )
    .map_err(PublishError::Invalid)?;
    checks::runner_class(
        "canonical index",
        live.index.runner_class.as_deref(),
        req.runner_class.as_deref(),
    )?;
    checks::not_yet_published(live.doc.contains_run(&req.run_id), &req.run_id)?;
    let anchor = checks::live_anchor(live.latest_anchor.as_ref())?.clone();
    Ok((live, anchor))
}

/// Rule 8: the live index (taken over: the rest of the validated history is dropped here) with
/// the new row appended and chained.
fn extended_index(live: ValidatedHistory, new_row: &IndexRow) -> Result<IndexDoc, PublishError> {
    let mut doc = live.doc;
    doc.adopt_chain().map_err(history("canonical"))?;
    doc.push_row(new_row).map_err(history("canonical"))?;
    Ok(doc)
}

/// Rules 9 to 11: the output package (`compaction::write_package`).
fn write_output(
    req: &MergeRequest,
    suite: &Suite,
    doc: IndexDoc,
    new_row: &IndexRow,
) -> Result<PackageReport, PublishError> {
    let trend_paths = |index: &Index| checks::trend_paths(new_row, index);
    Ok(crate::compaction::write_package(
        crate::compaction::PackagePlan {
            dest: &req.output_root,
            base: Some(&req.canonical_root),
            runs: vec![(&req.candidate_root, &req.run_id)],
            doc,
            trend_paths: &trend_paths,
            policy: crate::compaction::Policy::for_window(suite.thresholds.history_window as usize),
        },
    )?)
}
