//! Unit tests of `regress::compare`: every rule of contract §3.1-3.2 at and just inside its
//! threshold, and the reference's named scenarios.

use super::*;
use crate::aggregate::fixtures::*;
use crate::exit::{Classify, Exit};
use crate::history::model::Environment;

fn th() -> Thresholds {
    Thresholds::default()
}

/// Compare one target pair inside two one-target summaries.
fn pair(prev: TargetSummary, cur: TargetSummary) -> RegressionSummary {
    let anchor = summary("anchor", vec![prev]);
    let current = summary("current", vec![cur]);
    compare(&current, Some(&anchor), th()).expect("same environment")
}

fn reasons(rows: &[ChangeRow]) -> Vec<&'static str> {
    rows.iter().map(ChangeRow::reason).collect()
}

#[test]
fn speedup_regression_at_threshold_and_not_just_inside() {
    // Same baseline time: the optimized time moves with the speedup (400/4.0 = 100 ms).
    let r = pair(speed_target("a", 400.0, 4.0), speed_target("a", 400.0, 3.8));
    assert_eq!(reasons(&r.regressions), ["speedup"], "-5 % is a regression");
    match &r.regressions[0] {
        ChangeRow::Speedup {
            before,
            after,
            delta_pct,
            optimized_time_delta_ms,
            ..
        } => {
            assert_eq!((before.get(), after.get()), (4.0, 3.8));
            assert!((delta_pct.get() + 5.0).abs() < 1e-9);
            let d = optimized_time_delta_ms.expect("both times positive");
            assert!((d.get() - (400.0 / 3.8 - 100.0)).abs() < 1e-9);
        }
        other => panic!("unexpected row {other:?}"),
    }
    // The optimized time rose 5.3 % too, but that is not double-counted.
    assert!(r.improvements.is_empty());
    assert_eq!(
        reasons(&r.anchor_declines),
        ["speedup", "optimized_latency"]
    );

    let r = pair(
        speed_target("a", 400.0, 4.0),
        speed_target("a", 400.0, 3.81),
    );
    assert!(r.regressions.is_empty(), "-4.75 % is inside the threshold");
    assert_eq!(
        reasons(&r.anchor_declines),
        ["speedup", "optimized_latency"]
    );
}

#[test]
fn speedup_improvement_at_threshold_and_not_just_inside() {
    let r = pair(speed_target("a", 400.0, 4.0), speed_target("a", 400.0, 4.2));
    assert_eq!(reasons(&r.improvements), ["speedup"]);
    assert!(r.regressions.is_empty() && r.anchor_declines.is_empty());
    let r = pair(
        speed_target("a", 400.0, 4.0),
        speed_target("a", 400.0, 4.19),
    );
    assert!(r.improvements.is_empty() && r.regressions.is_empty());
}

#[test]
fn ten_percent_drop_on_a_tenth_of_a_millisecond_is_not_significant() {
    // 0.1 ms -> 0.111 ms: |delta| = 0.011 ms < 0.05 ms floor.
    let r = pair(speed_opt("tiny", 2.0, 0.1), speed_opt("tiny", 1.8, 0.111));
    assert!(r.regressions.is_empty(), "{:?}", r.regressions);
    assert!(r.improvements.is_empty());
    // Still recorded as declines: they hold anchor advancement.
    assert_eq!(
        reasons(&r.anchor_declines),
        ["speedup", "optimized_latency"]
    );
}

#[test]
fn floor_is_inclusive_and_missing_times_count_as_significant() {
    // |delta| exactly 0.05 ms is significant.
    let r = pair(speed_opt("a", 2.0, 0.5), speed_opt("a", 1.8, 0.55));
    assert_eq!(reasons(&r.regressions), ["speedup"]);
    // Missing optimized times and baselines: significance cannot be measured, so it counts.
    let strip = |mut t: TargetSummary| {
        t.best_optimized_time_ms = None;
        t.baseline_time_ms = None;
        t
    };
    let r = pair(
        strip(speed_opt("a", 2.0, 0.1)),
        strip(speed_opt("a", 1.8, 0.111)),
    );
    assert_eq!(reasons(&r.regressions), ["speedup"]);
    match &r.regressions[0] {
        ChangeRow::Speedup {
            optimized_time_before_ms,
            optimized_time_after_ms,
            optimized_time_delta_ms,
            ..
        } => assert_eq!(
            (
                *optimized_time_before_ms,
                *optimized_time_after_ms,
                *optimized_time_delta_ms
            ),
            (None, None, None)
        ),
        other => panic!("unexpected row {other:?}"),
    }
}

