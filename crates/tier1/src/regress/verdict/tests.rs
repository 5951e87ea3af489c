//! The verdicts on the cases issue 19 measured: a significant drop of a microsecond kernel under
//! the floor is listed by name (and caught with a per-target floor), an imprecise night is
//! unknown (never a regression on noise alone, never a silent pass), a clear slowdown regresses,
//! and each verdict states its detectable change.

use crate::aggregate::fixtures::{measured, speed_opt, summary};
use crate::history::Verdict;
use crate::json::Finite;
use crate::regress::compare;
use crate::suite::{ThresholdBook, Thresholds};

fn one(
    prev: crate::history::model::TargetSummary,
    cur: crate::history::model::TargetSummary,
    th: impl Into<ThresholdBook>,
) -> crate::history::model::RegressionSummary {
    compare(
        &summary("run", vec![cur]),
        Some(&summary("anchor", vec![prev])),
        th,
    )
    .expect("same environment")
}

fn verdict(r: &crate::history::model::RegressionSummary) -> Option<Verdict> {
    r.detection.as_ref()?.targets.first()?.verdict
}

#[test]
fn a_significant_drop_of_a_microsecond_kernel_is_named_as_held_by_the_floor() {
    // 12 µs optimized kernel, 22.6 % slower (speedup 2.0 -> 1.548), measured to ±0.3 %: the
    // test is certain, but the 2.7 µs change is under the 0.05 ms floor.
    let prev = measured(speed_opt("tiny", 2.0, 0.012), 0.3);
    let cur = measured(speed_opt("tiny", 1.548, 0.0155), 0.3);
    let r = one(prev.clone(), cur.clone(), Thresholds::default());
    assert!(r.regressions.is_empty(), "the floor keeps it from the gate");
    let reasons: Vec<&str> = r.held_by_floor.iter().map(|h| h.row.reason()).collect();
    assert_eq!(reasons, ["speedup", "optimized_latency"], "{r:#?}");
    assert!(
        r.held_by_floor[0]
            .rule
            .contains("under the 0.0500 ms floor"),
        "{}",
        r.held_by_floor[0].rule
    );
    assert_eq!(verdict(&r), Some(Verdict::Unchanged));
    let test = r.detection.as_ref().unwrap().targets[0]
        .test("speedup")
        .unwrap();
    assert!(test.held_by_floor && test.significant);
    // Not a "decline below the thresholds" either: the dashboard lists it on its own.
    // With a floor set for microsecond kernels, it is a regression.
    let mut book = ThresholdBook::from(Thresholds::default());
    book.targets.insert(
        "labs/tiny:tiny".into(),
        Thresholds {
            min_optimized_time_delta_ms: 0.001,
            ..Thresholds::default()
        },
    );
    let r = one(prev, cur, &book);
    assert_eq!(r.regressions.len(), 1, "{r:#?}");
    assert!(r.held_by_floor.is_empty());
    assert_eq!(verdict(&r), Some(Verdict::Regressed));
}

#[test]
fn an_imprecise_night_is_unknown_never_a_regression_on_noise_alone() {
    // Under load a C target read +12 % in latency with a ±25 % interval: the reference rules
    // (the old fallback for imprecise runs) call it a regression. Now its wide interval enters
    // the test: unknown, listed with what it could not rule out.
    let prev = measured(speed_opt("c", 2.0, 10.0), 0.5);
    let cur = measured(speed_opt("c", 2.0, 11.2), 25.0);
    let reference = crate::regress::compare_target(&cur, &prev, &Thresholds::default());
    assert_eq!(
        reference.regressions.len(),
        1,
        "the reference rules alone regress it"
    );
    let r = one(prev, cur, Thresholds::default());
    assert!(r.regressions.is_empty(), "{r:#?}");
    assert_eq!(verdict(&r), Some(Verdict::Unknown));
    assert_eq!(r.inconclusive.len(), 1);
    let why = &r.inconclusive[0].reason;
    assert!(
        why.contains("optimized_latency 10.00 ms -> 11.20 ms (+12.0 %)")
            && why.contains("is not ruled out at this noise")
            && why.contains("detectable"),
        "{why}"
    );
}

#[test]
fn a_clear_slowdown_regresses_and_every_verdict_states_what_it_can_detect() {
    let prev = measured(speed_opt("a", 2.0, 10.0), 0.5);
    let r = one(
        prev.clone(),
        measured(speed_opt("a", 1.5, 13.3), 0.5),
        Thresholds::default(),
    );
    assert_eq!(verdict(&r), Some(Verdict::Regressed));
    let d = r.detection.as_ref().unwrap();
    let t = &d.targets[0];
    let per_metric: Vec<Finite> = t.tests.iter().map(|m| m.detectable_pct).collect();
    assert_eq!(t.detectable_pct, per_metric.into_iter().reduce(Finite::max));
    assert!(
        t.detectable_pct.unwrap() > 5.0,
        "never below the threshold: {t:?}"
    );
    // Unchanged code measured precisely: unchanged, with the same kind of statement.
    let r = one(
        prev.clone(),
        measured(speed_opt("a", 2.002, 9.99), 0.5),
        Thresholds::default(),
    );
    assert_eq!(verdict(&r), Some(Verdict::Unchanged));
    assert!(
        r.detection.as_ref().unwrap().targets[0]
            .detectable_pct
            .is_some()
    );
    // Faster beyond the threshold, significantly: improved.
    let r = one(
        prev,
        measured(speed_opt("a", 2.5, 8.0), 0.5),
        Thresholds::default(),
    );
    assert_eq!(verdict(&r), Some(Verdict::Improved));
}

