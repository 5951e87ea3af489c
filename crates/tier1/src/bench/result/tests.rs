//! Unit tests of `result`.
use super::*;
use crate::bench::estimate::Estimator;
use crate::bench::stats::Stats;
use crate::suite::{Goal, Suite, TargetKind};
use std::collections::BTreeMap;

fn variant(name: &str, role: Role, samples: &[f64], mem: u64, passed: bool) -> VariantResult {
    VariantResult {
        name: name.into(),
        role,
        input_signature: InputSignature {
            seed: 42,
            inputs: Vec::new(),
        },
        samples_ms: samples.to_vec(),
        repetitions: 1,
        stats: Stats::of(samples).unwrap(),
        memory_peak_bytes: Some(mem),
        verification: (role == Role::Optimized).then(|| VariantVerification {
            passed,
            elements: 1,
            mismatches: u64::from(!passed),
            max_abs_err: 0.0.into(),
            max_rel_err: 0.0.into(),
            reference: None,
            message: None,
        }),
    }
}

fn target(goal: Goal, variants: Vec<VariantResult>) -> TargetResult {
    let s = Suite::embedded();
    let t = &s.targets[0];
    TargetResult {
        key: t.key.clone(),
        target: t.target.clone(),
        kind: TargetKind::Builtin,
        optimization_goal: goal,
        shapes: BTreeMap::new(),
        tolerance: t.tolerance,
        work: Work::default(),
        peak_class: None,
        baseline_file: Some("/abs/file.py".into()),
        artifacts: BTreeMap::from([("nsys_rep".into(), "artifacts/x.nsys-rep".into())]),
        failure: None,
        variants,
        sampling: None,
        min_speedup: None,
        status: String::new(),
        message: None,
        metrics: Metrics::default(),
    }
}

#[test]
fn speed_gate_uses_verified_medians_and_the_reference_message() {
    let t = target(
        Goal::Speed,
        vec![
            variant(BASELINE, Role::Baseline, &[2.0, 2.0, 9.0], 1 << 20, true),
            variant(
                "optimized_a",
                Role::Optimized,
                &[2.0, 2.0, 2.0],
                1 << 19,
                true,
            ),
            variant("optimized_wrong", Role::Optimized, &[0.1], 0, false),
        ],
    );
    let (s, msg, m) = derive(&t, 1.05, Estimator::PairedMedian);
    assert_eq!(s, status::FAILED_VERIFICATION);
    assert!(
        msg.unwrap()
            .contains("optimized_wrong output differs from baseline")
    );
    assert_eq!(m.best_speedup, Some(1.0.into()));
    let mut t2 = t.clone();
    t2.variants.pop();
    let (s, msg, _) = derive(&t2, 1.05, Estimator::PairedMedian);
    assert_eq!(s, status::FAILED_NO_SPEEDUP);
    assert_eq!(
        msg.as_deref(),
        Some("Best speedup 1.00x below required 1.05x threshold for speed-goal benchmark")
    );
}

#[test]
fn memory_goal_is_not_speed_gated_and_rows_follow_reference_rules() {
    let mut t = target(
        Goal::Memory,
        vec![
            variant(BASELINE, Role::Baseline, &[1.0], 1 << 21, true),
            variant("optimized_fp8", Role::Optimized, &[4.0], 1 << 20, true),
        ],
    );
    t.finalize(1.05);
    assert_eq!(t.status, status::SUCCEEDED);
    assert_eq!(t.metrics.best_memory_savings_pct, Some(50.0.into()));
    let suite = Suite::embedded();
    let r = ResultsFile {
        schema_version: RESULTS_SCHEMA_VERSION,
        run_id: "run1".into(),
        timestamp: "2026-01-01T00:00:00Z".into(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: "cpu".into(),
        backend: "cpu".into(),
        environment: crate::bench::backend::Backend::fingerprint(&crate::bench::CpuBackend),
        seed: 42,
        min_speedup: 1.05.into(),
        warmup: 5,
        iterations: 1,
        max_rounds: None,
        min_sample_ms: None,
        precision_pct: None,
        budget_s: None,
        targets: vec![t],
    };
    let rows = summarize(&r, &suite).unwrap();
    assert_eq!(rows.len(), suite.targets.len());
    let row = &rows[0];
    assert_eq!(row.best_speedup, Some(0.25.into()));
    assert_eq!(row.best_optimized_time_ms, Some(4.0.into()));
    assert_eq!(row.baseline_memory_mb, Some(2.0.into()));
    assert_eq!(row.best_optimized_memory_mb, Some(1.0.into()));
    assert_eq!(row.optimization_goal.as_deref(), Some("memory"));
    assert_eq!(row.baseline_file, None, "absolute paths are dropped");
    assert_eq!(row.artifacts["nsys_rep"], "run1/artifacts/x.nsys-rep");
    assert!(
        rows[1..]
            .iter()
            .all(|r| r.status == "missing" && r.best_speedup.is_none())
    );
}

#[test]
fn a_speedup_just_under_its_limit_never_reads_as_the_limit() {
    assert_eq!(
        no_speedup_message(1.047, 1.05),
        "Best speedup 1.047x below required 1.050x threshold for speed-goal benchmark"
    );
    assert_eq!(
        no_speedup_message(0.97, 1.05),
        "Best speedup 0.97x below required 1.05x threshold for speed-goal benchmark"
    );
}

/// A schema-2 file (clean-round estimates) was written before `estimator` and
/// `precision_required` were recorded: deriving its verdict gives the measurement record it holds
/// (neither field; readers take absent as `clean_rounds` and held to the precision), so it still
/// validates. A schema-3 derivation records both.
#[test]
fn an_older_schema_derives_the_measurement_record_it_was_written_with() {
    let samples = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95];
    let fast = [2.0, 2.05, 1.95, 2.0, 2.02, 1.98];
    let mut t = target(
        Goal::Speed,
        vec![
            variant(BASELINE, Role::Baseline, &samples, 1 << 20, true),
            variant("optimized_a", Role::Optimized, &fast, 1 << 19, true),
        ],
    );
    t.sampling = Some(Sampling {
        rounds: 6,
        processes: 1,
        precision_pct: 50.0.into(),
        order_seed: 42,
        budget_exhausted: false,
        remeasured: false,
        throttled: Vec::new(),
        machine: Vec::new(),
        clock: None,
        precision_required: false,
        passes: Vec::new(),
    });
    let (s, _, m) = derive(&t, 1.05, Estimator::CleanRounds);
    assert_eq!(s, status::SUCCEEDED);
    let old = m.measurement.expect("a measurement record");
    assert_eq!(old.estimator, None);
    assert_eq!(old.precision_required, None);
    let (_, _, m) = derive(&t, 1.05, Estimator::PairedMedian);
    let new = m.measurement.expect("a measurement record");
    assert_eq!(new.estimator.as_deref(), Some("paired_median"));
    assert_eq!(new.precision_required, Some(false));
}

