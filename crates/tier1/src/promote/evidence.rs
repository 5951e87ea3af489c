//! Promotion's evidence-package check (contract §6.2 item 14): the manifest, result JSON and report
//! exist under the evidence root and belong to the run; the manifest binds the expected clean commit;
//! every referenced artifact and recheck output exists; the recheck list exists in the history tree.

use crate::bench::result::{ResultsFile, summarize};
use crate::evidence::refs::{check_side_by_side, read_object, resolve};
use crate::fsx;
use crate::history::model::TargetSummary;
use crate::history::package::RunFiles;
use crate::suite::Suite;
use serde_json::Value;
use std::path::Path;

/// Check the evidence package of `run_id` against its summary and comparison.
pub(crate) fn check(
    evidence_root: &Path,
    history_root: &Path,
    run_id: &str,
    commit: &str,
    f: &RunFiles,
    suite: &Suite,
) -> Result<(), String> {
    let s = &f.summary;
    let manifest = resolve(
        evidence_root,
        "source_manifest_json",
        s.source_manifest_json.as_deref(),
        run_id,
    )?;
    let result = resolve(
        evidence_root,
        "source_result_json",
        s.source_result_json.as_deref(),
        run_id,
    )?;
    resolve(
        evidence_root,
        "source_markdown_report",
        s.source_markdown_report.as_deref(),
        run_id,
    )?;
    let m = read_object(&manifest, "manifest")?;
    let git = m.get("git").cloned().unwrap_or(Value::Null);
    if git.get("commit").and_then(Value::as_str) != Some(commit)
        || git.get("dirty") != Some(&Value::Bool(false))
    {
        return Err(format!(
            "manifest git: expected {{commit: {commit:?}, dirty: false}}, found {git}"
        ));
    }
    if m.get("run_id").and_then(Value::as_str) != Some(run_id) {
        return Err(format!(
            "manifest run_id: expected {run_id:?}, found {:?}",
            m.get("run_id")
        ));
    }
    check_summary_against_result(&result, run_id, f, suite)?;
    for t in &s.targets {
        for (kind, rel) in &t.artifacts {
            resolve(
                evidence_root,
                &format!("target {:?} artifact {kind:?}", t.key),
                Some(rel),
                run_id,
            )?;
        }
    }
    for rc in &f.regression.rechecks {
        resolve(
            evidence_root,
            "recheck_output_json",
            Some(&rc.recheck_output_json),
            run_id,
        )?;
    }
    for c in f.regression.side_by_side.iter().flat_map(|b| &b.checks) {
        check_side_by_side(evidence_root, run_id, c)?;
    }
    if let Some(p) = &f.regression.regression_rechecks_path {
        let ok = fsx::join_safe(history_root, p).is_some_and(|p| p.is_file());
        if !ok {
            return Err(format!(
                "regression_rechecks_path {p:?} does not exist in the candidate history"
            ));
        }
    }
    Ok(())
}

/// The fields of a target row the result file determines (reference `_validate_summary_against_result`).
fn derived_fields(t: &TargetSummary) -> Value {
    serde_json::json!({
        "status": t.status,
        "optimization_goal": t.optimization_goal,
        "baseline_time_ms": t.baseline_time_ms,
        "best_speedup": t.best_speedup,
        "best_optimized_time_ms": t.best_optimized_time_ms,
        "best_optimization": t.best_optimization,
        "baseline_memory_mb": t.baseline_memory_mb,
        "best_memory_savings_pct": t.best_memory_savings_pct,
        "best_optimized_memory_mb": t.best_optimized_memory_mb,
        "baseline_p75_ms": t.baseline_p75_ms,
    })
}

/// Re-derive the summary's targets, counts and aggregates from the immutable result file and
/// require exact equality.
fn check_summary_against_result(
    path: &Path,
    run_id: &str,
    f: &RunFiles,
    suite: &Suite,
) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("result JSON {}: {e}", path.display()))?;
    let r: ResultsFile = serde_json::from_slice(&bytes)
        .map_err(|e| format!("result JSON {}: invalid results file: {e}", path.display()))?;
    if r.run_id != run_id {
        return Err(format!(
            "result JSON run_id: expected {run_id:?}, found {:?}",
            r.run_id
        ));
    }
    let rows = summarize(&r, suite).map_err(|e| format!("result JSON {}: {e}", path.display()))?;
    let s = &f.summary;
    if rows.len() != s.targets.len() {
        return Err(format!(
            "summary has {} targets but the result file derives {}",
            s.targets.len(),
            rows.len()
        ));
    }
    for (stored, derived) in s.targets.iter().zip(&rows) {
        let (a, b) = (derived_fields(stored), derived_fields(derived));
        if stored.key != derived.key || a != b {
            return Err(format!(
                "summary target {:?} differs from the one derived from the result file: stored {a}, derived {b}",
                stored.key
            ));
        }
    }
    let aggregates = crate::aggregate::compute(&rows);
    if aggregates != s.summary {
        return Err(format!(
            "summary counts and aggregates differ from those derived from the result file: stored {:?}, derived {aggregates:?}",
            s.summary
        ));
    }
    Ok(())
}
