//! [`promote`]: the checks of contract §6.2 in order (docs/tier1-promote.md, "Checks, in
//! order"), one named step each, then the write of §6.3 and §6.4. The steps read the trees; what
//! they decide is in [`rules`](super::rules).

use super::error::{PromoteError, history};
use super::output::{self, PromoteOutcome};
use super::request::{PromoteRequest, check_request};
use super::rules::{self, Live, LiveFacts};
use super::{evidence, shards};
use crate::history::INDEX_FILE;
use crate::history::model::{IndexRow, Summary};
use crate::history::package::{self, RunFiles};
use crate::history_check::{ValidatedHistory, validate_history_root};
use crate::publish::{check_paths_bound, check_suite_identity, check_summary_identity};
use crate::regress::noise::NoiseHistory;
use crate::suite::Suite;
use std::path::Path;

/// Promote the candidate's newest run to the canonical anchor.
pub fn promote(r: &PromoteRequest) -> Result<PromoteOutcome, PromoteError> {
    // 1-6. The request's own values.
    let checked = check_request(r)?;
    // 7. The suite, and the output root before anything is read.
    let suite = Suite::discover(
        r.suite_config.as_deref(),
        &r.repo_root,
        Some(&r.history_root),
    )?
    .suite;
    prepare_output_root(r)?;
    // 8. The candidate index and its newest row.
    let cand = validate_history_root(&r.history_root).map_err(history("candidate"))?;
    let row = newest_row(r, &cand, &suite)?;
    // 9. The run's files and its target list.
    let files = load_run_files(r, &cand, row, &suite)?;
    // 10. Complete metrics, accepted provenance, the expected commit; (tier1) anchor precision.
    rules::eligible_anchor(&r.run_id, &files.summary, &checked.commit)?;
    // 11. Comparison shape and content.
    rules::comparison_shape(
        &r.run_id,
        &r.expected_evidence_artifact,
        &files.summary,
        &files.regression,
    )?;
    // 12. Live history; (tier1) no outlier against its accepted runs.
    let live = load_live(r, &suite)?;
    check_outliers(r, live.as_ref(), &suite, &files)?;
    // 13. Prior anchor (or the bootstrap reset) and the recomputed comparison.
    let prior = prior_anchor(live.as_ref(), r.canonical_history_root.as_deref(), &suite)?;
    let prior_id = prior.as_ref().map(|(id, _)| id.clone());
    let bootstrap_reset = rules::bootstrap_reset(
        prior_id.as_deref(),
        r.allow_bootstrap,
        files.regression.baseline_run_id.as_deref(),
    )?;
    check_recomputed(r, &suite, &files, prior.as_ref().map(|(_, s)| s))?;
    // 14. Evidence package (a combined run's: with its shards' packages, docs/sharding.md §5).
    check_evidence(r, &checked.commit, &files, &suite)?;
    // §6.3, §6.4. The ratified row, appended to live history or to a new chain.
    let entry = output::ratified_row(r, row, &checked);
    drop(cand);
    output::write(r, &suite, live, bootstrap_reset, &entry)?;
    tracing::info!(run_id = %r.run_id, bootstrap_reset, "ratified history anchor");
    Ok(PromoteOutcome {
        success: true,
        run_id: r.run_id.clone(),
        baseline_acceptance: crate::history::model::Acceptance::AcceptHistoryAnchor,
        accepted_regression_count: files.regression.regressions.len(),
        prior_anchor_run_id: prior_id,
        bootstrap_reset,
        history_root: ".".into(),
    })
}

/// Step 7: the output root is absent or empty and outside every input tree; stale staging
/// beside it is tidied.
fn prepare_output_root(r: &PromoteRequest) -> Result<(), PromoteError> {
    let mut inputs = vec![
        ("candidate history root", r.history_root.as_path()),
        ("evidence root", r.evidence_root.as_path()),
    ];
    if let Some(live) = &r.canonical_history_root {
        inputs.push(("canonical history root", live.as_path()));
    }
    crate::fsx::check_output_root(&r.output_history_root, &inputs)?;
    crate::fsx::stale::tidy_beside(&[&r.output_history_root]);
    Ok(())
}

/// Step 8: the run is the candidate's newest row ([`rules::newest_candidate`]) and the index has
/// the suite's identity.
fn newest_row<'a>(
    r: &PromoteRequest,
    cand: &'a ValidatedHistory,
    suite: &Suite,
) -> Result<&'a IndexRow, PromoteError> {
    let row = rules::newest_candidate(&cand.index.runs, &r.run_id)?;
    check_suite_identity(
        "candidate index",
        &cand.index.suite_name,
        cand.index.suite_version,
        suite,
    )
    .map_err(PromoteError::Invalid)?;
    Ok(row)
}

