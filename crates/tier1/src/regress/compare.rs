//! The comparison with the anchor: the reference rules per target, and the significance test where
//! detection is statistical.

use super::changes::{Change, Counted, EPS, TargetChanges, relative_pct};
use super::error::RegressError;
use super::noise::{Metric, NoiseHistory};
use super::significance::{Detector, TargetDecision};
use super::{single, verdict};
use crate::aggregate::{
    SUCCEEDED, finite, optimized_memory_mb, optimized_time_ms, pair_goal, positive,
};
use crate::history::Detection;
use crate::history::model::{ChangeRow, RECHECKS_FILE, RegressionSummary, Summary, TargetSummary};
use crate::suite::{Goal, ThresholdBook, Thresholds};
use std::collections::HashSet;

/// [`compare_in`] with no history: a young history (the anchor alone), the prior noise (the
/// tests' shorthand).
#[cfg(test)]
pub(crate) fn compare(
    current: &Summary,
    anchor: Option<&Summary>,
    thresholds: impl Into<ThresholdBook>,
) -> Result<RegressionSummary, RegressError> {
    compare_in(current, anchor, thresholds, &NoiseHistory::default())
}

/// Compare `current` with `anchor` (None when no eligible anchor exists), with `history` the
/// accepted runs the noise estimate uses.
///
/// With no anchor the result is the reference "no baseline" shape: `baseline_run_id` null, every
/// current target in `new_targets`, all other lists empty and no `regression_rechecks_path`.
/// `warnings` is left empty: history warnings are the caller's to add.
pub fn compare_in(
    current: &Summary,
    anchor: Option<&Summary>,
    thresholds: impl Into<ThresholdBook>,
    history: &NoiseHistory,
) -> Result<RegressionSummary, RegressError> {
    let book: ThresholdBook = thresholds.into();
    let mut out = RegressionSummary {
        baseline_run_id: None,
        current_run_id: Some(current.run_id.clone()),
        regressions: vec![],
        improvements: vec![],
        anchor_declines: vec![],
        new_targets: vec![],
        missing_targets: vec![],
        warnings: vec![],
        suppressed_regressions: vec![],
        rechecks: vec![],
        regression_rechecks_path: None,
        within_noise: vec![],
        inconclusive: vec![],
        held_by_floor: vec![],
        detection: None,
        side_by_side: None,
        extra: Default::default(),
    };
    let Some(anchor) = anchor else {
        out.new_targets = current.targets.clone();
        return Ok(out);
    };
    if let (Some(cur_env), Some(anchor_env)) = (&current.environment, &anchor.environment) {
        let (found, expected) = (cur_env.key(), anchor_env.key());
        if found != expected {
            return Err(RegressError::EnvironmentMismatch {
                current: current.run_id.clone(),
                anchor: anchor.run_id.clone(),
                expected,
                found,
            });
        }
    }
    out.baseline_run_id = Some(anchor.run_id.clone());
    out.regression_rechecks_path = Some(regression_rechecks_path(&current.run_id));
    let base = book.base;
    let detector = detector(current, anchor, book.clone(), history);
    let mut detection = Detection {
        method: base.detection,
        alpha: detector.alpha.into(),
        prior_noise_pct: base.prior_noise_pct.into(),
        prior_runs: base.prior_runs.into(),
        history_run_ids: history.run_ids(),
        targets: Vec::new(),
        on_unknown: Some(base.on_unknown),
    };
    for cur in &current.targets {
        let Some(prev) = find_target(anchor, &cur.target) else {
            out.new_targets.push(cur.clone());
            continue;
        };
        let decided = decide_target(&detector, cur, prev);
        decided.append_to(&mut out);
        detection.targets.push(decided.record);
    }
    out.detection = Some(detection);
    let current_names: HashSet<&str> = current.targets.iter().map(|t| t.target.as_str()).collect();
    out.missing_targets = anchor
        .targets
        .iter()
        .filter(|t| !current_names.contains(t.target.as_str()))
        .cloned()
        .collect();
    Ok(out)
}

