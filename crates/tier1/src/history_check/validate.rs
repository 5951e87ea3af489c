//! The validation of a whole history root, strict or in restore's sanitizing mode: the index as
//! stored, its schema version, the sealed segments, every row and every live run (on a few
//! threads), the single initial anchor.

use super::runs::{
    anchor_ref, check_acceptance, check_regression, check_row_fields, check_runner_class,
    check_summary,
};
use super::validated::{AnchorRef, ValidatedHistory};
use super::{sanitize, segments};
use crate::digest::Digest;
use crate::fsx;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, IndexRow};
use crate::history::package::{self, IndexDoc};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Strict,
    Restore,
}

/// Strict read-only validation of a history root (publish, promote, run, dashboard).
/// A missing `index.json` is a structural error; callers that allow "no history" check first.
pub fn validate_history_root(root: &Path) -> Result<ValidatedHistory, HistoryError> {
    validate(root, Mode::Strict)
}

/// Restore's validator: everything `validate_history_root` checks, plus the reference sanitizing
/// (portable paths, generic warning text, backfills, re-rendered Markdown), applied in place to a
/// freshly extracted staging tree (files overwritten in place: the tree is published by one rename). Requires a non-empty run list and at least one eligible anchor.
pub fn sanitize_restored(root: &Path) -> Result<ValidatedHistory, HistoryError> {
    validate(root, Mode::Restore)
}

fn validate(root: &Path, mode: Mode) -> Result<ValidatedHistory, HistoryError> {
    if !root.join(INDEX_FILE).is_file() {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!("no index.json under history root {}", root.display()),
        ));
    }
    let raw: Value = package::read_json(root, INDEX_FILE)?;
    check_raw_rows(&raw)?;
    let mut doc = IndexDoc::from_value(raw)?;
    let chain = doc.chain_state()?;
    let newest = crate::history::segment::SEGMENTED_SCHEMA_VERSION;
    if let Some(v) = doc.index.schema_version
        && v > newest
    {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!("schema_version: expected at most {newest}, found {v}"),
        ));
    }
    let sealed = segments::check_records(root, &doc)?;
    if mode == Mode::Restore && doc.index.runs.is_empty() {
        return Err(HistoryError::structural(
            INDEX_FILE,
            "runs: expected a non-empty list of runs, found []",
        ));
    }
    let mut migrated = false;
    if mode == Mode::Restore {
        migrated |= sanitize::relocate_legacy_paths(&mut doc, &chain)?;
        if doc.index.history_root != "." {
            doc.set_field("history_root", Value::from("."))?;
            migrated = true;
        }
    }
    let mut seen = BTreeSet::new();
    for row in &doc.index.runs {
        check_row_fields(row)?;
        if sealed.run_ids.contains(&row.run_id) {
            return Err(HistoryError::integrity(
                INDEX_FILE,
                format!(
                    "run_id {:?} is both live and sealed in a segment (a sealed run listed again)",
                    row.run_id
                ),
            ));
        }
        if !seen.insert(row.run_id.as_str()) {
            return Err(HistoryError::structural(
                INDEX_FILE,
                format!("run_id {:?} appears more than once", row.run_id),
            ));
        }
    }
    let mut latest_anchor = None;
    let mut initial_anchors = sealed.initial_anchors;
    // Runs are independent: checked on a few threads, the first failure in publication order wins.
    let class = doc.index.runner_class.as_deref();
    for checked in check_runs(root, &doc.index.runs, mode, class) {
        if let Some((row, anchor, initial)) = checked? {
            if initial {
                initial_anchors.push(row.run_id.clone());
            }
            latest_anchor = Some(anchor);
        }
    }
    if initial_anchors.len() > 1 {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!(
                "disconnected initial anchor: expected at most one eligible run with no baseline, found {initial_anchors:?}"
            ),
        ));
    }
    if mode == Mode::Restore {
        if latest_anchor.is_none() {
            return Err(HistoryError::structural(
                INDEX_FILE,
                "expected at least one eligible anchor (baseline_eligible: true), found none",
            ));
        }
        if migrated {
            let bytes = doc.to_bytes()?;
            fsx::overwrite_staged_if_changed(&root.join(INDEX_FILE), &bytes).map_err(|e| {
                HistoryError::structural(INDEX_FILE, format!("cannot rewrite: {e}"))
            })?;
        }
    }
    Ok(ValidatedHistory {
        index: doc.index.clone(),
        latest_anchor,
        chain,
        doc,
    })
}

