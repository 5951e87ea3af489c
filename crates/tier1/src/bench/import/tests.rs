//! Unit tests of `import`, on outputs the real tools wrote (tests/fixtures/importers/README.md
//! says how each was made).
use super::*;
use crate::suite::{Goal, Suite, TargetKind, VariantMap};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/importers")
        .join(rel)
}

fn read(format: OutputFormat, rel: &str) -> Vec<Measured> {
    let path = fixture(rel);
    let bytes = if path.is_file() {
        std::fs::read(&path).unwrap()
    } else {
        Vec::new()
    };
    let dir = path.parent().unwrap().to_path_buf();
    measured(
        format,
        ToolOutput {
            document: &bytes,
            dir: &dir,
            criterion_home: &path,
        },
    )
    .unwrap()
}

fn get<'a>(all: &'a [Measured], name: &str) -> &'a Measured {
    all.iter()
        .find(|m| m.is(name))
        .unwrap_or_else(|| panic!("{name} in {all:?}"))
}

fn plausible(m: &Measured, count: usize, lo_ms: f64, hi_ms: f64) {
    assert_eq!(m.error, None, "{m:?}");
    assert_eq!(m.samples_ms.len(), count, "{m:?}");
    assert!(
        m.samples_ms.iter().all(|s| *s > lo_ms && *s < hi_ms),
        "{}: samples outside ({lo_ms}, {hi_ms}) ms: {:?}",
        m.name,
        m.samples_ms
    );
}

#[test]
fn pytest_benchmark_rounds_are_samples_in_ms() {
    let all = read(
        OutputFormat::PytestBenchmark,
        "pytest-benchmark/output.json",
    );
    let sorted = get(&all, "test_sorted");
    assert_eq!(sorted.alias.as_deref(), Some("test_sort.py::test_sorted"));
    plausible(sorted, 6, 0.01, 50.0);
    let bubble = get(&all, "test_sort.py::test_bubble");
    assert!(bubble.samples_ms.len() >= 6);
    // The bubble sort of 200 values is slower than sorted() of 2000.
    let median = |m: &Measured| crate::stats::median(&m.samples_ms).unwrap();
    assert!(median(bubble) > median(sorted));
}

#[test]
fn google_benchmark_repetitions_are_samples_and_aggregates_are_ignored() {
    let all = read(
        OutputFormat::GoogleBenchmark,
        "google-benchmark/output.json",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    plausible(get(&all, "sum_loop"), 6, 0.0005, 50.0);
    plausible(get(&all, "sum_builtin"), 6, 0.0001, 50.0);
    let doc = br#"{"benchmarks": [
        {"name": "BM_x_mean", "run_name": "BM_x", "run_type": "aggregate", "real_time": 1.0, "time_unit": "us"},
        {"name": "BM_y", "run_name": "BM_y", "run_type": "iteration", "error_occurred": true, "error_message": "CUDA OOM"},
        {"name": "BM_z", "run_type": "iteration", "real_time": 2.0, "time_unit": "s"}]}"#;
    let all = google_benchmark::parse(doc).unwrap();
    assert!(
        get(&all, "BM_x")
            .error
            .as_deref()
            .unwrap()
            .contains("aggregates_only")
    );
    assert!(
        get(&all, "BM_y")
            .error
            .as_deref()
            .unwrap()
            .contains("CUDA OOM")
    );
    assert_eq!(get(&all, "BM_z").samples_ms, [2000.0]);
    let e = google_benchmark::parse(
        br#"{"benchmarks": [{"name": "a", "real_time": 1, "time_unit": "min"}]}"#,
    )
    .unwrap_err();
    assert!(e.contains("expected ns, us, ms or s, found \"min\""), "{e}");
}

#[test]
fn hyperfine_runs_are_samples_and_a_failed_run_fails() {
    let all = read(OutputFormat::Hyperfine, "hyperfine/output.json");
    plausible(get(&all, "sleep 0.01"), 6, 9.0, 200.0);
    plausible(get(&all, "sleep 0.02"), 6, 19.0, 200.0);
    let doc = br#"{"results": [{"command": "false", "times": [0.001], "exit_codes": [1]}]}"#;
    let all = hyperfine::parse(doc).unwrap();
    assert_eq!(
        get(&all, "false").error.as_deref(),
        Some("a run exited with 1")
    );
}