/// `<run_id>/regression_rechecks.json`, the path recorded when a previous summary existed.
pub(crate) fn regression_rechecks_path(run_id: &str) -> String {
    format!("{run_id}/{RECHECKS_FILE}")
}

/// The anchor's row for a target string (targets are matched by `target`; the last one wins, as
/// in the reference's dict).
pub(crate) fn find_target<'a>(summary: &'a Summary, target: &str) -> Option<&'a TargetSummary> {
    summary.targets.iter().rev().find(|t| t.target == target)
}

/// One target's comparison: its change rows and its finished detection record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decided {
    /// The rows.
    pub(crate) changes: TargetChanges,
    /// The detection record, with the target's verdict.
    pub(crate) record: crate::history::TargetDetection,
    /// The inconclusive entry when the verdict is unknown.
    pub(crate) inconclusive: Option<crate::history::Inconclusive>,
}

impl Decided {
    /// Add the rows and the inconclusive entry to a comparison (the record is the caller's).
    pub(crate) fn append_to(&self, out: &mut RegressionSummary) {
        let c = self.changes.clone();
        out.regressions.extend(c.regressions);
        out.improvements.extend(c.improvements);
        out.anchor_declines.extend(c.declines);
        out.within_noise.extend(c.within_noise);
        out.held_by_floor.extend(c.held_by_floor);
        out.inconclusive.extend(self.inconclusive.clone());
    }
}

/// Compare one target present in both runs: decide, file the rows, give the verdict (a target
/// whose measurement settings changed is not compared, [`super::settings`]).
pub(crate) fn decide_target(
    detector: &Detector<'_>,
    cur: &TargetSummary,
    prev: &TargetSummary,
) -> Decided {
    if let Some((record, inconclusive)) =
        super::settings::changed(cur, prev, detector.thresholds.base.detection)
    {
        return Decided {
            changes: TargetChanges::default(),
            record,
            inconclusive: Some(inconclusive),
        };
    }
    let decision = detector.decide(cur, prev);
    let th = detector.thresholds.get(&cur.target);
    let changes = compare_target_with(cur, prev, th, &decision);
    let (record, inconclusive) = verdict::finish(decision, &changes, cur);
    Decided {
        changes,
        record,
        inconclusive,
    }
}

/// The detector of a comparison: `alpha` split over the speed and time targets both runs have.
pub(crate) fn detector<'a>(
    current: &Summary,
    anchor: &Summary,
    thresholds: ThresholdBook,
    history: &'a NoiseHistory,
) -> Detector<'a> {
    let compared = current
        .targets
        .iter()
        .filter(|t| find_target(anchor, &t.target).is_some_and(|p| pair_goal(t, p) != Goal::Memory))
        .count();
    Detector::new(thresholds, history, compared)
}

/// Every rule of contract §3.2 for one target present in both runs, by the reference rules
/// alone (no significance test; the tests' reference).
#[cfg(test)]
pub(crate) fn compare_target(
    cur: &TargetSummary,
    prev: &TargetSummary,
    thresholds: &Thresholds,
) -> TargetChanges {
    let reference = Thresholds {
        detection: crate::history::DetectionMethod::Reference,
        ..*thresholds
    };
    let history = NoiseHistory::default();
    let decision = Detector::new(reference, &history, 1).decide(cur, prev);
    compare_target_with(cur, prev, thresholds, &decision)
}

