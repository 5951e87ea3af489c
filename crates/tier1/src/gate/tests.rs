//! Unit tests of the release gate: each failing condition, with the reason it names.

use super::*;
use crate::aggregate::fixtures::*;
use crate::aggregate::{MISSING, compute};
use crate::exit::Exit;
use crate::history::model::{ChangeRow, RegressionSummary, Summary, SuppressedRegression};
use crate::regress::compare;
use crate::suite::Thresholds;

fn clean() -> Summary {
    summary(
        "run",
        vec![speed_opt("a", 2.0, 50.0), memory_target("kv", 1024.0, 50.0)],
    )
}

fn no_baseline(s: &Summary) -> RegressionSummary {
    compare(s, None, Thresholds::default()).expect("no anchor")
}

fn against(anchor: &Summary, current: &Summary) -> RegressionSummary {
    compare(current, Some(anchor), Thresholds::default()).expect("comparable")
}

fn has(c: &Check, needle: &str) -> bool {
    c.reasons.iter().any(|r| r.contains(needle))
}

fn recompute(mut s: Summary) -> Summary {
    s.summary = compute(&s.targets);
    s
}

fn summary_has_baseline_metrics(summary: &Summary) -> bool {
    baseline_metrics(summary).passed()
}

fn has_accepted_provenance(summary: &Summary) -> bool {
    provenance(summary).passed()
}

fn baseline_eligible(
    summary: &Summary,
    comparison: &RegressionSummary,
    run_accepted: bool,
    allow_initial_anchor: bool,
) -> bool {
    baseline_eligibility(summary, comparison, run_accepted, allow_initial_anchor).passed()
}

#[test]
fn clean_summary_has_metrics_and_provenance() {
    let s = clean();
    assert_eq!(baseline_metrics(&s), Check::default());
    assert!(summary_has_baseline_metrics(&s));
    assert!(has_accepted_provenance(&s));
}

#[test]
fn metrics_refuse_empty_inconsistent_and_failed_summaries() {
    let empty = summary("run", vec![]);
    assert!(has(&baseline_metrics(&empty), "summary.target_count is 0"));

    let mut s = clean();
    s.summary.target_count = 3;
    assert!(has(
        &baseline_metrics(&s),
        "target_count is 3 but the summary has 2 target rows"
    ));

    let s = recompute(summary(
        "run",
        vec![
            speed_opt("a", 2.0, 50.0),
            with_status(speed_opt("f", 2.0, 50.0), "failed_verification"),
            with_status(speed_opt("s", 2.0, 50.0), "skipped_no_gpu"),
            with_status(speed_opt("m", 2.0, 50.0), MISSING),
        ],
    ));
    let c = baseline_metrics(&s);
    for needle in [
        "summary.failed is 1",
        "summary.skipped is 1",
        "summary.missing is 1",
        "target f: status is \"failed_verification\"",
    ] {
        assert!(has(&c, needle), "{needle} not in {:?}", c.reasons);
    }
}

#[test]
fn metrics_refuse_incomplete_speed_targets() {
    let mut s = clean();
    s.targets[0].baseline_time_ms = Some(f64::NAN.into());
    assert!(has(&baseline_metrics(&s), "target a: baseline_time_ms NaN"));
    let mut s = clean();
    s.targets[0].best_speedup = Some(0.0.into());
    assert!(has(
        &baseline_metrics(&s),
        "target a: best_speedup 0 is not a finite number > 0"
    ));
    let mut s = clean();
    s.targets[0].best_optimized_time_ms = None;
    assert!(has(
        &baseline_metrics(&s),
        "target a: best_optimized_time_ms null"
    ));
}