#[test]
fn optimized_latency_regression_and_improvement_at_thresholds() {
    let r = pair(speed_opt("a", 2.0, 100.0), speed_opt("a", 2.0, 105.0));
    assert_eq!(reasons(&r.regressions), ["optimized_latency"]);
    match &r.regressions[0] {
        ChangeRow::OptimizedLatency {
            before,
            after,
            delta_pct,
            optimized_time_delta_ms,
            ..
        } => {
            assert_eq!(
                (*before, *after, *optimized_time_delta_ms),
                (100.0.into(), 105.0.into(), 5.0.into())
            );
            assert!((delta_pct.get() - 5.0).abs() < 1e-9);
        }
        other => panic!("unexpected row {other:?}"),
    }
    assert_eq!(reasons(&r.anchor_declines), ["optimized_latency"]);

    let r = pair(speed_opt("a", 2.0, 100.0), speed_opt("a", 2.0, 104.9));
    assert!(r.regressions.is_empty());
    assert_eq!(reasons(&r.anchor_declines), ["optimized_latency"]);

    let r = pair(speed_opt("a", 2.0, 100.0), speed_opt("a", 2.0, 95.0));
    assert_eq!(reasons(&r.improvements), ["optimized_latency"]);
    assert!(r.anchor_declines.is_empty());
    let r = pair(speed_opt("a", 2.0, 100.0), speed_opt("a", 2.0, 95.1));
    assert!(r.improvements.is_empty());
}

#[test]
fn optimized_latency_below_the_floor_is_not_significant() {
    // +10 % but only 0.01 ms.
    let r = pair(speed_opt("a", 2.0, 0.1), speed_opt("a", 2.0, 0.11));
    assert!(r.regressions.is_empty());
    assert_eq!(reasons(&r.anchor_declines), ["optimized_latency"]);
}

#[test]
fn common_mode_slowdown_is_an_optimized_latency_regression() {
    let r = pair(speed_opt("a", 2.0, 50.0), speed_opt("a", 2.0, 100.0));
    assert_eq!(reasons(&r.regressions), ["optimized_latency"]);
    assert!(r.improvements.is_empty());
}

#[test]
fn speedup_improvement_is_not_double_counted_as_latency_improvement() {
    let r = pair(speed_opt("a", 2.0, 100.0), speed_opt("a", 2.5, 80.0));
    assert_eq!(reasons(&r.improvements), ["speedup"]);
}

#[test]
fn cumulative_drift_holds_the_anchor_then_regresses_against_it() {
    let anchor = speed_opt("drift", 2.0, 50.0);
    let r = pair(anchor.clone(), speed_opt("drift", 1.92, 52.0));
    assert!(r.regressions.is_empty(), "{:?}", r.regressions);
    assert_eq!(
        reasons(&r.anchor_declines),
        ["speedup", "optimized_latency"]
    );
    let r = pair(anchor, speed_opt("drift", 1.84, 54.5));
    assert_eq!(reasons(&r.regressions), ["speedup"]);
}

#[test]
fn unratified_improvement_is_an_improvement_with_a_baseline() {
    let r = pair(speed_opt("a", 2.0, 50.0), speed_opt("a", 2.2, 45.0));
    assert_eq!(reasons(&r.improvements), ["speedup"]);
    assert_eq!(r.baseline_run_id.as_deref(), Some("anchor"));
}

#[test]
fn memory_goal_ignores_speedup_drops() {
    let mut cur = memory_target("kv_standard", 32140.0, 49.7);
    cur.best_speedup = Some(1.10.into());
    cur.best_optimized_time_ms = Some((1585.6 / 1.10).into());
    let r = pair(memory_target("kv_standard", 32140.0, 49.7), cur);
    assert!(r.regressions.is_empty() && r.anchor_declines.is_empty());
}