#[test]
fn a_non_finite_metric_is_refused_when_read_and_when_written() {
    let metrics = |best: &str| {
        format!(
            r#"{{"baseline_time_ms": 2.0, "best_speedup": {best}, "best_optimization": "optimized_a"}}"#
        )
    };
    let ok: Metrics = serde_json::from_str(&metrics("1.5")).unwrap();
    for bad in ["1e400", "-1e999"] {
        let e = serde_json::from_str::<Metrics>(&metrics(bad)).unwrap_err();
        assert!(e.to_string().contains("number out of range"), "{bad}: {e}");
    }
    // JSON has no NaN; YAML does, and the metrics refuse it all the same.
    for bad in [".nan", ".inf", "-.inf"] {
        let e = serde_saphyr::from_str::<Metrics>(&metrics(bad)).unwrap_err();
        assert!(
            e.to_string().contains("expected a finite number"),
            "{bad}: {e}"
        );
    }
    let mut t = target(
        Goal::Speed,
        vec![variant(BASELINE, Role::Baseline, &[2.0], 1, true)],
    );
    t.metrics = ok;
    assert!(crate::json::to_pretty(&t, RESULTS_REL_PATH).is_ok());
    t.metrics.best_speedup = Some(f64::NAN.into());
    let e = crate::json::to_pretty(&t, RESULTS_REL_PATH).unwrap_err();
    assert_eq!(
        e.to_string(),
        "results/benchmark_test_results.json: invalid JSON: refusing to write non-finite number NaN"
    );
}

#[test]
fn a_sample_takes_at_most_its_share_of_a_results_file() {
    // The longest samples in range, serialized as a target of the results file is: the file nests
    // a target two levels deeper (`targets: [ ... ]`), 4 more spaces of indentation per sample.
    let worst = [2.2250738585072014e-308, 5e-324, 86_399_999.999_999_99];
    let size = |samples: &[f64]| {
        let t = target(
            Goal::Speed,
            vec![variant(BASELINE, Role::Baseline, samples, 1, true)],
        );
        crate::json::to_pretty(&t, RESULTS_REL_PATH).unwrap().len() as u64
    };
    let per_sample = (size(&[worst, worst].concat()) - size(&worst)) / worst.len() as u64 + 4;
    assert!(
        per_sample <= crate::bench::limits::SAMPLE_MAX_BYTES,
        "{per_sample} bytes per sample"
    );
}

#[test]
fn the_peak_class_is_written_in_snake_case_and_omitted_when_absent() {
    let mut t = target(Goal::Speed, Vec::new());
    let json = serde_json::to_value(&t).unwrap();
    assert!(json.get("peak_class").is_none(), "absent when None: {json}");
    for (class, text) in [
        (PeakClass::Fp32, "fp32"),
        (PeakClass::Bf16Tensor, "bf16_tensor"),
        (PeakClass::Memory, "memory"),
    ] {
        t.peak_class = Some(class);
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["peak_class"], text);
        let back: TargetResult = serde_json::from_value(json).unwrap();
        assert_eq!(back.peak_class, Some(class));
    }
}