/// Step 9: the run's files, bound to the run, of the suite, of the runner class ratified
/// ([`rules::runner_class`]), with the suite's target list ([`rules::target_list`]).
fn load_run_files(
    r: &PromoteRequest,
    cand: &ValidatedHistory,
    row: &IndexRow,
    suite: &Suite,
) -> Result<RunFiles, PromoteError> {
    check_paths_bound(row).map_err(PromoteError::Invalid)?;
    let files = package::load_run(&r.history_root, row).map_err(history("candidate"))?;
    check_summary_identity(&files.summary, suite).map_err(PromoteError::Invalid)?;
    let want = r.runner_class.as_deref();
    rules::runner_class("candidate index", cand.index.runner_class.as_deref(), want)?;
    rules::runner_class(
        &format!("{}/summary.json environment", r.run_id),
        files
            .summary
            .environment
            .as_ref()
            .and_then(|e| e.runner_class.as_deref()),
        want,
    )?;
    rules::target_list(&files.summary, suite)?;
    Ok(files)
}

/// Step 12: live history as [`rules::live_history`] decides (None when it is absent or reset by
/// a bootstrap over a suite-version change), of the runner class ratified.
fn load_live(r: &PromoteRequest, suite: &Suite) -> Result<Option<ValidatedHistory>, PromoteError> {
    let root = r
        .canonical_history_root
        .as_deref()
        .filter(|p| p.join(INDEX_FILE).is_file());
    let live = root
        .map(validate_history_root)
        .transpose()
        .map_err(history("canonical"))?;
    let facts = live.as_ref().map(|l| LiveFacts {
        suite_name: &l.index.suite_name,
        suite_version: l.index.suite_version,
        holds_run: l.doc.contains_run(&r.run_id),
    });
    let decision = rules::live_history(
        facts,
        (&suite.suite_name, suite.version),
        &r.run_id,
        r.allow_bootstrap,
    )?;
    match (decision, live) {
        (Live::Keep, Some(l)) => {
            let (found, want) = (l.index.runner_class.as_deref(), r.runner_class.as_deref());
            rules::runner_class("live index", found, want)?;
            Ok(Some(l))
        }
        _ => Ok(None),
    }
}

/// Step 12 (tier1): the outlier rule ([`rules::outlier_rule`]) against the live history's
/// accepted runs, when live history is kept.
fn check_outliers(
    r: &PromoteRequest,
    live: Option<&ValidatedHistory>,
    suite: &Suite,
    files: &RunFiles,
) -> Result<(), PromoteError> {
    let (Some(_), Some(root)) = (live, r.canonical_history_root.as_deref()) else {
        return Ok(());
    };
    let accepted =
        NoiseHistory::for_run(root, suite, &files.summary).map_err(history("canonical"))?;
    rules::outlier_rule(
        &r.run_id,
        &files.summary,
        &accepted,
        &suite.thresholds,
        &files.regression.rechecks,
    )?;
    Ok(())
}

/// Step 13: the last eligible live row whose summary has the config's suite identity, with that
/// summary.
fn prior_anchor(
    live: Option<&ValidatedHistory>,
    root: Option<&Path>,
    suite: &Suite,
) -> Result<Option<(String, Summary)>, PromoteError> {
    let (Some(live), Some(root)) = (live, root) else {
        return Ok(None);
    };
    for row in live.index.runs.iter().rev().filter(|r| r.is_eligible()) {
        let s: Summary =
            package::read_json(root, &row.summary_path).map_err(history("canonical"))?;
        if s.suite_name == suite.suite_name && s.suite_version == suite.version {
            return Ok(Some((row.run_id.clone(), s)));
        }
    }
    Ok(None)
}

/// Step 13: the stored comparison is the recomputed one ([`rules::recomputed_comparison`]), with
/// the noise history the run was compared with: the candidate tree's accepted runs before it.
fn check_recomputed(
    r: &PromoteRequest,
    suite: &Suite,
    files: &RunFiles,
    prior: Option<&Summary>,
) -> Result<(), PromoteError> {
    let noise = NoiseHistory::for_run(&r.history_root, suite, &files.summary)
        .map_err(history("candidate"))?;
    rules::recomputed_comparison(
        &files.summary,
        &files.regression,
        prior,
        &suite.threshold_book(),
        &noise,
    )
}

/// Step 14: the evidence package, assembled with the shards' packages for a combined run
/// ([`rules::shard_archives`], docs/sharding.md §5).
fn check_evidence(
    r: &PromoteRequest,
    commit: &str,
    files: &RunFiles,
    suite: &Suite,
) -> Result<(), PromoteError> {
    rules::shard_archives(
        &r.run_id,
        files.summary.shards.is_some(),
        !r.shard_archives.is_empty(),
    )?;
    let assembled = match &files.summary.shards {
        Some(record) => Some(shards::assemble(
            &r.evidence_root,
            &r.shard_archives,
            &r.run_id,
            record,
            suite,
        )?),
        None => None,
    };
    evidence::check(
        assembled
            .as_ref()
            .map_or(r.evidence_root.as_path(), |t| t.path()),
        &r.history_root,
        &r.run_id,
        commit,
        files,
        suite,
    )
    .map_err(PromoteError::Invalid)
}
