//! Validation of a history root: every rule of the reference index loader and restore validator
//! (contract §2.2, §5.5 step 4), plus the hash chain; and restore's in-place sanitizing
//! ([`sanitize`]). It sits above the format layer (`history`) and the rules it re-derives stored
//! verdicts with (`aggregate` for the status counts, `gate` for acceptance and eligibility,
//! `regress_md` for the re-rendered Markdown), so `history` never imports them. A compacted root's
//! sealed segments are checked by digest on every validation and opened by [`segments::check_deep`];
//! [`restorable::would_restore_accept`] is the check a package passes before it is written.

pub mod restorable;
pub mod sanitize;
pub mod segments;

use crate::digest::Digest;
use crate::fsx;
use crate::gate;
use crate::history::chain::ChainState;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, Index, IndexRow, RegressionSummary, Summary};
use crate::history::package::{self, IndexDoc, RunFiles};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The anchor restore must bind to retained evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorRef {
    /// Run id of the latest eligible anchor.
    pub run_id: String,
    /// Its `evidence_artifact_name` (defaults to `tier1-evidence-<run_id>`).
    pub evidence_artifact_name: String,
    /// Its 40-hex source commit.
    pub git_commit: String,
    /// Its persisted `baseline_evidence_digest`, when promotion recorded one.
    pub evidence_digest: Option<Digest>,
}

/// A root that passed every rule.
#[derive(Debug, Clone)]
pub struct ValidatedHistory {
    /// The parsed index.
    pub index: Index,
    /// The latest eligible anchor (None only for an empty history).
    pub latest_anchor: Option<AnchorRef>,
    /// Whether the index carries a verified hash chain (legacy reference indexes do not).
    pub chain: ChainState,
    /// The index as stored (raw rows kept for byte-identical extension).
    pub doc: IndexDoc,
}

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