#[test]
fn doubled_baseline_memory_at_same_savings_is_an_optimized_memory_regression() {
    let r = pair(
        memory_target("kv", 1024.0, 50.0),
        memory_target("kv", 2048.0, 50.0),
    );
    assert_eq!(reasons(&r.regressions), ["optimized_memory"]);
    match &r.regressions[0] {
        ChangeRow::OptimizedMemory {
            before,
            after,
            delta_pct,
            optimized_memory_delta_mb,
            ..
        } => assert_eq!(
            (*before, *after, *delta_pct, *optimized_memory_delta_mb),
            (512.0.into(), 1024.0.into(), 100.0.into(), 512.0.into())
        ),
        other => panic!("unexpected row {other:?}"),
    }
}

#[test]
fn optimized_memory_uses_the_backfill_and_has_no_absolute_floor() {
    let mut prev = memory_target("kv", 10.0, 50.0);
    prev.best_optimized_memory_mb = None;
    // 5.0 -> 5.25 MB: +5 %, only 0.25 MB.
    let r = pair(prev.clone(), memory_target("kv", 10.5, 50.0));
    assert_eq!(reasons(&r.regressions), ["optimized_memory"]);
    let r = pair(prev.clone(), memory_target("kv", 10.4, 50.0));
    assert!(r.regressions.is_empty());
    assert_eq!(reasons(&r.anchor_declines), ["optimized_memory"]);
    let r = pair(prev, memory_target("kv", 9.5, 50.0));
    assert_eq!(reasons(&r.improvements), ["optimized_memory"]);
}

#[test]
fn memory_savings_points_at_thresholds() {
    let prev = memory_target("kv", 1000.0, 50.0);
    let mut cur = memory_target("kv", 1000.0, 45.0);
    cur.best_optimized_memory_mb = Some(500.0.into()); // isolate the savings check
    let r = pair(prev.clone(), cur.clone());
    assert_eq!(reasons(&r.regressions), ["memory_savings"]);
    assert_eq!(
        r.regressions[0],
        ChangeRow::MemorySavings {
            target: "labs/kv:kv".into(),
            before: 50.0.into(),
            after: 45.0.into(),
            delta_points: (-5.0).into()
        }
    );
    cur.best_memory_savings_pct = Some(45.1.into());
    let r = pair(prev.clone(), cur.clone());
    assert!(r.regressions.is_empty());
    assert_eq!(reasons(&r.anchor_declines), ["memory_savings"]);
    cur.best_memory_savings_pct = Some(55.0.into());
    assert_eq!(
        reasons(&pair(prev.clone(), cur.clone()).improvements),
        ["memory_savings"]
    );
    cur.best_memory_savings_pct = Some(54.9.into());
    assert!(pair(prev, cur).improvements.is_empty());
}

#[test]
fn memory_savings_regression_is_not_double_counted_as_optimized_memory() {
    // 50 % -> 40 % savings at 1000 MB: 500 -> 600 MB (+20 %) too.
    let r = pair(
        memory_target("kv", 1000.0, 50.0),
        memory_target("kv", 1000.0, 40.0),
    );
    assert_eq!(reasons(&r.regressions), ["memory_savings"]);
    assert_eq!(
        reasons(&r.anchor_declines),
        ["memory_savings", "optimized_memory"]
    );
}

#[test]
fn goal_comes_from_the_previous_target_when_current_has_none() {
    let mut cur = memory_target("kv", 2048.0, 50.0);
    cur.optimization_goal = None;
    cur.best_speedup = Some(0.5.into());
    let r = pair(memory_target("kv", 1024.0, 50.0), cur);
    assert_eq!(reasons(&r.regressions), ["optimized_memory"]);
}

#[test]
fn status_regression_skips_the_other_checks() {
    let cur = with_status(speed_opt("a", 1.0, 500.0), "failed_verification");
    let r = pair(speed_opt("a", 2.0, 50.0), cur);
    assert_eq!(
        r.regressions,
        [ChangeRow::Status {
            target: "labs/a:a".into(),
            before: "succeeded".into(),
            after: "failed_verification".into()
        }]
    );
    assert!(r.anchor_declines.is_empty() && r.improvements.is_empty());
}

