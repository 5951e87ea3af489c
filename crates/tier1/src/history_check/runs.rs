//! The rules of one run: its index row's fields and paths, its summary and regression files bound
//! to the row, its stored acceptance re-derived with the gate, and its anchor reference.

use super::validated::AnchorRef;
use crate::artifacts::is_evidence_artifact_name;
use crate::digest::Digest;
use crate::fsx;
use crate::gate;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, IndexRow, RegressionSummary, Summary};
use crate::history::package::{self, RunFiles};

/// The row's own fields: a safe run id, eligibility and acceptance fields that agree, safe paths.
pub(super) fn check_row_fields(row: &IndexRow) -> Result<(), HistoryError> {
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
pub(crate) fn check_summary(row: &IndexRow, s: &Summary) -> Result<(), HistoryError> {
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
    if let Some(p) = s.shards.as_ref().and_then(|r| r.problem()) {
        return bad(format!("shards: {p}"));
    }
    Ok(())
}

/// A run's summary names the history's runner class (`index.json` `runner_class`, absent: the
/// unnamed class; docs/sharding.md): a run of another class in this history is an integrity
/// error. A summary without an environment (older runs) names none.
pub(super) fn check_runner_class(
    row: &IndexRow,
    s: &Summary,
    class: Option<&str>,
) -> Result<(), HistoryError> {
    let Some(env) = &s.environment else {
        return Ok(());
    };
    let found = env.runner_class.as_deref();
    if found != class {
        return Err(HistoryError::integrity(
            &row.summary_path,
            format!(
                "environment.runner_class: expected {class:?} (index.json runner_class), found {found:?}: a run of another runner class is never part of this history"
            ),
        ));
    }
    Ok(())
}

/// The regression summary names the row's run.
pub(super) fn check_regression(row: &IndexRow, r: &RegressionSummary) -> Result<(), HistoryError> {
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

/// A stored `run_accepted` or `baseline_eligible` that the gate, re-run on the files, confirms.
pub(super) fn check_acceptance(row: &IndexRow, f: &RunFiles) -> Result<(), HistoryError> {
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

/// The anchor reference of an eligible run.
pub(super) fn anchor_ref(row: &IndexRow, s: &Summary) -> Result<AnchorRef, HistoryError> {
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