pub use crate::artifacts::is_evidence_artifact_name;

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
        if !seen.insert(row.run_id.as_str()) || sealed.run_ids.contains(&row.run_id) {
            return Err(HistoryError::structural(
                INDEX_FILE,
                format!("run_id {:?} appears more than once", row.run_id),
            ));
        }
    }
    let mut latest_anchor = None;
    let mut initial_anchors = sealed.initial_anchors;
    // Runs are independent: checked on a few threads, the first failure in publication order wins.
    for checked in check_runs(root, &doc.index.runs, mode) {
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
) -> Vec<Result<RunChecked<'a>, HistoryError>> {
    let one = |row: &&'a IndexRow| -> Result<RunChecked<'a>, HistoryError> {
        let row: &'a IndexRow = row;
        let mut files = package::load_run(root, row)?;
        check_summary(row, &files.summary)?;
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

fn check_row_fields(row: &IndexRow) -> Result<(), HistoryError> {
    let id = &row.run_id;
    let bad = |m: String| {
        Err(HistoryError::structural(
            INDEX_FILE,
            format!("run {id:?}: {m}"),
        ))
    };
    if !fsx::is_safe_run_id(id) {
        return bad("run_id must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$".into());
    }
    if row.is_eligible() && !row.is_accepted() {
        return bad(
            "baseline_eligible: true requires run_accepted: true, found false or absent".into(),
        );
    }
    let has_actor_fields = row.baseline_acceptance_actor.is_some()
        || row.baseline_acceptance_note.is_some()
        || row.baseline_acceptance_workflow_run.is_some();
    match row.baseline_acceptance {
        Some(a) if !row.is_eligible() => {
            return bad(format!(
                "baseline_acceptance {a:?} is only allowed on an eligible run (baseline_eligible: true)"
            ));
        }
        Some(a) if a.is_explicit() => {
            for (name, v) in [
                ("baseline_acceptance_actor", &row.baseline_acceptance_actor),
                ("baseline_acceptance_note", &row.baseline_acceptance_note),
                (
                    "baseline_acceptance_workflow_run",
                    &row.baseline_acceptance_workflow_run,
                ),
            ] {
                if v.as_deref().is_none_or(|s| s.trim().is_empty()) {
                    return bad(format!(
                        "explicit acceptance {a:?} needs a non-empty `{name}`"
                    ));
                }
            }
        }
        Some(_) if has_actor_fields => {
            return bad("a \"clean\" anchor carries no actor, note or workflow-run fields".into());
        }
        None if has_actor_fields => {
            return bad(
                "acceptance actor, note or workflow-run fields without baseline_acceptance".into(),
            );
        }
        _ => {}
    }
    for (field, rel) in package::row_paths(row) {
        if fsx::safe_relative_parts(rel).is_none() {
            return Err(HistoryError::integrity(
                INDEX_FILE,
                format!(
                    "run {id:?}: `{field}` {rel:?} is not a safe relative path under the history root"
                ),
            ));
        }
    }
    Ok(())
}

/// Counts match statuses, `target_count == len(targets)`, run id and suite bound to the row.
pub fn check_summary(row: &IndexRow, s: &Summary) -> Result<(), HistoryError> {
    let bad = |m: String| Err(HistoryError::structural(&row.summary_path, m));
    if s.run_id != row.run_id {
        return bad(format!(
            "run_id: expected {:?} (the index row), found {:?}",
            row.run_id, s.run_id
        ));
    }
    let a = &s.summary;
    if a.target_count as usize != s.targets.len() {
        return bad(format!(
            "summary.target_count: expected {} (len(targets)), found {}",
            s.targets.len(),
            a.target_count
        ));
    }
    let derived = crate::aggregate::compute(&s.targets);
    let expected = [
        ("succeeded", a.succeeded, derived.succeeded),
        ("failed", a.failed, derived.failed),
        ("skipped", a.skipped, derived.skipped),
        ("missing", a.missing, derived.missing),
    ];
    for (name, found, want) in expected {
        if found != want {
            return bad(format!(
                "summary.{name}: expected {want} (from target statuses), found {found}"
            ));
        }
    }
    Ok(())
}

fn check_regression(row: &IndexRow, r: &RegressionSummary) -> Result<(), HistoryError> {
    if let Some(cur) = &r.current_run_id
        && cur != &row.run_id
    {
        return Err(HistoryError::structural(
            &row.regression_json_path,
            format!("current_run_id: expected {:?}, found {cur:?}", row.run_id),
        ));
    }
    Ok(())
}

fn check_acceptance(row: &IndexRow, f: &RunFiles) -> Result<(), HistoryError> {
    let explicit = row.baseline_acceptance.is_some_and(|a| a.is_explicit());
    let warnings = !f.regression.warnings.is_empty();
    let fail = |what: &str, reasons: Vec<String>| {
        Err(HistoryError::structural(
            INDEX_FILE,
            format!(
                "run {:?}: stored {what}: true contradicts its files: {}",
                row.run_id,
                reasons.join("; ")
            ),
        ))
    };
    if row.is_accepted() {
        let c = gate::run_acceptance(&f.summary, &f.regression, warnings, explicit);
        if !c.passed() {
            return fail("run_accepted", c.reasons);
        }
    }
    if row.is_eligible() {
        let c = gate::eligible_anchor_rules(
            &f.summary,
            &f.regression,
            row.is_accepted(),
            explicit,
            warnings,
        );
        if !c.passed() {
            return fail("baseline_eligible", c.reasons);
        }
    }
    Ok(())
}

fn anchor_ref(row: &IndexRow, s: &Summary) -> Result<AnchorRef, HistoryError> {
    let name = s
        .evidence_artifact_name
        .clone()
        .unwrap_or_else(|| format!("tier1-evidence-{}", row.run_id));
    if !is_evidence_artifact_name(&name) {
        return Err(HistoryError::structural(
            &row.summary_path,
            format!(
                "evidence_artifact_name: expected {}, found {name:?}",
                crate::artifacts::EVIDENCE_NAME_PATTERN
            ),
        ));
    }
    let evidence_digest = match &row.baseline_evidence_digest {
        Some(d) => {
            Some(Digest::parse(d).map_err(|e| HistoryError::integrity(INDEX_FILE, e.to_string()))?)
        }
        None => None,
    };
    Ok(AnchorRef {
        run_id: row.run_id.clone(),
        evidence_artifact_name: name,
        git_commit: s.source_git_commit.clone().unwrap_or_default(),
        evidence_digest,
    })
}