#[test]
fn metrics_of_memory_targets() {
    // Savings may be negative; speed metrics are not required.
    let mut s = clean();
    s.targets[1].best_memory_savings_pct = Some((-3.0).into());
    s.targets[1].best_optimized_memory_mb = Some(1054.72.into());
    s.targets[1].best_speedup = None;
    s.targets[1].best_optimized_time_ms = None;
    assert!(baseline_metrics(&s).passed(), "{:?}", baseline_metrics(&s));
    let mut s = clean();
    s.targets[1].best_memory_savings_pct = Some(f64::INFINITY.into());
    assert!(has(
        &baseline_metrics(&s),
        "target kv: best_memory_savings_pct inf"
    ));
    let mut s = clean();
    s.targets[1].best_optimized_memory_mb = Some(0.0.into());
    assert!(has(
        &baseline_metrics(&s),
        "target kv: best_optimized_memory_mb 0"
    ));
}

#[test]
fn provenance_needs_lower_hex_matching_clean_commit() {
    let mut s = clean();
    s.source_git_commit = Some(COMMIT.to_uppercase());
    s.source_manifest_git_commit = s.source_git_commit.clone();
    assert!(has(
        &provenance(&s),
        "is not a 40-character lower-case hex commit"
    ));
    let mut s = clean();
    s.source_git_commit = Some("abc123".into());
    s.source_manifest_git_commit = Some("abc123".into());
    assert!(has(&provenance(&s), "is not a 40-character"));
    let mut s = clean();
    s.source_manifest_git_commit = Some("f".repeat(40));
    assert!(has(
        &provenance(&s),
        "differs from source_manifest_git_commit"
    ));
    let mut s = clean();
    s.source_manifest_git_commit = None;
    assert!(!has_accepted_provenance(&s));
    let mut s = clean();
    s.source_git_dirty = Some(true);
    assert!(has(
        &provenance(&s),
        "source_git_dirty is Some(true), expected false"
    ));
    let mut s = clean();
    s.source_git_dirty = None;
    assert!(has(&provenance(&s), "source_git_dirty is None"));
    let mut s = clean();
    s.source_git_commit = None;
    s.source_manifest_git_commit = None;
    assert_eq!(provenance(&s).reasons.len(), 2);
}

#[test]
fn run_acceptance_conditions() {
    let s = clean();
    let cmp = no_baseline(&s);
    assert!(run_accepted(&s, &cmp, false, false));
    assert!(has(
        &run_acceptance(&s, &cmp, true, false),
        "history has warnings"
    ));

    let mut dirty = clean();
    dirty.source_git_dirty = Some(true);
    assert!(
        !run_accepted(&dirty, &cmp, false, true),
        "explicit acceptance never waives provenance"
    );

    let anchor = clean();
    let mut slower = clean();
    slower.targets[0] = speed_opt("a", 2.0, 100.0);
    let cmp = against(&anchor, &slower);
    // The failure names the target, metric, anchor and current values, change and threshold.
    assert!(
        has(
            &run_acceptance(&slower, &cmp, false, false),
            "confirmed regression: labs/a:a optimized time 50.00 ms -> 100.0 ms (+100.0 %, 50.0 ms; threshold +5.00 % and 0.0500 ms)"
        ),
        "{:?}",
        run_acceptance(&slower, &cmp, false, false)
    );
    assert!(
        run_accepted(&slower, &cmp, false, true),
        "explicitly accepted regressions pass"
    );

    let fewer = recompute(summary("run", vec![speed_opt("a", 2.0, 50.0)]));
    let cmp = against(&anchor, &fewer);
    assert!(has(
        &run_acceptance(&fewer, &cmp, false, false),
        "missing target: kv (labs/kv:kv) is in the anchor but not in this run"
    ));
}

#[test]
fn only_the_first_anchor_of_a_normal_publication_is_eligible() {
    let s = precise(clean());
    let cmp = no_baseline(&s);
    assert!(baseline_eligible(&s, &cmp, true, true));
    assert!(has(
        &baseline_eligibility(&s, &cmp, false, true),
        "not accepted"
    ));
    assert!(has(
        &baseline_eligibility(&s, &cmp, true, false),
        "initial anchor is not allowed"
    ));

    // Same metrics against an existing anchor: accepted but never eligible.
    let cmp = against(&s, &precise(clean()));
    assert!(run_accepted(&s, &cmp, false, false));
    assert!(has(
        &baseline_eligibility(&s, &cmp, true, true),
        "a prior anchor run exists"
    ));
}