#[test]
fn criterion_samples_are_time_per_iteration() {
    let all = read(OutputFormat::Criterion, "criterion/home");
    assert_eq!(all.len(), 2, "{all:?}");
    plausible(get(&all, "sum/loop"), 10, 0.0001, 10.0);
    plausible(get(&all, "sum/iter"), 10, 0.0001, 10.0);
    let empty = tempfile::tempdir().unwrap();
    let e = criterion::scan(empty.path()).unwrap_err();
    assert!(e.contains("criterion wrote no results"), "{e}");
}

#[test]
fn nvbench_states_are_named_benchmark_slash_state() {
    let all = read(OutputFormat::Nvbench, "nvbench/axes.json");
    let simple = get(&all, "simple/Device=0");
    assert_eq!(simple.error, None);
    // The state's mean cold GPU time, 0.0010034715849794225 s, is this invocation's sample.
    assert_eq!(simple.samples_ms.len(), 1);
    assert!((simple.samples_ms[0] - 1.0034715849794225).abs() < 1e-12);
    assert!(
        all.iter()
            .any(|m| m.name == "single_float64_axis/Device=0 Duration=0.0001")
    );
    assert!(all.iter().filter(|m| m.name.starts_with("simple/")).count() == 2);
}

#[test]
fn nvbench_sample_files_are_read_from_the_output_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("output.json-bin")).unwrap();
    let times: Vec<u8> = [0.001f32, 0.002, 0.003]
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    std::fs::write(dir.path().join("output.json-bin/0.bin"), times).unwrap();
    let doc = |file: &str| {
        format!(
            r#"{{"benchmarks": [{{"name": "copy", "states": [{{"name": "Device=0", "is_skipped": false,
            "summaries": [{{"tag": "nv/json/bin:nv/cold/sample_times", "data": [
              {{"name": "filename", "type": "string", "value": "{file}"}},
              {{"name": "size", "type": "int64", "value": "3"}}]}}]}}]}}]}}"#
        )
    };
    let all = nvbench::parse(doc("output.json-bin/0.bin").as_bytes(), dir.path()).unwrap();
    let copy = get(&all, "copy");
    assert_eq!(copy.samples_ms.len(), 3);
    assert!((copy.samples_ms[1] - 2.0).abs() < 1e-6, "{copy:?}");
    let all = nvbench::parse(doc("../../etc/passwd").as_bytes(), dir.path()).unwrap();
    let e = get(&all, "copy").error.clone().unwrap();
    assert!(
        e.contains("is not a file inside the output directory"),
        "{e}"
    );
    // More samples than a run may record (a 64 MiB file, sparse): refused by its size, unread.
    let big = std::fs::File::create(dir.path().join("output.json-bin/1.bin")).unwrap();
    big.set_len(64 << 20).unwrap();
    let all = nvbench::parse(doc("output.json-bin/1.bin").as_bytes(), dir.path()).unwrap();
    let e = get(&all, "copy").error.clone().unwrap();
    let cap = crate::bench::limits::MAX_JSONBIN_BYTES;
    assert!(
        e.contains(&format!(
            "expected a multiple of 4 bytes up to {cap}, found 67108864"
        )),
        "{e}"
    );
    assert_eq!(cap, 4 * crate::bench::limits::MAX_RUN_SAMPLES as u64);
}

fn target(
    format: OutputFormat,
    goal: Goal,
    baseline: &str,
    optimized: &[&str],
) -> crate::suite::Target {
    let mut t = Suite::embedded().targets[0].clone();
    t.kind = TargetKind::Command;
    t.command = vec!["tool".into()];
    t.format = format;
    t.optimization_goal = goal;
    t.variants = Some(VariantMap {
        baseline: baseline.into(),
        optimized: optimized.iter().map(|s| s.to_string()).collect(),
    });
    t
}

#[test]
fn the_suite_maps_tool_names_to_variants() {
    let path = fixture("google-benchmark/output.json");
    let bytes = std::fs::read(&path).unwrap();
    let dir = path.parent().unwrap();
    let out = ToolOutput {
        document: &bytes,
        dir,
        criterion_home: dir,
    };
    let t = target(
        OutputFormat::GoogleBenchmark,
        Goal::Speed,
        "sum_loop",
        &["sum_builtin"],
    );
    let v = variants(&t, out).unwrap();
    let names: Vec<&str> = v.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["baseline", "sum_builtin"]);
    let t = target(OutputFormat::GoogleBenchmark, Goal::Time, "BM_missing", &[]);
    let e = variants(&t, out).unwrap_err();
    assert!(
        e.contains("format google-benchmark: no benchmark named \"BM_missing\" in the output; it has 2: [\"sum_loop\", \"sum_builtin\"]"),
        "{e}"
    );
}