/// Every rule of contract §3.2 for one target present in both runs; under a statistical
/// `decision` a speed change over its threshold must also be significant.
pub(crate) fn compare_target_with(
    cur: &TargetSummary,
    prev: &TargetSummary,
    thresholds: &Thresholds,
    decision: &TargetDecision,
) -> TargetChanges {
    let mut ch = TargetChanges::default();
    let (prev_ok, cur_ok) = (prev.status == SUCCEEDED, cur.status == SUCCEEDED);
    let status_row = || ChangeRow::Status {
        target: cur.target.clone(),
        before: prev.status.clone(),
        after: cur.status.clone(),
    };
    if prev_ok && !cur_ok {
        ch.regressions.push(status_row());
        return ch;
    }
    if !prev_ok && cur_ok {
        ch.improvements.push(status_row());
    }
    match pair_goal(cur, prev) {
        Goal::Speed => speed_checks(cur, prev, thresholds, decision, &mut ch),
        Goal::Memory => memory_checks(cur, prev, thresholds, &mut ch),
        Goal::Time => single::time_checks(cur, prev, thresholds, decision, &mut ch),
    }
    ch
}

fn speed_checks(
    cur: &TargetSummary,
    prev: &TargetSummary,
    th: &Thresholds,
    decision: &TargetDecision,
    ch: &mut TargetChanges,
) {
    let floor = th.min_optimized_time_delta_ms;
    let (prev_ms, cur_ms) = (optimized_time_ms(prev), optimized_time_ms(cur));
    let both_ms = prev_ms.zip(cur_ms);
    let mut speed = Counted::default();
    if let (Some(before), Some(after)) = (positive(prev.best_speedup), positive(cur.best_speedup))
        && let Some(delta_pct) = relative_pct(before, after)
    {
        let time_delta = both_ms.and_then(|(p, c)| finite(Some(c - p)));
        let row = ChangeRow::Speedup {
            target: cur.target.clone(),
            before: before.into(),
            after: after.into(),
            delta_pct: delta_pct.into(),
            optimized_time_before_ms: prev_ms.map(Into::into),
            optimized_time_after_ms: cur_ms.map(Into::into),
            optimized_time_delta_ms: time_delta.map(Into::into),
        };
        let change = Change {
            worse_by: -delta_pct,
            threshold: th.speedup_regression_pct,
            significant: time_delta.is_none_or(|d| d.abs() >= floor - EPS),
            declined: after < before,
            test: decision.verdict(Metric::Speedup),
            floor: time_delta.map(|d| (floor, d)),
        };
        speed = ch.record(row, change, Counted::default());
    }
    if let Some(times) = both_ms {
        let test = decision.verdict(Metric::OptimizedLatency);
        ch.record_latency(&cur.target, times, th, test, speed);
    }
}

fn memory_checks(
    cur: &TargetSummary,
    prev: &TargetSummary,
    th: &Thresholds,
    ch: &mut TargetChanges,
) {
    let mut savings = Counted::default();
    if let (Some(before), Some(after)) = (
        finite(prev.best_memory_savings_pct),
        finite(cur.best_memory_savings_pct),
    ) && let Some(delta_points) = finite(Some(after - before))
    {
        let row = ChangeRow::MemorySavings {
            target: cur.target.clone(),
            before: before.into(),
            after: after.into(),
            delta_points: delta_points.into(),
        };
        let change = Change {
            worse_by: -delta_points,
            threshold: th.memory_savings_regression_points,
            significant: true,
            declined: after < before,
            test: None,
            floor: None,
        };
        savings = ch.record(row, change, Counted::default());
    }
    let (prev_mb, cur_mb) = (
        positive(optimized_memory_mb(prev)),
        positive(optimized_memory_mb(cur)),
    );
    if let (Some(before), Some(after)) = (prev_mb, cur_mb)
        && let Some(delta_pct) = relative_pct(before, after)
    {
        let row = ChangeRow::OptimizedMemory {
            target: cur.target.clone(),
            before: before.into(),
            after: after.into(),
            delta_pct: delta_pct.into(),
            optimized_memory_delta_mb: (after - before).into(),
        };
        let change = Change {
            worse_by: delta_pct,
            threshold: th.optimized_memory_regression_pct,
            significant: true,
            declined: after > before,
            test: None,
            floor: None,
        };
        // The reference does not hold back an optimized-memory improvement after a savings one.
        let counted = Counted {
            improved: false,
            ..savings
        };
        ch.record(row, change, counted);
    }
}

#[cfg(test)]
mod tests;
