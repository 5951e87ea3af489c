use super::*;
use crate::aggregate::fixtures::{measured, speed_target, summary, with_status};
use crate::history::model::IndexRow;

/// The embedded suite's first six targets: the plans below are worked out for six, whatever
/// the table holds.
fn six() -> Suite {
    let mut s = Suite::embedded();
    s.targets.truncate(6);
    assert_eq!(
        s.targets.len(),
        6,
        "the embedded suite has at least six targets"
    );
    s
}

/// [`six`]'s keys, in suite order.
fn keys() -> Vec<String> {
    six().targets.iter().map(|t| t.key.clone()).collect()
}

fn time_of(seconds: f64) -> TargetTime {
    TargetTime {
        seconds: Finite::from(seconds),
        source: "test".into(),
    }
}

#[test]
fn lpt_balances_by_recorded_time_and_keeps_suite_order_within_a_shard() {
    let suite = six();
    let k = keys();
    // Six targets: 10, 9, 1, 1, 1, 8 seconds.
    let times: BTreeMap<String, TargetTime> = k
        .iter()
        .zip([10.0, 9.0, 1.0, 1.0, 1.0, 8.0])
        .map(|(k, s)| (k.clone(), time_of(s)))
        .collect();
    let a = assign(&suite, &times, 2);
    assert_eq!(a.len(), 2);
    // Longest first: 10 -> 1, 9 -> 2, 8 -> 2 (9 < 10), 1 -> 1 (10 < 17), 1 -> 1, 1 -> 1.
    assert_eq!(
        a[0].targets,
        [&k[0], &k[2], &k[3], &k[4]].map(String::clone)
    );
    assert_eq!(a[1].targets, [&k[1], &k[5]].map(String::clone));
    assert_eq!(a[0].estimated_seconds, 13.0);
    assert_eq!(a[1].estimated_seconds, 17.0);
    // Deterministic.
    assert_eq!(assign(&suite, &times, 2), a);
    // At most one shard per target.
    assert_eq!(assign(&suite, &times, 40).len(), 6);
    assert_eq!(assign(&suite, &times, 0).len(), 1);
    // Equal times: round robin in suite order.
    let even = with_median(&suite, BTreeMap::new());
    let a = assign(&suite, &even, 3);
    assert_eq!(a[0].targets, [&k[0], &k[3]].map(String::clone));
    assert_eq!(a[1].targets, [&k[1], &k[4]].map(String::clone));
    assert_eq!(a[2].targets, [&k[2], &k[5]].map(String::clone));
}

#[test]
fn a_new_target_gets_the_median_of_the_recorded_ones() {
    let suite = six();
    let k = keys();
    let known: BTreeMap<String, TargetTime> = [(&k[0], 2.0), (&k[1], 4.0), (&k[2], 30.0)]
        .into_iter()
        .map(|(k, s)| (k.clone(), time_of(s)))
        .collect();
    let all = with_median(&suite, known);
    assert_eq!(all.len(), 6);
    assert_eq!(all[&k[5]].seconds, 4.0);
    assert_eq!(all[&k[5]].source, "median");
    assert_eq!(all[&k[0]].source, "test");
    let none = with_median(&suite, BTreeMap::new());
    assert!(none.values().all(|t| t.seconds == UNKNOWN_SECONDS));
}

fn write_history(root: &Path, runs: &[(&str, Vec<TargetSummary>)]) {
    let mut doc = IndexDoc::new_chained("tier1", 1);
    for (id, targets) in runs {
        let s = summary(id, targets.clone());
        let dir = root.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        crate::json::write(&dir.join("summary.json"), &s).unwrap();
        let row: IndexRow = serde_json::from_value(serde_json::json!({
            "run_id": id, "generated_at": s.generated_at,
            "summary_path": format!("{id}/summary.json"),
            "regression_summary_path": format!("{id}/regression_summary.md"),
            "regression_json_path": format!("{id}/regression_summary.json"),
            "trend_snapshot_path": format!("{id}/trend_snapshot.json"),
            "run_accepted": true, "baseline_eligible": false
        }))
        .unwrap();
        doc.push_row(&row).unwrap();
    }
    std::fs::write(root.join(INDEX_FILE), doc.to_bytes().unwrap()).unwrap();
}

#[test]
fn recorded_times_come_from_the_newest_run_that_measured_each_target() {
    let t = tempfile::tempdir().unwrap();
    let suite = six();
    let k = keys();
    let row = |key: &str, ms: f64| measured(speed_target(key, ms, 2.0), 0.5);
    write_history(
        t.path(),
        &[
            ("r1", vec![row(&k[0], 100.0), row(&k[1], 10.0)]),
            (
                "r2",
                vec![
                    row(&k[0], 200.0),
                    with_status(row(&k[1], 500.0), "failed_error"),
                ],
            ),
        ],
    );
    let got = recorded_seconds(Some(t.path()), &suite).unwrap();
    // r2 measured k0 (30 rounds x (200 + 100) ms); k1 failed there, so r1's time stands.
    assert_eq!(got[&k[0]].source, "history:r2");
    assert!((got[&k[0]].seconds.get() - 9.0).abs() < 1e-9);
    assert_eq!(got[&k[1]].source, "history:r1");
    assert!((got[&k[1]].seconds.get() - 0.45).abs() < 1e-9);
    assert!(!got.contains_key(&k[2]));
    assert!(recorded_seconds(None, &suite).unwrap().is_empty());
    assert!(
        recorded_seconds(Some(&t.path().join("absent")), &suite)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_plan_checks_itself_and_its_digest_covers_every_field() {
    let suite = six();
    let plan = crate::shards::testkit::plan(&suite, 4);
    assert_eq!(plan.shards, 4);
    assert_eq!(plan.problem(&suite), None);
    assert_eq!(plan.targets_of(4).map(<[String]>::len), Some(1));
    assert_eq!(plan.targets_of(5), None);
    let d = plan.digest();
    let mut other = plan.clone();
    other.commit = "f".repeat(40);
    assert_ne!(other.digest(), d);
    let mut bad = plan.clone();
    let twice = bad.assignments[0].targets[0].clone();
    bad.assignments[1].targets.push(twice);
    assert!(bad.problem(&suite).unwrap().contains("is in two shards"));
    let mut bad = plan.clone();
    bad.assignments.pop();
    assert!(
        bad.problem(&suite)
            .unwrap()
            .contains("expected 4 shards, found 3")
    );
    let mut bad = plan.clone();
    bad.assignments[0].targets.reverse();
    assert!(bad.problem(&suite).unwrap().contains("suite order"));
    let mut bad = plan;
    bad.schema = "x".into();
    assert!(bad.problem(&suite).unwrap().contains("schema"));
}