#[test]
fn a_throttled_measurement_is_unknown() {
    let prev = measured(speed_opt("a", 2.0, 10.0), 0.5);
    let mut cur = measured(speed_opt("a", 1.5, 13.3), 0.5);
    if let Some(m) = cur.measurement.as_mut() {
        m.throttled = true;
    }
    let r = one(prev, cur, Thresholds::default());
    assert!(r.regressions.is_empty());
    assert_eq!(verdict(&r), Some(Verdict::Unknown));
    assert!(
        r.inconclusive[0].reason.contains("throttled"),
        "{:?}",
        r.inconclusive
    );
}

/// The comparison of `cur` with `prev` after six quiet nights measured like the anchor (±0.5 %).
fn after_quiet_nights(
    prev: crate::history::model::TargetSummary,
    cur: crate::history::model::TargetSummary,
) -> crate::history::model::RegressionSummary {
    use crate::regress::noise::{HistoryRun, NoiseHistory};
    let mut runs = vec![HistoryRun {
        run_id: "anchor".into(),
        segment: "anchor".into(),
        summary: summary("anchor", vec![prev.clone()]),
    }];
    for (i, off) in [0.01_f64, -0.012, 0.006, -0.004, 0.009, -0.008]
        .iter()
        .enumerate()
    {
        let s = prev.best_speedup.map_or(1.0, f64::from) * off.exp();
        let t = crate::aggregate::optimized_time_ms(&prev).unwrap_or(1.0) * (-off).exp();
        let id = format!("night{i}");
        runs.push(HistoryRun {
            run_id: id.clone(),
            segment: "anchor".into(),
            summary: summary(&id, vec![measured(speed_opt("a", s, t), 0.5)]),
        });
    }
    let history = NoiseHistory { runs };
    crate::regress::compare_in(
        &summary("run", vec![cur]),
        Some(&summary("anchor", vec![prev])),
        ThresholdBook::from(Thresholds::default()),
        &history,
    )
    .expect("same environment")
}

/// Issue 37: beside four CPU hogs a night read gradient_fusion `improved +24.1 %` by history
/// while the machine was overloaded (detectable 97.2 %): an improvement claimed on noise. Read
/// while the machine was overloaded, or on a measurement far noisier than the window's runs, an
/// improvement is not claimed: the target is unknown, the reason says why (and the overload).
#[test]
fn an_improvement_read_while_overloaded_or_far_noisier_is_not_claimed() {
    let prev = measured(speed_opt("a", 2.0, 10.0), 0.5);
    let faster = || measured(speed_opt("a", 2.5, 8.0), 0.5);
    // Quiet and precise: improved (the claim the two cases below must not make).
    let r = after_quiet_nights(prev.clone(), faster());
    assert_eq!(verdict(&r), Some(Verdict::Improved), "{r:#?}");
    assert!(!r.improvements.is_empty());

    let mut loaded = faster();
    if let Some(m) = loaded.measurement.as_mut() {
        m.overloaded = Some(crate::history::overload::Overload {
            cores: 2,
            load_avg_1m: 8.9,
            runnable: None,
            cpu_share: Some(0.4),
            steal_pct: None,
        });
    }
    let r = after_quiet_nights(prev.clone(), loaded);
    assert_eq!(verdict(&r), Some(Verdict::Unknown), "{r:#?}");
    assert!(r.improvements.is_empty(), "{:?}", r.improvements);
    assert!(r.regressions.is_empty());
    let why = &r.inconclusive[0].reason;
    assert!(
        why.contains("speedup 2.000x -> 2.500x (+25.0 %): an improvement read while the machine was overloaded is not claimed")
            && why.contains("the machine was overloaded: load 8.9 on 2 cores"),
        "{why}"
    );

    // Not flagged, but its interval 8 times as wide as the window's runs'.
    let r = after_quiet_nights(prev, measured(speed_opt("a", 2.5, 8.0), 4.0));
    assert_eq!(verdict(&r), Some(Verdict::Unknown), "{r:#?}");
    assert!(r.improvements.is_empty(), "{:?}", r.improvements);
    let why = &r.inconclusive[0].reason;
    assert!(
        why.contains("an improvement read on a measurement")
            && why.contains("noisier than the window's runs is not claimed"),
        "{why}"
    );
}
