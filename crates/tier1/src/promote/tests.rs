//! Unit tests of promotion's rules: one table per rule (rows of facts → decision or refusal), and
//! the message and exit code of each refusal.

use super::error::PromoteError;
use super::refusal::Refusal;
use super::rules::*;
use crate::aggregate::fixtures::*;
use crate::exit::{Classify, Exit};
use crate::history::model::{ChangeRow, IndexRow, RecheckRecord, RegressionSummary, Summary};
use crate::regress::compare;
use crate::regress::noise::{HistoryRun, NoiseHistory};
use crate::suite::Thresholds;

fn row(id: &str, eligible: bool) -> IndexRow {
    serde_json::from_value(serde_json::json!({
        "run_id": id, "generated_at": "2026-08-16T00:00:00Z", "summary_path": "x",
        "regression_summary_path": "x", "regression_json_path": "x", "trend_snapshot_path": "x",
        "baseline_eligible": eligible, "run_accepted": eligible,
    }))
    .expect("an index row")
}

/// A run id or a runner class, or none.
type Id<'a> = Option<&'a str>;
/// A rule's decision.
type Decided<T> = Result<T, Refusal>;

fn s(v: &str) -> String {
    v.into()
}

#[test]
fn eligibility_only_the_newest_row_not_yet_eligible() {
    let rows: &[(&[IndexRow], &str, Result<&str, Refusal>)] = &[
        (&[], "b", Err(Refusal::NoRuns)),
        (&[row("a", true), row("b", false)], "b", Ok("b")),
        (
            &[row("a", true), row("b", false)],
            "a",
            Err(Refusal::NotNewest {
                newest: s("b"),
                run_id: s("a"),
            }),
        ),
        (
            &[row("a", false)],
            "c",
            Err(Refusal::NotNewest {
                newest: s("a"),
                run_id: s("c"),
            }),
        ),
        (
            &[row("a", false), row("b", true)],
            "b",
            Err(Refusal::AlreadyEligible { run_id: s("b") }),
        ),
    ];
    for (runs, run_id, want) in rows {
        let got = newest_candidate(runs, run_id).map(|r| r.run_id.as_str());
        assert_eq!(&got, want, "{run_id} of {runs:?}");
    }
}

#[test]
fn runner_class_is_never_another_classs() {
    let refused = |found: Option<&str>, want: Option<&str>| {
        Err(Refusal::RunnerClass {
            what: s("live index"),
            want: want.map(Into::into),
            found: found.map(Into::into),
        })
    };
    let rows: &[(Id, Id, Decided<()>)] = &[
        (None, None, Ok(())),
        (Some("b200"), Some("b200"), Ok(())),
        (Some("b200"), None, refused(Some("b200"), None)),
        (None, Some("b200"), refused(None, Some("b200"))),
        (
            Some("h100"),
            Some("b200"),
            refused(Some("h100"), Some("b200")),
        ),
    ];
    for (found, want, expected) in rows {
        assert_eq!(
            &runner_class("live index", *found, *want),
            expected,
            "{found:?} {want:?}"
        );
    }
}

