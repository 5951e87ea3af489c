//! Recheck confirmation (contract §3.5, `_confirm_speedup_regressions`), extended to targets the
//! first measurement could not decide: each target with a speed or latency regression, or with
//! the verdict `unknown`, is measured once more in the same night, and the recheck is **pooled**
//! with the first measurement (`crate::regress::pool`) before the target is decided again
//! against the same anchor, so the extra measurement narrows the interval instead of being a
//! second coin toss. A regression the pooled measurement does not reproduce moves to
//! `suppressed_regressions` (the run then passes the gate but is never an anchor); an unknown
//! target the pooled measurement shows regressed becomes a confirmed regression.

use crate::aggregate::{SUCCEEDED, optimized_time_ms, positive};
use crate::history::model::{
    ChangeRow, RecheckRecord, RegressionSummary, Summary, SuppressedRegression, TargetSummary,
};
use crate::history::{TargetDetection, Verdict};
use crate::regress::noise::NoiseHistory;
use crate::regress::significance::Detector;
use crate::regress::{Decided, decide_target, find_target};
use crate::suite::ThresholdBook;

/// The `suppression_reason` of a regression the recheck did not reproduce.
pub(crate) const SUPPRESSION_REASON: &str = "recheck_not_regressed";

/// The run id of a target's recheck: `<run_id>__recheck__<sanitized key>` (characters outside
/// `[A-Za-z0-9_.-]` become `_`, so the result is a safe run id whenever `run_id` is).
pub(crate) fn recheck_run_id(run_id: &str, key: &str) -> String {
    let key: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{run_id}__recheck__{key}")
}

/// Whether a regression row is confirmed by a recheck (`speedup`, `optimized_latency`) rather than
/// directly (status, memory).
pub(crate) fn is_rechecked(row: &ChangeRow) -> bool {
    matches!(
        row,
        ChangeRow::Speedup { .. } | ChangeRow::OptimizedLatency { .. }
    )
}

/// The target strings to re-execute, once each: the targets with a speed or latency regression
/// (in regression order), then the targets whose verdict is unknown (empty without an anchor).
pub fn targets_to_recheck(first: &RegressionSummary) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if first.baseline_run_id.is_none() {
        return out;
    }
    let regressed = first
        .regressions
        .iter()
        .filter(|r| is_rechecked(r))
        .map(|r| r.target());
    // A target whose settings changed is unknown whatever it measures: no recheck can decide it.
    let unknown = first
        .detection
        .iter()
        .flat_map(|d| d.unknown())
        .filter(|t| t.settings_changed.is_empty())
        .map(|t| t.target.as_str());
    for target in regressed.chain(unknown) {
        if !out.iter().any(|t| t == target) {
            out.push(target.to_string());
        }
    }
    out
}

/// What the re-execution of one regressed target produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RecheckResult {
    /// The target string (as in the regression row).
    pub target: String,
    /// The target key (names the recheck run).
    pub key: String,
    /// Evidence-relative path of the recheck's result JSON.
    pub recheck_output_json: String,
    /// The recheck's target row; `None` when the recheck failed to run.
    pub row: Option<TargetSummary>,
}

/// A recheck row's metrics are usable: finite speedup > 0 (a pair) and optimized time > 0 (a
/// single benchmark, `optimization_goal: time`, has its time only).
pub(crate) fn metrics_valid(row: &TargetSummary) -> bool {
    let single = crate::aggregate::goal(row) == crate::suite::Goal::Time;
    (single || positive(row.best_speedup).is_some()) && optimized_time_ms(row).is_some()
}

