//! Recheck confirmation (contract §3.5, `_confirm_speedup_regressions`): speed regressions are
//! re-measured once and compared with the same anchor; those the recheck does not reproduce move to
//! `suppressed_regressions` (the run then passes the gate but is never an anchor).

use crate::aggregate::{SUCCEEDED, optimized_time_ms, positive};
use crate::history::model::{
    ChangeRow, RecheckRecord, RegressionSummary, Summary, SuppressedRegression, TargetSummary,
};
use crate::regress::noise::NoiseHistory;
use crate::regress::significance::Detector;
use crate::regress::{compare_target_with, find_target};
use crate::suite::Thresholds;

/// The `suppression_reason` of a regression the recheck did not reproduce.
pub const SUPPRESSION_REASON: &str = "recheck_not_regressed";

/// The run id of a target's recheck: `<run_id>__recheck__<sanitized key>` (characters outside
/// `[A-Za-z0-9_.-]` become `_`, so the result is a safe run id whenever `run_id` is).
pub fn recheck_run_id(run_id: &str, key: &str) -> String {
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
pub fn is_rechecked(row: &ChangeRow) -> bool {
    matches!(
        row,
        ChangeRow::Speedup { .. } | ChangeRow::OptimizedLatency { .. }
    )
}

/// The target strings to re-execute, once each, in regression order (empty without an anchor).
pub fn targets_to_recheck(first: &RegressionSummary) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if first.baseline_run_id.is_none() {
        return out;
    }
    for row in first.regressions.iter().filter(|r| is_rechecked(r)) {
        if !out.iter().any(|t| t == row.target()) {
            out.push(row.target().to_string());
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

/// A recheck row's metrics are usable: finite speedup > 0 and optimized time > 0.
pub fn metrics_valid(row: &TargetSummary) -> bool {
    positive(row.best_speedup).is_some() && optimized_time_ms(row).is_some()
}

/// Apply the recheck results to the first comparison. A rechecked regression stands when its
/// recheck is absent or failed to run, did not succeed, has invalid metrics, or still shows any
/// regression row for the target against `anchor` (by the same detection rule and noise history
/// as the first comparison); otherwise it is suppressed. Status and memory regressions stand as
/// they are. Without an anchor the comparison is returned unchanged.
pub fn apply(
    mut first: RegressionSummary,
    anchor: &Summary,
    results: &[RecheckResult],
    thresholds: &Thresholds,
    history: &NoiseHistory,
) -> RegressionSummary {
    if first.baseline_run_id.is_none() {
        return first;
    }
    let detector = Detector {
        thresholds,
        history,
        alpha: first
            .detection
            .as_ref()
            .map_or(thresholds.alpha, |d| d.alpha),
    };
    let run_id = first.current_run_id.clone().unwrap_or_default();
    let mut suppressed_targets: Vec<(String, String, TargetSummary)> = Vec::new();
    for target in targets_to_recheck(&first) {
        let Some(result) = results.iter().find(|r| r.target == target) else {
            tracing::warn!(%target, "no recheck result; the regression stands");
            continue;
        };
        let record = judge(result, &run_id, anchor, &detector);
        if !record.confirmed_regression
            && let Some(row) = &record.recheck_summary
        {
            suppressed_targets.push((target, record.recheck_run_id.clone(), row.clone()));
        }
        first.rechecks.push(record);
    }
    let (mut kept, mut moved) = (Vec::new(), Vec::new());
    for row in std::mem::take(&mut first.regressions) {
        let hit = suppressed_targets
            .iter()
            .find(|(t, _, _)| is_rechecked(&row) && t == row.target());
        match hit {
            Some((_, recheck_run_id, recheck)) => moved.push(SuppressedRegression {
                row,
                suppression_reason: SUPPRESSION_REASON.into(),
                recheck_run_id: recheck_run_id.clone(),
                recheck_speedup: positive(recheck.best_speedup),
                recheck_optimized_time_ms: optimized_time_ms(recheck),
            }),
            None => kept.push(row),
        }
    }
    first.regressions = kept;
    first.suppressed_regressions.extend(moved);
    first
}

fn judge(
    result: &RecheckResult,
    run_id: &str,
    anchor: &Summary,
    detector: &Detector<'_>,
) -> RecheckRecord {
    let mut record = RecheckRecord {
        target: result.target.clone(),
        recheck_run_id: recheck_run_id(run_id, &result.key),
        recheck_output_json: result.recheck_output_json.clone(),
        recheck_summary: result.row.clone(),
        recheck_regressions: vec![],
        recheck_metrics_valid: false,
        confirmed_regression: true,
    };
    let Some(row) = &result.row else {
        return record;
    };
    record.recheck_metrics_valid = metrics_valid(row);
    let Some(prev) = find_target(anchor, &result.target) else {
        return record;
    };
    let decision = detector.decide(row, prev);
    record.recheck_regressions =
        compare_target_with(row, prev, detector.thresholds, &decision).regressions;
    record.confirmed_regression = row.status != SUCCEEDED
        || !record.recheck_metrics_valid
        || !record.recheck_regressions.is_empty();
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::*;
    use crate::gate::{baseline_eligible, run_accepted};
    use crate::regress::compare;

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
        let first = compare(&current, Some(&anchor), &Thresholds::default()).expect("comparable");
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
        let none = compare(&current, None, &Thresholds::default()).expect("no anchor");
        assert!(targets_to_recheck(&none).is_empty());
    }

    #[test]
    fn recheck_that_does_not_reproduce_suppresses_the_regression() {
        let (anchor, _, first) = regressed();
        let results = [
            result("a", Some(speed_opt("a", 2.0, 50.5))),
            result("b", Some(speed_opt("b", 2.0, 15.0))),
        ];
        let out = apply(
            first,
            &anchor,
            &results,
            &Thresholds::default(),
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
            (Some(2.0), Some(50.5))
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
            &anchor,
            &results[..1],
            &Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert!(out.regressions.is_empty());
        assert!(run_accepted(&current, &out, false, false));
        assert!(!baseline_eligible(&current, &out, true, true));
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
                t.best_speedup = Some(f64::NAN);
                Some(t)
            }),
            ("zero time", {
                let mut t = speed_opt("a", 2.0, 50.0);
                t.best_optimized_time_ms = Some(0.0);
                t.baseline_time_ms = Some(0.0);
                Some(t)
            }),
            ("still regressed", Some(speed_opt("a", 2.0, 99.0))),
        ];
        for (case, row) in cases {
            let (anchor, _, first) = regressed();
            let out = apply(
                first,
                &anchor,
                &[result("a", row)],
                &Thresholds::default(),
                &NoiseHistory::default(),
            );
            assert_eq!(out.regressions.len(), 3, "{case}");
            assert!(out.suppressed_regressions.is_empty(), "{case}");
            assert_eq!(out.rechecks.len(), 1, "{case}");
            assert!(out.rechecks[0].confirmed_regression, "{case}");
        }
        // No result at all for a regressed target: it stands, with no record.
        let (anchor, _, first) = regressed();
        let out = apply(
            first,
            &anchor,
            &[],
            &Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert_eq!(out.regressions.len(), 3);
        assert!(out.rechecks.is_empty());
    }

    #[test]
    fn invalid_metrics_are_recorded() {
        let (anchor, _, first) = regressed();
        let mut t = speed_opt("a", 2.0, 50.0);
        t.best_speedup = Some(-1.0);
        let out = apply(
            first,
            &anchor,
            &[result("a", Some(t))],
            &Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert!(!out.rechecks[0].recheck_metrics_valid);
        assert!(out.rechecks[0].confirmed_regression);
    }

    #[test]
    fn without_anchor_nothing_changes() {
        let (_, current, _) = regressed();
        let first = compare(&current, None, &Thresholds::default()).expect("no anchor");
        let anchor = summary("anchor", vec![]);
        let out = apply(
            first.clone(),
            &anchor,
            &[result("a", None)],
            &Thresholds::default(),
            &NoiseHistory::default(),
        );
        assert_eq!(out, first);
    }
}