/// What one live run's checks yield for the index-wide rules: for an eligible run, its anchor
/// reference and whether it was compared with no anchor.
type RunChecked<'a> = Option<(&'a IndexRow, AnchorRef, bool)>;

/// Every live run's files checked (and sanitized in restore mode), on a few threads
/// ([`crate::par::map`]); the results come back in publication order.
fn check_runs<'a>(
    root: &Path,
    rows: &'a [IndexRow],
    mode: Mode,
    class: Option<&str>,
) -> Vec<Result<RunChecked<'a>, HistoryError>> {
    let one = |row: &&'a IndexRow| -> Result<RunChecked<'a>, HistoryError> {
        let row: &'a IndexRow = row;
        let mut files = package::load_run(root, row)?;
        check_summary(row, &files.summary)?;
        check_runner_class(row, &files.summary, class)?;
        check_regression(row, &files.regression)?;
        if mode == Mode::Restore {
            sanitize::sanitize_run(root, row, &mut files)?;
        }
        check_acceptance(row, &files)?;
        if !row.is_eligible() {
            return Ok(None);
        }
        let initial = files.regression.baseline_run_id.is_none();
        Ok(Some((row, anchor_ref(row, &files.summary)?, initial)))
    };
    let refs: Vec<&'a IndexRow> = rows.iter().collect();
    crate::par::map(&refs, one)
}

/// Checks on the stored JSON that give clearer messages than a typed parse.
fn check_raw_rows(raw: &Value) -> Result<(), HistoryError> {
    let Some(runs) = raw.get("runs") else {
        return Err(HistoryError::structural(INDEX_FILE, "missing `runs` list"));
    };
    let Some(runs) = runs.as_array() else {
        return Err(HistoryError::structural(
            INDEX_FILE,
            format!("runs: expected a list, found {runs}"),
        ));
    };
    for (i, row) in runs.iter().enumerate() {
        let Some(obj) = row.as_object() else {
            return Err(HistoryError::structural(
                INDEX_FILE,
                format!("runs[{i}]: expected an object, found {row}"),
            ));
        };
        for field in ["run_accepted", "baseline_eligible"] {
            if let Some(v) = obj.get(field)
                && !v.is_boolean()
            {
                return Err(HistoryError::structural(
                    INDEX_FILE,
                    format!("runs[{i}].{field}: expected a bool, found {v}"),
                ));
            }
        }
        if let Some(v) = obj.get("baseline_acceptance")
            && !v.is_null()
        {
            const ALLOWED: [&str; 4] = [
                "accept_history_anchor",
                "accept_regressions",
                "clean",
                "update_expectations",
            ];
            if !v.as_str().is_some_and(|s| ALLOWED.contains(&s)) {
                return Err(HistoryError::structural(
                    INDEX_FILE,
                    format!(
                        "runs[{i}].baseline_acceptance: expected one of {ALLOWED:?}, found {v}"
                    ),
                ));
            }
        }
        if let Some(v) = obj.get("baseline_evidence_digest")
            && !v.is_null()
            && !v
                .as_str()
                .is_some_and(|s| Digest::parse(s).is_ok_and(|d| d.as_str() == s))
        {
            return Err(HistoryError::integrity(
                INDEX_FILE,
                format!(
                    "runs[{i}].baseline_evidence_digest: expected sha256:<64 lower hex>, found {v}"
                ),
            ));
        }
    }
    Ok(())
}