/// Apply the recheck results to the first comparison of `current` with `anchor`. For each
/// rechecked target the recheck is pooled with the first measurement and the target decided
/// again (by the same detection rule and noise history; without measurement records the
/// recheck's own row decides, as in the reference):
///
/// - a rechecked regression stands when its recheck is absent or failed to run, did not
///   succeed, has invalid metrics, or the pooled measurement still regresses; otherwise it is
///   suppressed (`recheck_not_regressed`);
/// - an unknown target takes the pooled decision: regressed (a confirmed regression),
///   unchanged or improved (no longer unknown), or still unknown;
/// - the target's detection record becomes the pooled one (`pooled_with` names the recheck).
///
/// Status and memory regressions stand as they are. Without an anchor the comparison is
/// returned unchanged.
pub fn apply(
    mut first: RegressionSummary,
    current: &Summary,
    anchor: &Summary,
    results: &[RecheckResult],
    thresholds: impl Into<ThresholdBook>,
    history: &NoiseHistory,
) -> RegressionSummary {
    if first.baseline_run_id.is_none() {
        return first;
    }
    let book: ThresholdBook = thresholds.into();
    let alpha = first
        .detection
        .as_ref()
        .map_or(book.base.alpha, |d| d.alpha.get());
    let detector = Detector {
        thresholds: book,
        history,
        alpha,
    };
    let run_id = first.current_run_id.clone().unwrap_or_default();
    for target in targets_to_recheck(&first) {
        let Some(result) = results.iter().find(|r| r.target == target) else {
            // Compared side by side instead, or another shard's target.
            tracing::debug!(%target, "no recheck result; the first measurement stands");
            continue;
        };
        let was_regressed = first
            .regressions
            .iter()
            .any(|r| is_rechecked(r) && r.target() == target);
        let first_row = find_target(current, &target);
        let (record, decided) = judge(result, &run_id, first_row, anchor, &detector, was_regressed);
        if let Some(d) = &decided {
            replace_target(
                &mut first,
                &target,
                d,
                &record.recheck_run_id,
                was_regressed,
            );
        }
        if was_regressed
            && !record.confirmed_regression
            && let Some(row) = &record.recheck_summary
        {
            suppress(&mut first, &target, &record.recheck_run_id, row);
        }
        first.rechecks.push(record);
    }
    first
}

/// Move the target's rechecked regression rows to `suppressed_regressions`.
fn suppress(
    first: &mut RegressionSummary,
    target: &str,
    recheck_run_id: &str,
    recheck: &TargetSummary,
) {
    let (mut kept, mut moved) = (Vec::new(), Vec::new());
    for row in std::mem::take(&mut first.regressions) {
        if is_rechecked(&row) && row.target() == target {
            moved.push(SuppressedRegression {
                row,
                suppression_reason: SUPPRESSION_REASON.into(),
                recheck_run_id: recheck_run_id.to_string(),
                recheck_speedup: positive(recheck.best_speedup).map(Into::into),
                recheck_optimized_time_ms: optimized_time_ms(recheck).map(Into::into),
            });
        } else {
            kept.push(row);
        }
    }
    first.regressions = kept;
    first.suppressed_regressions.extend(moved);
}

/// Replace the target's noise, unknown and floor entries and its detection record with the
/// pooled decision; an unknown target the pooled measurement regressed gains its rows.
fn replace_target(
    first: &mut RegressionSummary,
    target: &str,
    d: &Decided,
    recheck_run_id: &str,
    was_regressed: bool,
) {
    first.within_noise.retain(|r| r.target() != target);
    first.inconclusive.retain(|r| r.target != target);
    first.held_by_floor.retain(|r| r.row.target() != target);
    first.within_noise.extend(d.changes.within_noise.clone());
    first.held_by_floor.extend(d.changes.held_by_floor.clone());
    first.inconclusive.extend(d.inconclusive.clone());
    if !was_regressed {
        first.regressions.extend(
            d.changes
                .regressions
                .iter()
                .filter(|r| is_rechecked(r))
                .cloned(),
        );
    }
    if let Some(det) = first.detection.as_mut()
        && let Some(slot) = det.targets.iter_mut().find(|t| t.target == target)
    {
        *slot = TargetDetection {
            pooled_with: Some(recheck_run_id.to_string()),
            ..d.record.clone()
        };
    }
}