/// `s` with target `i` measured at ±`pct` and its precision `required` (or only measured).
fn imprecise(i: usize, pct: f64, required: bool) -> Summary {
    let mut s = precise(clean());
    s.targets[i] = measured(s.targets[i].clone(), pct);
    if let Some(m) = s.targets[i].measurement.as_mut() {
        m.precision_required = Some(required);
    }
    s
}

#[test]
fn an_imprecise_anchor_is_refused_only_where_precision_is_required() {
    // anchor_precision: required: refused, naming the target, the figures and the remedies.
    let s = imprecise(0, 2.5, true);
    let cmp = no_baseline(&s);
    let c = baseline_eligibility(&s, &cmp, true, true);
    assert!(
        has(&c, "target a: the measurement did not reach ±1.00 %")
            && has(&c, "speedup interval ±2.50 %")
            && has(&c, "raise budget_s")
            && has(&c, "anchor_precision: measured"),
        "{c:?}"
    );
    // anchor_precision: measured (the default): the anchor is made, carrying its precision.
    let s = imprecise(0, 2.5, false);
    let c = baseline_eligibility(&s, &no_baseline(&s), true, true);
    assert!(c.passed(), "{c:?}");
    let c = eligible_anchor_rules(&s, &no_baseline(&s), true, false, false);
    assert!(c.passed(), "{c:?}");
    // A record from before the setting existed is held to its precision, as it was written.
    let mut old = imprecise(0, 2.5, false);
    if let Some(m) = old.targets[0].measurement.as_mut() {
        m.precision_required = None;
    }
    let c = eligible_anchor_rules(&old, &no_baseline(&old), true, false, false);
    assert!(has(&c, "target a: the measurement did not reach"), "{c:?}");
    // No record at all: never a first anchor; throttled: never an anchor in either mode.
    let c = baseline_eligibility(&clean(), &no_baseline(&clean()), true, true);
    assert!(has(&c, "target a: no measurement record"), "{c:?}");
    let mut throttled = precise(clean());
    if let Some(m) = throttled.targets[1].measurement.as_mut() {
        m.throttled = true;
    }
    let c = baseline_eligibility(&throttled, &no_baseline(&throttled), true, true);
    assert!(
        has(
            &c,
            "target kv: the measurement was taken while the device throttled"
        ),
        "{c:?}"
    );
    // Rows without a record (older writers) are not judged by restore's re-derivation.
    let c = eligible_anchor_rules(&clean(), &no_baseline(&clean()), true, false, false);
    assert!(c.passed(), "{c:?}");
}

#[test]
fn cumulative_drift_and_unratified_improvement_are_not_eligible() {
    let anchor = summary("anchor", vec![speed_opt("a", 2.0, 50.0)]);
    let drift = summary("run", vec![speed_opt("a", 1.92, 52.0)]);
    let cmp = against(&anchor, &drift);
    assert!(
        run_accepted(&drift, &cmp, false, false),
        "a subthreshold decline passes"
    );
    let c = baseline_eligibility(&drift, &cmp, true, true);
    assert!(
        has(&c, "2 anchor decline(s)") && has(&c, "prior anchor anchor"),
        "{c:?}"
    );

    let outlier = summary("run", vec![speed_opt("a", 2.2, 45.0)]);
    let cmp = against(&anchor, &outlier);
    assert_eq!(cmp.improvements.len(), 1);
    assert!(run_accepted(&outlier, &cmp, false, false));
    assert!(!baseline_eligible(&outlier, &cmp, true, true));
}

fn suppressed(cmp: &mut RegressionSummary) {
    cmp.suppressed_regressions.push(SuppressedRegression {
        row: ChangeRow::OptimizedLatency {
            target: "labs/a:a".into(),
            before: 50.0.into(),
            after: 100.0.into(),
            delta_pct: 100.0.into(),
            optimized_time_delta_ms: 50.0.into(),
        },
        suppression_reason: "recheck_not_regressed".into(),
        recheck_run_id: "run__recheck__a".into(),
        recheck_speedup: Some(2.0.into()),
        recheck_optimized_time_ms: Some(50.0.into()),
    });
}