#[test]
fn status_improvement_is_reported_and_metrics_still_compared() {
    let prev = with_status(speed_opt("a", 2.0, 50.0), "failed_no_speedup");
    let r = pair(prev, speed_opt("a", 2.0, 100.0));
    assert_eq!(reasons(&r.improvements), ["status"]);
    assert_eq!(reasons(&r.regressions), ["optimized_latency"]);
    // Not succeeded on either side: no status row.
    let r = pair(
        with_status(speed_opt("a", 2.0, 50.0), "skipped_no_gpu"),
        with_status(speed_opt("a", 2.0, 50.0), "failed_no_speedup"),
    );
    assert!(r.regressions.is_empty() && r.improvements.is_empty());
}

#[test]
fn new_and_missing_targets() {
    let anchor = summary(
        "anchor",
        vec![speed_opt("a", 2.0, 50.0), speed_opt("gone", 2.0, 50.0)],
    );
    let current = summary(
        "current",
        vec![speed_opt("fresh", 3.0, 10.0), speed_opt("a", 2.0, 50.0)],
    );
    let r = compare(&current, Some(&anchor), th()).expect("comparable");
    assert_eq!(r.new_targets, [current.targets[0].clone()]);
    assert_eq!(r.missing_targets, [anchor.targets[1].clone()]);
    assert!(r.regressions.is_empty() && r.improvements.is_empty());
    assert_eq!(r.baseline_run_id.as_deref(), Some("anchor"));
    assert_eq!(r.current_run_id.as_deref(), Some("current"));
    assert_eq!(
        r.regression_rechecks_path.as_deref(),
        Some("current/regression_rechecks.json")
    );
}

#[test]
fn no_baseline_shape() {
    let current = summary("current", vec![speed_opt("a", 2.0, 50.0)]);
    let r = compare(&current, None, th()).expect("no anchor is fine");
    assert_eq!(r.baseline_run_id, None);
    assert_eq!(r.new_targets, current.targets);
    assert!(r.regressions.is_empty() && r.improvements.is_empty() && r.anchor_declines.is_empty());
    assert!(r.missing_targets.is_empty() && r.suppressed_regressions.is_empty());
    assert!(r.rechecks.is_empty() && r.warnings.is_empty());
    assert_eq!(r.regression_rechecks_path, None);
    let json = serde_json::to_value(&r).expect("serializes");
    assert_eq!(json["baseline_run_id"], serde_json::Value::Null);
    assert_eq!(json["suppressed_regressions"], serde_json::json!([]));
}

fn env(backend: &str, device: &str) -> Environment {
    Environment {
        backend: backend.into(),
        device_names: vec![device.into()],
        device_uuids: vec!["GPU-1".into()],
        driver_version: Some("570".into()),
        cuda_version: Some("12.8".into()),
        runner: Some("runner-a".into()),
        profile: Some("minimal".into()),
        clock: None,
        runner_class: None,
    }
}

#[test]
fn environment_mismatch_is_refused() {
    let mut anchor = summary("anchor", vec![speed_opt("a", 2.0, 50.0)]);
    let mut current = summary("current", vec![speed_opt("a", 2.0, 50.0)]);
    anchor.environment = Some(env("cuda", "NVIDIA H100"));
    current.environment = Some(env("cuda", "NVIDIA H200"));
    let err = compare(&current, Some(&anchor), th()).expect_err("different GPU model");
    let msg = err.to_string();
    assert!(msg.contains("current") && msg.contains("anchor"), "{msg}");
    assert!(msg.contains("cuda|NVIDIA H200|minimal"), "{msg}");
    assert!(msg.contains("cuda|NVIDIA H100|minimal"), "{msg}");
    assert_eq!(err.exit(), Exit::Invalid);
}

#[test]
fn environment_with_same_key_or_one_side_unknown_is_compared() {
    let mut anchor = summary("anchor", vec![speed_opt("a", 2.0, 50.0)]);
    let mut current = summary("current", vec![speed_opt("a", 2.0, 100.0)]);
    anchor.environment = Some(env("cuda", "NVIDIA H100"));
    let mut other_runner = env("cuda", "NVIDIA H100");
    other_runner.runner = Some("runner-b".into());
    other_runner.device_uuids = vec!["GPU-2".into()];
    current.environment = Some(other_runner);
    let r = compare(&current, Some(&anchor), th()).expect("same key");
    assert_eq!(reasons(&r.regressions), ["optimized_latency"]);
    current.environment = None;
    assert!(compare(&current, Some(&anchor), th()).is_ok());
}

