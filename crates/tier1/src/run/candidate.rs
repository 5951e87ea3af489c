//! Write a run into the candidate history root in place: the run directory is staged and renamed
//! into place, then `index.json` is replaced atomically with the new row appended to the hash chain.
//! If the index write fails the run directory is removed again, so the root is never half-updated.

use crate::history::error::HistoryError;
use crate::history::model::{
    Acceptance, INDEX_FILE, IndexRow, RECHECKS_FILE, REGRESSION_JSON_FILE, REGRESSION_MD_FILE,
    RegressionSummary, SUMMARY_FILE, Summary, TREND_FILE,
};
use crate::history::package::{IndexDoc, run_path};
use std::path::Path;

/// The row a run appends to the index.
pub(crate) fn index_row(
    summary: &Summary,
    run_accepted: bool,
    baseline_eligible: bool,
) -> IndexRow {
    let id = &summary.run_id;
    let a = &summary.summary;
    IndexRow {
        run_id: id.clone(),
        generated_at: summary.generated_at.clone(),
        summary_path: run_path(id, SUMMARY_FILE),
        regression_summary_path: run_path(id, REGRESSION_MD_FILE),
        regression_json_path: run_path(id, REGRESSION_JSON_FILE),
        trend_snapshot_path: run_path(id, TREND_FILE),
        avg_speedup: a.avg_speedup,
        median_speedup: a.median_speedup,
        geomean_speedup: a.geomean_speedup,
        representative_speedup: a.representative_speedup,
        max_speedup: a.max_speedup,
        succeeded: a.succeeded,
        failed: a.failed,
        skipped: a.skipped,
        missing: a.missing,
        run_accepted: Some(run_accepted),
        baseline_eligible: Some(baseline_eligible),
        // The first anchor of a normal publication is "clean" (no actor fields).
        baseline_acceptance: baseline_eligible.then_some(Acceptance::Clean),
        baseline_acceptance_actor: None,
        baseline_acceptance_actor_role: None,
        baseline_acceptance_note: None,
        baseline_acceptance_workflow_run: None,
        baseline_acceptance_reviewers: vec![],
        baseline_evidence_digest: None,
        chain_sha256: None,
        extra: Default::default(),
    }
}

/// Everything a run adds to the history.
#[derive(Debug)]
pub(crate) struct CandidateRun<'a> {
    /// The summary.
    pub(crate) summary: &'a Summary,
    /// The comparison (after rechecks).
    pub(crate) regression: &'a RegressionSummary,
    /// Gate result.
    pub(crate) run_accepted: bool,
    /// Eligibility under normal publication.
    pub(crate) baseline_eligible: bool,
}

/// Append `run` to the history at `root` (created when absent).
pub(crate) fn append(root: &Path, run: &CandidateRun<'_>) -> Result<IndexRow, HistoryError> {
    let id = &run.summary.run_id;
    let io = |what: &str, e: &std::io::Error| HistoryError::write(what, e);
    std::fs::create_dir_all(root).map_err(|e| io(&root.display().to_string(), &e))?;
    let class = run
        .summary
        .environment
        .as_ref()
        .and_then(|e| e.runner_class.as_deref());
    let mut doc = match IndexDoc::load(root)? {
        Some(doc) => doc,
        None => {
            let mut doc = IndexDoc::new_chained(&run.summary.suite_name, run.summary.suite_version);
            doc.set_runner_class(class)?;
            doc
        }
    };
    if doc.index.runner_class.as_deref() != class {
        return Err(HistoryError::integrity(
            INDEX_FILE,
            format!(
                "runner_class: the history is of class {:?}, run {id:?} measured on class {class:?}: a run is recorded only in its own class's history",
                doc.index.runner_class
            ),
        ));
    }
    if doc.contains_run(id) {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!("run {id:?} already exists in the index"),
        ));
    }
    let row = index_row(run.summary, run.run_accepted, run.baseline_eligible);
    doc.push_row(&row)?;
    let index = doc.index.clone();
    let trend = crate::history::trend::build(&index);

    let run_dir = root.join(id);
    let stage = crate::fsx::StagedDir::new(&run_dir).map_err(|e| io(id, &e))?;
    let put = |file: &str, bytes: Vec<u8>| -> Result<(), HistoryError> {
        crate::fsx::write_atomic(&stage.path().join(file), &bytes)
            .map_err(|e| io(&run_path(id, file), &e))
    };
    put(SUMMARY_FILE, pretty(run.summary, id, SUMMARY_FILE)?)?;
    put(
        REGRESSION_JSON_FILE,
        pretty(run.regression, id, REGRESSION_JSON_FILE)?,
    )?;
    put(
        REGRESSION_MD_FILE,
        crate::regress_md::render(run.regression).into_bytes(),
    )?;
    put(TREND_FILE, pretty(&trend, id, TREND_FILE)?)?;
    if run.regression.regression_rechecks_path.is_some() {
        put(
            RECHECKS_FILE,
            pretty(&run.regression.rechecks, id, RECHECKS_FILE)?,
        )?;
    }
    stage.commit().map_err(|e| io(id, &e))?;
    let bytes = doc.to_bytes()?;
    if let Err(e) = crate::fsx::write_atomic(&root.join(INDEX_FILE), &bytes) {
        let _ = std::fs::remove_dir_all(&run_dir);
        return Err(io(INDEX_FILE, &e));
    }
    Ok(doc.row(id).cloned().unwrap_or(row))
}

fn pretty<T: serde::Serialize>(v: &T, run_id: &str, file: &str) -> Result<Vec<u8>, HistoryError> {
    let what = run_path(run_id, file);
    crate::json::to_pretty(v, &what).map_err(|e| HistoryError::structural(&what, e.to_string()))
}