#[test]
fn suppressed_regressions_are_never_eligible() {
    let s = clean();
    let mut cmp = no_baseline(&s);
    suppressed(&mut cmp);
    assert!(
        run_accepted(&s, &cmp, false, false),
        "suppressed regressions pass the gate"
    );
    assert!(has(
        &baseline_eligibility(&precise(s.clone()), &cmp, true, true),
        "cleared only by a recheck"
    ));
    let c = eligible_anchor_rules(&s, &cmp, true, true, false);
    assert!(
        has(&c, "cleared only by a recheck"),
        "not even through explicit acceptance"
    );
}

#[test]
fn eligible_anchor_rules_of_restore() {
    let s = clean();
    let initial = no_baseline(&s);
    assert!(eligible_anchor_rules(&s, &initial, true, false, false).passed());
    assert!(has(
        &eligible_anchor_rules(&s, &initial, false, false, false),
        "not accepted"
    ));
    assert!(has(
        &eligible_anchor_rules(&s, &initial, true, false, true),
        "history has warnings"
    ));

    let mut dirty = clean();
    dirty.source_git_dirty = Some(true);
    assert!(has(
        &eligible_anchor_rules(&dirty, &initial, true, true, false),
        "source_git_dirty"
    ));
    let mut incomplete = clean();
    incomplete.targets[0].best_speedup = None;
    assert!(has(
        &eligible_anchor_rules(&incomplete, &initial, true, true, false),
        "best_speedup"
    ));

    // A promoted run compared with a prior anchor: eligible only through explicit acceptance.
    let anchor = summary(
        "anchor",
        vec![speed_opt("a", 2.0, 50.0), memory_target("kv", 1024.0, 50.0)],
    );
    let mut better = clean();
    better.targets[0] = speed_opt("a", 2.5, 40.0);
    let cmp = against(&anchor, &better);
    let c = eligible_anchor_rules(&better, &cmp, true, false, false);
    assert!(
        has(&c, "1 improvement(s)") && has(&c, "prior anchor anchor"),
        "{c:?}"
    );
    assert!(eligible_anchor_rules(&better, &cmp, true, true, false).passed());
}

#[test]
fn verdict_passes_an_accepted_run_even_when_not_eligible() {
    let s = clean();
    let cmp = against(&s, &clean());
    assert!(!baseline_eligible(&precise(s.clone()), &cmp, true, true));
    let v = verdict(&RunOutcome {
        summary: Some(&s),
        comparison: Some(&cmp),
        execution_failed: 0,
        history_integrity_failed: false,
        run_accepted: true,
    });
    assert!(v.passed, "{v:?}");
    assert_eq!((v.failures.len(), v.exit()), (0, Exit::Ok));
}