#[test]
fn non_finite_metrics_never_produce_rows_or_nan() {
    let mut cur = speed_opt("a", 2.0, 50.0);
    cur.best_speedup = Some(f64::NAN.into());
    cur.best_optimized_time_ms = Some(f64::INFINITY.into());
    cur.baseline_time_ms = Some(f64::NAN.into());
    let r = pair(speed_opt("a", 2.0, 50.0), cur);
    assert!(r.regressions.is_empty() && r.improvements.is_empty() && r.anchor_declines.is_empty());
    let mut cur = memory_target("kv", f64::NAN, f64::NAN);
    cur.best_optimized_memory_mb = Some(f64::NAN.into());
    let r = pair(memory_target("kv", 100.0, 50.0), cur);
    assert!(r.regressions.is_empty() && r.anchor_declines.is_empty());
    // Zero times never divide.
    let mut zero = speed_opt("a", 2.0, 50.0);
    zero.best_optimized_time_ms = Some(0.0.into());
    zero.baseline_time_ms = Some(0.0.into());
    let r = pair(zero, speed_opt("a", 2.0, 50.0));
    assert!(crate::json::to_pretty(&r, "regression").is_ok());
}

#[test]
fn overflowing_ratios_skip_only_their_own_check() {
    // (1e6 - 1e-308) / 1e-308 overflows to infinity: the latency check is skipped, the speedup
    // check still runs.
    let r = pair(speed_opt("a", 2.0, 1e-308), speed_opt("a", 1.0, 1e6));
    assert_eq!(reasons(&r.regressions), ["speedup"]);
    assert_eq!(reasons(&r.anchor_declines), ["speedup"]);
    assert!(crate::json::to_pretty(&r, "regression").is_ok());
}

#[test]
fn custom_thresholds_are_used() {
    let t = Thresholds {
        speedup_regression_pct: 10.0,
        optimized_latency_regression_pct: 20.0,
        ..Thresholds::default()
    };
    let anchor = summary("anchor", vec![speed_target("a", 400.0, 4.0)]);
    let current = summary("current", vec![speed_target("a", 400.0, 3.8)]);
    let r = compare(&current, Some(&anchor), t).expect("comparable");
    assert!(r.regressions.is_empty());
    let current = summary("current", vec![speed_target("a", 400.0, 3.6)]);
    let r = compare(&current, Some(&anchor), t).expect("comparable");
    assert_eq!(reasons(&r.regressions), ["speedup"]);
}

mod never_nan {
    use super::*;
    use proptest::prelude::*;

    fn metric() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(f64::NAN)),
            Just(Some(f64::INFINITY)),
            Just(Some(f64::NEG_INFINITY)),
            Just(Some(0.0)),
            Just(Some(-0.0)),
            Just(Some(f64::MIN_POSITIVE)),
            (-1.0e6f64..1.0e6).prop_map(Some),
        ]
    }

    fn row() -> impl Strategy<Value = TargetSummary> {
        (
            prop::collection::vec(metric(), 7),
            prop::bool::ANY,
            prop::bool::ANY,
        )
            .prop_map(|(m, memory, ok)| {
                let mut t = speed_opt("a", 2.0, 50.0);
                t.baseline_time_ms = m[0].map(Into::into);
                t.best_speedup = m[1].map(Into::into);
                t.best_optimized_time_ms = m[2].map(Into::into);
                t.baseline_memory_mb = m[3].map(Into::into);
                t.best_memory_savings_pct = m[4].map(Into::into);
                t.best_optimized_memory_mb = m[5].map(Into::into);
                t.baseline_p75_ms = m[6].filter(|x| x.is_finite()).map(Into::into);
                if memory {
                    t.optimization_goal = Some("memory".into());
                }
                if !ok {
                    t.status = "failed_verification".into();
                }
                t
            })
    }

    proptest! {
        #[test]
        fn every_comparison_row_is_finite(prev in row(), cur in row()) {
            let changes = compare_target(&cur, &prev, &Thresholds::default());
            let rows = changes.regressions.iter().chain(&changes.improvements).chain(&changes.declines);
            for r in rows {
                let v = serde_json::to_value(r);
                prop_assert!(v.is_ok(), "row {r:?} does not serialize: {v:?}");
            }
        }
    }
}
