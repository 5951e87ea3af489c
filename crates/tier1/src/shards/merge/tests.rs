use super::*;
use crate::bench::result::{RESULTS_SCHEMA_VERSION, empty_result, status};
use crate::history::model::Environment;
use crate::shards::testkit::plan;

fn env(runner: &str, uuid: &str) -> Environment {
    Environment {
        backend: "cpu".into(),
        device_names: vec!["Test CPU".into()],
        device_uuids: vec![uuid.into()],
        driver_version: None,
        cuda_version: None,
        runner: Some(runner.into()),
        profile: Some("cpu".into()),
        clock: None,
        runner_class: None,
    }
}

fn results(plan: &Plan, suite: &Suite, shard: u32, at: &str, runner: &str) -> ResultsFile {
    let targets = plan
        .targets_of(shard)
        .unwrap()
        .iter()
        .rev()
        .map(|k| {
            let mut t = empty_result(suite.target(k).unwrap(), &Default::default());
            t.status = status::FAILED_ERROR.into();
            t
        })
        .collect();
    ResultsFile {
        schema_version: RESULTS_SCHEMA_VERSION,
        run_id: plan.run_id.clone(),
        timestamp: at.into(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: "cpu".into(),
        backend: "cpu".into(),
        environment: env(runner, &format!("uuid-{shard}")),
        seed: 42,
        min_speedup: 1.05.into(),
        warmup: 5,
        iterations: 10,
        max_rounds: Some(1000),
        min_sample_ms: Some(1.0.into()),
        precision_pct: None,
        budget_s: Some(30.0.into()),
        targets,
    }
}

#[test]
fn shards_merge_into_suite_order_with_the_earliest_time_and_every_runner() {
    let suite = Suite::embedded();
    let p = plan(&suite, 3);
    let delivered = vec![
        (3, results(&p, &suite, 3, "2026-08-01T03:16:00Z", "node-b")),
        (1, results(&p, &suite, 1, "2026-08-01T03:17:00Z", "node-a")),
        (2, results(&p, &suite, 2, "2026-08-01T03:15:30Z", "node-b")),
    ];
    let m = merge_results(&p, &suite, &delivered).unwrap();
    let keys: Vec<&str> = m.targets.iter().map(|t| t.key.as_str()).collect();
    let want: Vec<&str> = suite.targets.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(keys, want);
    assert_eq!(m.timestamp, "2026-08-01T03:15:30Z");
    assert_eq!(m.environment.runner.as_deref(), Some("node-a, node-b"));
    assert_eq!(m.environment.device_uuids, ["uuid-1", "uuid-2", "uuid-3"]);
    // Any order of arrival gives the same file.
    let mut rev = delivered.clone();
    rev.reverse();
    assert_eq!(merge_results(&p, &suite, &rev).unwrap(), m);
    // A missing shard's targets are simply absent.
    let two = merge_results(&p, &suite, &delivered[1..]).unwrap();
    assert_eq!(two.targets.len(), 4);
    assert!(merge_results(&p, &suite, &[]).is_err());
}

#[test]
fn a_shard_of_another_run_class_or_machine_is_refused_naming_it() {
    let suite = Suite::embedded();
    let p = plan(&suite, 2);
    let good = |k| results(&p, &suite, k, "2026-08-01T03:16:00Z", "n");
    let check = |k: u32, r: ResultsFile| {
        let delivered = if k == 1 {
            vec![(1, r), (2, good(2))]
        } else {
            vec![(1, good(1)), (2, r)]
        };
        merge_results(&p, &suite, &delivered)
            .unwrap_err()
            .to_string()
    };
    let mut r = good(2);
    r.run_id = "other".into();
    assert!(check(2, r).starts_with("shard 2: results run_id"));
    let mut r = good(2);
    r.environment.runner_class = Some("h100".into());
    let e = check(2, r);
    assert!(
        e.contains("environment.runner_class") && e.contains("h100"),
        "{e}"
    );
    let mut r = good(2);
    r.profile = "minimal".into();
    assert!(check(2, r).contains("results profile"));
    let mut r = good(2);
    r.targets.pop();
    assert!(check(2, r).contains("results targets"));
    let mut r = good(2);
    r.environment.device_names = vec!["Other CPU".into()];
    let e = check(2, r);
    assert!(e.contains("did not measure on compatible machines"), "{e}");
    let mut r = good(2);
    r.seed = 7;
    assert!(check(2, r).contains("results header"));
    let mut r = good(1);
    r.suite_version = 9;
    assert!(check(1, r).starts_with("shard 1: results suite"));
}