#[test]
fn verdict_fails_closed_on_each_condition() {
    let s = clean();
    let cmp = no_baseline(&s);
    let ok = RunOutcome {
        summary: Some(&s),
        comparison: Some(&cmp),
        execution_failed: 0,
        history_integrity_failed: false,
        run_accepted: true,
    };
    let check = |o: RunOutcome<'_>, needle: &str| {
        let v = verdict(&o);
        assert!(!v.passed && v.exit() == Exit::Gate, "{needle}: {v:?}");
        assert!(
            v.failures.iter().any(|f| f.contains(needle)),
            "{needle} not in {v:?}"
        );
    };
    check(
        RunOutcome {
            summary: None,
            ..ok
        },
        "run summary is missing",
    );
    let empty = summary("run", vec![]);
    check(
        RunOutcome {
            summary: Some(&empty),
            ..ok
        },
        "target_count is 0",
    );
    let failed = recompute(summary(
        "run",
        vec![with_status(speed_opt("a", 2.0, 50.0), "failed_no_speedup")],
    ));
    check(
        RunOutcome {
            summary: Some(&failed),
            ..ok
        },
        "summary.failed is 1",
    );
    let skipped = recompute(summary(
        "run",
        vec![with_status(speed_opt("a", 2.0, 50.0), "skipped_no_gpu")],
    ));
    check(
        RunOutcome {
            summary: Some(&skipped),
            ..ok
        },
        "summary.skipped is 1",
    );
    let missing = recompute(summary(
        "run",
        vec![with_status(speed_opt("a", 2.0, 50.0), MISSING)],
    ));
    check(
        RunOutcome {
            summary: Some(&missing),
            ..ok
        },
        "summary.missing is 1",
    );
    check(
        RunOutcome {
            execution_failed: 2,
            ..ok
        },
        "execution.total_failed is 2",
    );
    check(
        RunOutcome {
            comparison: None,
            ..ok
        },
        "comparison against the anchor is missing",
    );
    let mut regressed = cmp.clone();
    regressed.regressions.push(ChangeRow::Status {
        target: "labs/a:a".into(),
        before: "succeeded".into(),
        after: "failed_verification".into(),
    });
    check(
        RunOutcome {
            comparison: Some(&regressed),
            ..ok
        },
        "confirmed regression: labs/a:a status succeeded -> failed_verification",
    );
    let mut lost = cmp.clone();
    lost.missing_targets.push(speed_opt("gone", 2.0, 50.0));
    check(
        RunOutcome {
            comparison: Some(&lost),
            ..ok
        },
        "missing target: gone (labs/gone:gone) is in the anchor but not in this run",
    );
    check(
        RunOutcome {
            history_integrity_failed: true,
            ..ok
        },
        "integrity",
    );
    check(
        RunOutcome {
            run_accepted: false,
            ..ok
        },
        "run_accepted is false",
    );
}

/// A regression side by side confirmed names that comparison's figures too: a history change
/// just under the threshold (-4.9 %) is blocking because the comparison with the anchor's own
/// code found it worse, and the message must say so rather than leave the reader to wonder.
#[test]
fn a_regression_confirmed_side_by_side_names_the_comparison() {
    use crate::history::{SbsRatio, SbsVerdict, SideBySideBlock, SideBySideCheck};
    let anchor = clean();
    let mut slower = clean();
    slower.targets[0] = speed_opt("a", 2.0, 100.0);
    let mut cmp = against(&anchor, &slower);
    let ratio = |r: f64, lo: f64, hi: f64| SbsRatio {
        ratio: r.into(),
        low: lo.into(),
        high: hi.into(),
    };
    let reason = "optimized time x1.0612 [1.0401, 1.0830], speedup x0.9400 [0.9200, 0.9610] current/anchor over 24 rounds: a significant worsening that may reach the 5 % threshold";
    cmp.side_by_side = Some(SideBySideBlock {
        enabled: true,
        reason: "on".into(),
        warning: None,
        anchor_commit: None,
        current_commit: None,
        checks: vec![SideBySideCheck {
            target: "labs/a:a".into(),
            key: "a".into(),
            suspected_as: "within_noise".into(),
            verdict: SbsVerdict::Worse,
            reason: reason.into(),
            cause: None,
            threshold_pct: 5.0.into(),
            decided_on: "both".into(),
            optimized_time_ratio: Some(ratio(1.0612, 1.0401, 1.0830)),
            speedup_ratio: Some(ratio(0.94, 0.92, 0.961)),
            rounds: 24,
            seconds: 10.0.into(),
            build_seconds: None,
            evidence_dir: None,
            overloaded: None,
        }],
    });
    let c = run_acceptance(&slower, &cmp, false, false);
    assert!(
        has(
            &c,
            &format!(
                "confirmed regression: labs/a:a optimized time 50.00 ms -> 100.0 ms (+100.0 %, 50.0 ms; threshold +5.00 % and 0.0500 ms); side by side with the anchor's code: worse, {reason}"
            )
        ),
        "{c:?}"
    );
    // Without a decided comparison the message is the history test's alone.
    cmp.side_by_side = None;
    let c = run_acceptance(&slower, &cmp, false, false);
    assert!(
        c.reasons
            .iter()
            .all(|r| !r.contains("side by side with the anchor's code")),
        "{c:?}"
    );
}