#[test]
fn eligibility_complete_metrics_the_commit_and_precision() {
    let clean = || precise(summary("run", vec![speed_opt("a", 2.0, 50.0)]));
    let failed = {
        let mut x = clean();
        x.targets[0] = measured(with_status(speed_opt("a", 2.0, 50.0), "failed"), 0.5);
        x
    };
    let other_commit = {
        let mut x = clean();
        x.source_git_commit = Some("f".repeat(40));
        x.source_manifest_git_commit = x.source_git_commit.clone();
        x
    };
    let unmeasured = summary("run", vec![speed_opt("a", 2.0, 50.0)]);
    let throttled = {
        let mut x = clean();
        if let Some(m) = &mut x.targets[0].measurement {
            m.throttled = true;
        }
        x
    };
    // (summary, expected commit, the decision: Ok, or the refusal's kind).
    let rows: Vec<(&str, Summary, &str, &str)> = vec![
        ("clean", clean(), COMMIT, "ok"),
        ("failed target", failed, COMMIT, "not eligible"),
        ("other commit", other_commit, COMMIT, "commit"),
        ("commit expected", clean(), "ffff", "commit"),
        ("no measurement", unmeasured, COMMIT, "quality"),
        ("throttled", throttled, COMMIT, "quality"),
    ];
    for (name, summary, commit, want) in rows {
        let got = match eligible_anchor("run", &summary, commit) {
            Ok(()) => "ok",
            Err(Refusal::NotEligible { run_id, reasons }) => {
                assert_eq!(run_id, "run");
                assert!(!reasons.is_empty(), "{name}");
                "not eligible"
            }
            Err(Refusal::Commit { expected, found }) => {
                assert_eq!(
                    (expected.as_str(), found),
                    (commit, summary.source_git_commit)
                );
                "commit"
            }
            Err(Refusal::AnchorQuality { reasons, .. }) => {
                assert!(reasons[0].starts_with("target a: "), "{name}: {reasons:?}");
                "quality"
            }
            Err(other) => panic!("{name}: {other:?}"),
        };
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn comparison_shape_of_this_run_without_warnings() {
    let run = precise(summary("run", vec![speed_opt("a", 2.0, 50.0)]));
    let base = compare(&run, None, Thresholds::default()).expect("no anchor");
    let artifact = "tier1-evidence-run";
    let with = |f: fn(&mut RegressionSummary)| {
        let mut c = base.clone();
        f(&mut c);
        c
    };
    let rows: Vec<(&str, RegressionSummary, &str, Result<(), Refusal>)> = vec![
        ("clean", base.clone(), artifact, Ok(())),
        (
            "other run",
            with(|c| c.current_run_id = Some("other".into())),
            artifact,
            Err(Refusal::CurrentRunId {
                expected: s("run"),
                found: Some(s("other")),
            }),
        ),
        (
            "warnings",
            with(|c| c.warnings.push("gap".into())),
            artifact,
            Err(Refusal::Warnings {
                warnings: vec![s("gap")],
            }),
        ),
        (
            "other artifact",
            base.clone(),
            "tier1-evidence-x",
            Err(Refusal::ArtifactName {
                expected: s("tier1-evidence-x"),
                found: Some(s(artifact)),
            }),
        ),
    ];
    for (name, cmp, expected_artifact, want) in rows {
        let got = comparison_shape("run", expected_artifact, &run, &cmp);
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn bootstrap_reset_live_history_kept_reset_or_refused() {
    const T: bool = true;
    const F: bool = false;
    let live = |name, version, holds_run| {
        Some(LiveFacts {
            suite_name: name,
            suite_version: version,
            holds_run,
        })
    };
    // (live index, allow_bootstrap, decision): the suite is tier1 version 2, the run `run`.
    let rows: Vec<(Option<LiveFacts<'_>>, bool, Result<Live, Refusal>)> = vec![
        (None, F, Err(Refusal::NoLiveIndex)),
        (None, T, Ok(Live::Reset)),
        (live("tier1", 2, F), F, Ok(Live::Keep)),
        (live("tier1", 2, F), T, Ok(Live::Keep)),
        (
            live("tier1", 2, T),
            T,
            Err(Refusal::InLiveHistory { run_id: s("run") }),
        ),
        (
            live("other", 2, F),
            T,
            Err(Refusal::LiveSuiteName {
                expected: s("tier1"),
                found: s("other"),
            }),
        ),
        (
            live("tier1", 1, F),
            F,
            Err(Refusal::LiveSuiteVersion {
                expected: 2,
                found: 1,
            }),
        ),
        // A bootstrap over a suite-version change resets, whatever the old runs were.
        (live("tier1", 1, F), T, Ok(Live::Reset)),
        (live("tier1", 1, T), T, Ok(Live::Reset)),
    ];
    for (facts, allow_bootstrap, want) in rows {
        let got = live_history(facts, ("tier1", 2), "run", allow_bootstrap);
        assert_eq!(got, want, "{facts:?} bootstrap {allow_bootstrap}");
    }
}

#[test]
fn bootstrap_reset_only_without_a_prior_anchor_and_with_bootstrap() {
    const T: bool = true;
    const F: bool = false;
    let stale = |expected: Option<&str>, found: Option<&str>| {
        Err(Refusal::StaleAnchor {
            expected: expected.map(Into::into),
            found: found.map(Into::into),
        })
    };
    // (prior anchor, allow_bootstrap, comparison's baseline_run_id, decision: reset or not).
    let rows: Vec<(Id, bool, Id, Decided<bool>)> = vec![
        (Some("a"), F, Some("a"), Ok(false)),
        (Some("a"), T, Some("a"), Ok(false)),
        (None, T, None, Ok(true)),
        (None, F, None, Err(Refusal::NoAnchor)),
        (None, F, Some("a"), Err(Refusal::NoAnchor)),
        (Some("a"), F, Some("old"), stale(Some("a"), Some("old"))),
        (Some("a"), T, None, stale(Some("a"), None)),
        (None, T, Some("foreign"), stale(None, Some("foreign"))),
    ];
    for (prior, allow_bootstrap, baseline, want) in rows {
        let got = bootstrap_reset(prior, allow_bootstrap, baseline);
        assert_eq!(got, want, "{prior:?} {allow_bootstrap} {baseline:?}");
    }
}

fn accepted(speedups: &[f64]) -> NoiseHistory {
    NoiseHistory {
        runs: speedups
            .iter()
            .enumerate()
            .map(|(i, x)| HistoryRun {
                run_id: format!("r{i}"),
                segment: s("r0"),
                summary: summary(&format!("r{i}"), vec![speed_opt("a", *x, 50.0)]),
            })
            .collect(),
    }
}

fn recheck(target: &str, confirmed: bool) -> RecheckRecord {
    RecheckRecord {
        target: target.into(),
        recheck_run_id: s("run__recheck__a"),
        recheck_output_json: s("run/recheck.json"),
        recheck_summary: None,
        recheck_regressions: Vec::new(),
        recheck_metrics_valid: true,
        confirmed_regression: confirmed,
    }
}

#[test]
fn outlier_rule_against_the_accepted_runs() {
    let six = [2.0, 2.02, 1.98, 2.0, 2.01, 1.99];
    // (accepted speedups, the run's speedup, its rechecks, outlier refused).
    let rows: Vec<(&[f64], f64, Vec<RecheckRecord>, bool)> = vec![
        (&six, 2.05, vec![], false),
        (&six, 2.5, vec![], true),
        (&six, 1.5, vec![], true),
        // A regression a recheck confirmed is a real level change: exempt.
        (&six, 1.5, vec![recheck("labs/a:a", true)], false),
        // A recheck that did not confirm exempts nothing.
        (&six, 1.5, vec![recheck("labs/a:a", false)], true),
        (&six, 1.5, vec![recheck("labs/b:b", true)], true),
        // Too few accepted runs for the rule (5 needed).
        (&six[..4], 2.5, vec![], false),
        (&[], 2.5, vec![], false),
    ];
    let th = Thresholds::default();
    for (history, x, rechecks, refused) in rows {
        let run = summary("run", vec![speed_opt("a", x, 50.0)]);
        let got = outlier_rule("run", &run, &accepted(history), &th, &rechecks);
        match got {
            Ok(()) => assert!(!refused, "{history:?} {x}"),
            Err(Refusal::AnchorQuality { run_id, reasons }) => {
                assert!(refused, "{history:?} {x}: {reasons:?}");
                assert_eq!(run_id, "run");
                assert!(
                    reasons[0].starts_with(&format!("target a: best_speedup {x:.3}x is an outlier against the last {} accepted runs (median 2.000x, robust SD 2.00 %", history.len())),
                    "{reasons:?}"
                );
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    // Memory targets are not judged.
    let kv = summary("run", vec![memory_target("kv", 4096.0, 90.0)]);
    assert_eq!(outlier_rule("run", &kv, &accepted(&six), &th, &[]), Ok(()));
}

fn change() -> ChangeRow {
    ChangeRow::OptimizedLatency {
        target: s("labs/a:a"),
        before: 50.0.into(),
        after: 100.0.into(),
        delta_pct: 100.0.into(),
        optimized_time_delta_ms: 50.0.into(),
    }
}

#[test]
fn recomputed_comparison_names_the_first_tampered_field() {
    let anchor = precise(summary("anchor", vec![speed_opt("a", 2.0, 50.0)]));
    let run = precise(summary("run", vec![speed_opt("a", 2.0, 50.0)]));
    let re = compare(&run, Some(&anchor), Thresholds::default()).expect("comparable");
    type Tamper = fn(&mut RegressionSummary);
    let rows: &[(Tamper, Result<(), Refusal>)] = &[
        (|_| {}, Ok(())),
        (
            |c| c.baseline_run_id = Some(s("x")),
            Err(tampered("baseline_run_id")),
        ),
        (|c| c.current_run_id = None, Err(tampered("current_run_id"))),
        (
            |c| c.regressions.push(change()),
            Err(tampered("regressions")),
        ),
        (
            |c| c.improvements.push(change()),
            Err(tampered("improvements")),
        ),
        (
            |c| c.anchor_declines.push(change()),
            Err(tampered("anchor_declines")),
        ),
        (
            |c| c.new_targets.push(speed_target("b", 1.0, 1.0)),
            Err(tampered("new_targets")),
        ),
        (
            |c| c.missing_targets.push(speed_target("b", 1.0, 1.0)),
            Err(tampered("missing_targets")),
        ),
        (
            |c| c.within_noise.push(change()),
            Err(tampered("within_noise")),
        ),
        (
            |c| c.rechecks.push(recheck("labs/a:a", true)),
            Err(tampered("rechecks")),
        ),
        (|c| c.detection = None, Err(tampered("detection"))),
        // A record written before `measured_detectable_pct` existed (issue 43) holds none: the
        // recomputed figure is not asked of it; a recorded one must be the recomputed one.
        (|c| set_measured_detectable(c, None), Ok(())),
        (
            |c| set_measured_detectable(c, Some(1.0)),
            Err(tampered("detection")),
        ),
        // Fields the comparison does not hold are not compared.
        (|c| c.warnings.push(s("gap")), Ok(())),
        (|c| c.regression_rechecks_path = Some(s("x")), Ok(())),
        // Two tampered fields: the first in the record's order is named.
        (
            |c| {
                c.within_noise.push(change());
                c.regressions.push(change());
            },
            Err(tampered("regressions")),
        ),
    ];
    assert!(
        re.detection.is_some(),
        "the comparison records its detection"
    );
    for (i, (tamper, want)) in rows.iter().enumerate() {
        let mut stored = re.clone();
        tamper(&mut stored);
        assert_eq!(&same_comparison(&stored, &re), want, "row {i}");
    }
}

/// Every test of `c`'s detection with `measured_detectable_pct` set to `to` (at least one).
fn set_measured_detectable(c: &mut RegressionSummary, to: Option<f64>) {
    let tests: Vec<_> = c
        .detection
        .iter_mut()
        .flat_map(|d| &mut d.targets)
        .flat_map(|t| &mut t.tests)
        .collect();
    assert!(!tests.is_empty(), "no statistical test to change");
    for t in tests {
        t.measured_detectable_pct = to.map(Into::into);
    }
}

fn tampered(field: &'static str) -> Refusal {
    Refusal::Tampered { field }
}

#[test]
fn recomputed_comparison_is_recomputed_not_trusted() {
    let anchor = precise(summary("anchor", vec![speed_opt("a", 2.0, 50.0)]));
    let slower = precise(summary("run", vec![speed_opt("a", 2.0, 100.0)]));
    let book = Thresholds::default().into();
    let noise = NoiseHistory::default();
    let stored = crate::regress::compare_in(&slower, Some(&anchor), &book, &noise).expect("cmp");
    assert!(!stored.regressions.is_empty());
    let ok = recomputed_comparison(&slower, &stored, Some(&anchor), &book, &noise);
    assert!(ok.is_ok(), "{ok:?}");
    let mut cleared = stored.clone();
    cleared.regressions.clear();
    let e = recomputed_comparison(&slower, &cleared, Some(&anchor), &book, &noise).unwrap_err();
    assert_eq!(
        e.to_string(),
        "stored comparison field `regressions` differs from the recomputed comparison (tampered comparison)"
    );
    // Against no anchor (a bootstrap) the comparison is the first one.
    let first = compare(&slower, None, Thresholds::default()).expect("no anchor");
    assert!(recomputed_comparison(&slower, &first, None, &book, &noise).is_ok());
    let e = recomputed_comparison(&slower, &stored, None, &book, &noise).unwrap_err();
    assert!(e.to_string().contains("`baseline_run_id`"), "{e}");
}

#[test]
fn shard_archives_only_for_a_combined_run() {
    // (summary records shards, archives given, decision).
    let rows = [
        (false, false, Ok(())),
        (true, true, Ok(())),
        (true, false, Ok(())),
        (
            false,
            true,
            Err(Refusal::ShardArchives { run_id: s("run") }),
        ),
    ];
    for (records, given, want) in rows {
        assert_eq!(
            shard_archives("run", records, given),
            want,
            "{records} {given}"
        );
    }
}

#[test]
fn each_refusal_keeps_its_message_and_exit_code() {
    let rows: Vec<(Refusal, Exit, &str)> = vec![
        (
            Refusal::NoRuns,
            Exit::Invalid,
            "candidate history has no runs",
        ),
        (
            Refusal::NotNewest {
                newest: s("b"),
                run_id: s("a"),
            },
            Exit::Invalid,
            r#"may ratify only the newest immutable candidate: newest run is "b", --run-id is "a""#,
        ),
        (
            Refusal::AlreadyEligible { run_id: s("a") },
            Exit::Invalid,
            r#"run "a" is already baseline_eligible"#,
        ),
        (
            Refusal::TargetList {
                want: vec![(s("a"), s("labs/a:a"))],
                found: vec![],
            },
            Exit::Invalid,
            r#"summary targets must equal the suite's (key, target) list in order: expected [("a", "labs/a:a")], found []"#,
        ),
        (
            Refusal::RunnerClass {
                what: s("live index"),
                want: Some(s("b200")),
                found: None,
            },
            Exit::Invalid,
            r#"live index: runner_class expected Some("b200") (--runner-class), found None: a run of one runner class never becomes another class's anchor"#,
        ),
        (
            Refusal::AnchorQuality {
                run_id: s("a"),
                reasons: vec![s("x"), s("y")],
            },
            Exit::Invalid,
            r#"refusing to promote a: it is not a good anchor: x; y"#,
        ),
        (
            Refusal::Record { why: s("bad") },
            Exit::Invalid,
            "regression_summary.json: bad",
        ),
        (
            Refusal::LiveSuiteVersion {
                expected: 2,
                found: 1,
            },
            Exit::Invalid,
            "live history suite_version: expected 2, found 1 (only a bootstrap may reset it)",
        ),
        (
            Refusal::InLiveHistory { run_id: s("a") },
            Exit::Conflict,
            r#"run "a" is already in live history"#,
        ),
        (
            Refusal::StaleAnchor {
                expected: Some(s("a")),
                found: None,
            },
            Exit::Invalid,
            r#"regression baseline_run_id: expected Some("a") (the latest compatible live anchor), found None (stale or foreign anchor)"#,
        ),
        (
            Refusal::NoAnchor,
            Exit::Invalid,
            "live history has no compatible eligible anchor; promotion without --allow-bootstrap requires one",
        ),
    ];
    for (refusal, exit, message) in rows {
        let e = PromoteError::from(refusal);
        assert_eq!((e.exit(), e.to_string().as_str()), (exit, message));
    }
}