/// The recheck record of one target and, when the recheck is usable, the pooled decision.
fn judge(
    result: &RecheckResult,
    run_id: &str,
    first_row: Option<&TargetSummary>,
    anchor: &Summary,
    detector: &Detector<'_>,
    was_regressed: bool,
) -> (RecheckRecord, Option<Decided>) {
    // Until the recheck shows otherwise, a regression stands and an unknown target stays so.
    let mut record = RecheckRecord {
        target: result.target.clone(),
        recheck_run_id: recheck_run_id(run_id, &result.key),
        recheck_output_json: result.recheck_output_json.clone(),
        recheck_summary: result.row.clone(),
        recheck_regressions: vec![],
        recheck_metrics_valid: false,
        confirmed_regression: was_regressed,
    };
    let Some(row) = &result.row else {
        return (record, None);
    };
    record.recheck_metrics_valid = metrics_valid(row);
    let Some(prev) = find_target(anchor, &result.target) else {
        return (record, None);
    };
    if row.status != SUCCEEDED || !record.recheck_metrics_valid {
        // A failed recheck confirms a regression (contract §3.5) and decides nothing else.
        return (record, None);
    }
    let pooled = first_row.and_then(|f| crate::regress::pool::pool(f, row));
    let decided = decide_target(detector, pooled.as_ref().unwrap_or(row), prev);
    record.recheck_regressions = decided
        .changes
        .regressions
        .iter()
        .filter(|r| is_rechecked(r))
        .cloned()
        .collect();
    record.confirmed_regression = decided.record.verdict == Some(Verdict::Regressed)
        && !record.recheck_regressions.is_empty();
    (record, Some(decided))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::*;
    use crate::gate::{baseline_eligibility, run_accepted};
    use crate::regress::compare;
    use crate::suite::Thresholds;

    fn setup(current: Vec<TargetSummary>) -> (Summary, Summary, RegressionSummary) {
        let anchor = summary(
            "anchor",
            vec![
                speed_opt("a", 2.0, 50.0),
                speed_opt("b", 3.0, 10.0),
                memory_target("kv", 1024.0, 50.0),
            ],
        );
        let current = summary("run", current);
        let first = compare(&current, Some(&anchor), Thresholds::default()).expect("comparable");
        (anchor, current, first)
    }

    fn result(key: &str, row: Option<TargetSummary>) -> RecheckResult {
        RecheckResult {
            target: format!("labs/{key}:{key}"),
            key: key.into(),
            recheck_output_json: format!("run__recheck__{key}/results/benchmark_test_results.json"),
            row,
        }
    }

    fn regressed() -> (Summary, Summary, RegressionSummary) {
        setup(vec![
            speed_opt("a", 2.0, 100.0),        // optimized_latency regression
            speed_opt("b", 2.0, 15.0),         // speedup regression
            memory_target("kv", 2048.0, 50.0), // optimized_memory regression
        ])
    }

    #[test]
    fn run_ids_are_sanitized() {
        assert_eq!(
            recheck_run_id("run_1", "llama_3_1_8b"),
            "run_1__recheck__llama_3_1_8b"
        );
        let id = recheck_run_id("run_1", "labs/x:y z");
        assert_eq!(id, "run_1__recheck__labs_x_y_z");
        assert!(crate::fsx::is_safe_run_id(&id));
    }

    #[test]
    fn only_speed_regressions_are_rechecked() {
        let (_, _, first) = regressed();
        assert_eq!(first.regressions.len(), 3);
        assert_eq!(targets_to_recheck(&first), ["labs/a:a", "labs/b:b"]);
        let (_, current, _) = regressed();
        let none = compare(&current, None, Thresholds::default()).expect("no anchor");
        assert!(targets_to_recheck(&none).is_empty());
    }

    #[test]
    fn recheck_that_does_not_reproduce_suppresses_the_regression() {
        let (anchor, current, first) = regressed();
        let results = [
            result("a", Some(speed_opt("a", 2.0, 50.5))),
            result("b", Some(speed_opt("b", 2.0, 15.0))),
        ];
        let out = apply(
            first,
            &current,
            &anchor,
            &results,
            Thresholds::default(),
            &NoiseHistory::default(),
        );
        let reasons: Vec<_> = out.regressions.iter().map(|r| r.reason()).collect();
        assert_eq!(reasons, ["speedup", "optimized_memory"], "b and kv stand");
        assert_eq!(out.suppressed_regressions.len(), 1);
        let s = &out.suppressed_regressions[0];
        assert_eq!(s.row.reason(), "optimized_latency");
        assert_eq!(s.row.target(), "labs/a:a");
        assert_eq!(s.suppression_reason, "recheck_not_regressed");
        assert_eq!(s.recheck_run_id, "run__recheck__a");
        assert_eq!(
            (s.recheck_speedup, s.recheck_optimized_time_ms),
            (Some(2.0.into()), Some(50.5.into()))
        );
        assert_eq!(out.rechecks.len(), 2);
        let (ra, rb) = (&out.rechecks[0], &out.rechecks[1]);
        assert!(!ra.confirmed_regression && ra.recheck_metrics_valid);
        assert!(ra.recheck_regressions.is_empty());
        assert!(rb.confirmed_regression);
        assert_eq!(rb.recheck_regressions.len(), 1);
        assert_eq!(
            rb.recheck_output_json,
            "run__recheck__b/results/benchmark_test_results.json"
        );
        // Suppressed runs pass the gate when nothing else regressed, but are never eligible.
        let (anchor, current, first) = setup(vec![
            speed_opt("a", 2.0, 100.0),
            speed_opt("b", 3.0, 10.0),
            memory_target("kv", 1024.0, 50.0),
        ]);
        let out = apply(
            first,
            &current,
            &anchor,
            &results[..1],
            Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert!(out.regressions.is_empty());
        assert!(run_accepted(&current, &out, false, false));
        assert!(!baseline_eligibility(&current, &out, true, true).passed());
    }

    #[test]
    fn failed_invalid_or_missing_rechecks_confirm() {
        let cases: Vec<(&str, Option<TargetSummary>)> = vec![
            ("did not run", None),
            (
                "failed status",
                Some(with_status(
                    speed_opt("a", 2.0, 50.0),
                    "failed_verification",
                )),
            ),
            ("nan speedup", {
                let mut t = speed_opt("a", 2.0, 50.0);
                t.best_speedup = Some(f64::NAN.into());
                Some(t)
            }),
            ("zero time", {
                let mut t = speed_opt("a", 2.0, 50.0);
                t.best_optimized_time_ms = Some(0.0.into());
                t.baseline_time_ms = Some(0.0.into());
                Some(t)
            }),
            ("still regressed", Some(speed_opt("a", 2.0, 99.0))),
        ];
        for (case, row) in cases {
            let (anchor, current, first) = regressed();
            let out = apply(
                first,
                &current,
                &anchor,
                &[result("a", row)],
                Thresholds::default(),
                &NoiseHistory::default(),
            );
            assert_eq!(out.regressions.len(), 3, "{case}");
            assert!(out.suppressed_regressions.is_empty(), "{case}");
            assert_eq!(out.rechecks.len(), 1, "{case}");
            assert!(out.rechecks[0].confirmed_regression, "{case}");
        }
        // No result at all for a regressed target: it stands, with no record.
        let (anchor, current, first) = regressed();
        let out = apply(
            first,
            &current,
            &anchor,
            &[],
            Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert_eq!(out.regressions.len(), 3);
        assert!(out.rechecks.is_empty());
    }

    #[test]
    fn invalid_metrics_are_recorded() {
        let (anchor, current, first) = regressed();
        let mut t = speed_opt("a", 2.0, 50.0);
        t.best_speedup = Some((-1.0).into());
        let out = apply(
            first,
            &current,
            &anchor,
            &[result("a", Some(t))],
            Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert!(!out.rechecks[0].recheck_metrics_valid);
        assert!(out.rechecks[0].confirmed_regression);
    }

    #[test]
    fn without_anchor_nothing_changes() {
        let (_, current, _) = regressed();
        let first = compare(&current, None, Thresholds::default()).expect("no anchor");
        let anchor = summary("anchor", vec![]);
        let out = apply(
            first.clone(),
            &current,
            &anchor,
            &[result("a", None)],
            Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert_eq!(out, first);
    }
}
