//! The acceptance and anchor-eligibility rules a stored row must be consistent with (reference §3.4
//! and §5.5 "eligible anchors"): complete metrics, accepted provenance, and what an anchor may carry.
//! Each check returns the first problem as a message naming the field and the found value.

use super::model::{Acceptance, IndexRow, RegressionSummary, Summary};
use crate::suite::Goal;

fn positive(x: Option<f64>) -> bool {
    matches!(x, Some(v) if v.is_finite() && v > 0.0)
}

/// Complete, finite metrics on every target of a fully succeeded run (`_summary_has_baseline_metrics`).
pub fn baseline_metrics(s: &Summary) -> Result<(), String> {
    let a = &s.summary;
    if a.target_count == 0 {
        return Err("summary.target_count: expected > 0, found 0".into());
    }
    if a.failed + a.skipped + a.missing > 0 {
        return Err(format!(
            "summary counts: expected no failed, skipped or missing target, found failed={} skipped={} missing={}",
            a.failed, a.skipped, a.missing
        ));
    }
    if s.targets.len() != a.target_count as usize {
        return Err(format!(
            "summary.target_count: expected {} (the number of targets), found {}",
            s.targets.len(),
            a.target_count
        ));
    }
    for t in &s.targets {
        if t.status != "succeeded" {
            return Err(format!(
                "target {:?}: status expected \"succeeded\", found {:?}",
                t.key, t.status
            ));
        }
        if !positive(t.baseline_time_ms) {
            return Err(format!(
                "target {:?}: baseline_time_ms expected finite > 0, found {:?}",
                t.key, t.baseline_time_ms
            ));
        }
        match Goal::from_stored(t.optimization_goal.as_deref()) {
            Goal::Speed => {
                if !positive(t.best_speedup) || !positive(t.best_optimized_time_ms) {
                    return Err(format!(
                        "target {:?}: speed goal needs finite best_speedup > 0 and best_optimized_time_ms > 0, found {:?} and {:?}",
                        t.key, t.best_speedup, t.best_optimized_time_ms
                    ));
                }
            }
            Goal::Memory => {
                let pct_ok = matches!(t.best_memory_savings_pct, Some(v) if v.is_finite());
                if !pct_ok || !positive(t.best_optimized_memory_mb) {
                    return Err(format!(
                        "target {:?}: memory goal needs finite best_memory_savings_pct and best_optimized_memory_mb > 0, found {:?} and {:?}",
                        t.key, t.best_memory_savings_pct, t.best_optimized_memory_mb
                    ));
                }
            }
        }
    }
    Ok(())
}

/// True for exactly 40 lower-case hex characters.
pub fn is_git_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A clean checkout bound to its manifest (`_summary_has_accepted_provenance`).
pub fn accepted_provenance(s: &Summary) -> Result<(), String> {
    let commit = s.source_git_commit.as_deref().unwrap_or("");
    if !is_git_commit(commit) {
        return Err(format!(
            "source_git_commit: expected 40 lower-case hex characters, found {commit:?}"
        ));
    }
    if s.source_manifest_git_commit.as_deref() != Some(commit) {
        return Err(format!(
            "source_manifest_git_commit: expected {commit:?} (the source commit), found {:?}",
            s.source_manifest_git_commit
        ));
    }
    if s.source_git_dirty != Some(false) {
        return Err(format!(
            "source_git_dirty: expected false, found {:?}",
            s.source_git_dirty
        ));
    }
    Ok(())
}

/// Whether `run_accepted: true` is consistent with the run's files (reference restore re-derivation).
pub fn accepted(
    s: &Summary,
    reg: &RegressionSummary,
    acceptance: Option<Acceptance>,
) -> Result<(), String> {
    baseline_metrics(s)?;
    accepted_provenance(s)?;
    if !reg.warnings.is_empty() {
        return Err(format!(
            "regression warnings: expected none for an accepted run, found {}",
            reg.warnings.len()
        ));
    }
    let explicit = acceptance.is_some_and(Acceptance::is_explicit);
    if !explicit && (!reg.regressions.is_empty() || !reg.missing_targets.is_empty()) {
        return Err(format!(
            "comparison: an accepted run without explicit acceptance must have no regressions or missing targets, found {} and {}",
            reg.regressions.len(),
            reg.missing_targets.len()
        ));
    }
    Ok(())
}

/// Why an eligible row cannot be an anchor, if it cannot (reference restore "eligible anchors").
pub fn anchor_problem(row: &IndexRow, s: &Summary, reg: &RegressionSummary) -> Option<String> {
    if !row.is_accepted() {
        return Some("an eligible anchor must have run_accepted: true".into());
    }
    if !reg.suppressed_regressions.is_empty() {
        return Some(format!(
            "an anchor cannot carry regressions cleared only by a recheck, found {} suppressed",
            reg.suppressed_regressions.len()
        ));
    }
    let explicit = row.baseline_acceptance.is_some_and(Acceptance::is_explicit);
    if !explicit {
        let changes = reg.regressions.len()
            + reg.improvements.len()
            + reg.anchor_declines.len()
            + reg.missing_targets.len();
        if changes > 0 {
            return Some(format!(
                "an anchor without explicit acceptance must have no comparison changes, found {changes}"
            ));
        }
        if let Some(b) = &reg.baseline_run_id {
            return Some(format!(
                "an anchor without explicit acceptance must be an initial anchor (baseline_run_id null), found {b:?}"
            ));
        }
    }
    accepted(s, reg, row.baseline_acceptance).err()
}

/// Normal publication's eligibility (`_tier1_baseline_eligible`): only an initial anchor with a
/// clean comparison. After the first anchor exists, a normal run is never eligible.
pub fn normally_eligible(reg: &RegressionSummary, allow_initial_anchor: bool) -> bool {
    allow_initial_anchor
        && reg.baseline_run_id.is_none()
        && reg.suppressed_regressions.is_empty()
        && reg.anchor_declines.is_empty()
}
