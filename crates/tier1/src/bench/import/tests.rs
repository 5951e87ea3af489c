//! Unit tests of `import`, on outputs the real tools wrote (tests/fixtures/importers/README.md
//! says how each was made).
use super::variants::measured;
use super::*;
use crate::suite::{Clock, Goal, OutputFormat, Suite, TargetKind, VariantMap};
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
            clock: Clock::Wall,
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
    let all = google_benchmark::parse(doc, Clock::Wall).unwrap();
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
        Clock::Wall,
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
        clock: Clock::Wall,
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

/// Under the profile's `clock: cpu` each repetition's `cpu_time` is the sample (a benchmark that
/// chose real or manual time keeps it). The fixture was written by Google Benchmark on a loaded
/// machine: its `real_time`s spread by a quarter, its `cpu_time`s by a few percent, and the
/// pair's interval from the CPU times is as tight as the tool's own repetitions show (within 2x
/// of the interval of the ratio of the two benchmarks' means, from their spread alone). Before,
/// `real_time` was read whatever the clock: the pair's interval was many times wider.
#[test]
fn google_benchmark_cpu_time_is_the_sample_under_clock_cpu_and_the_pair_is_as_precise_as_the_tool()
{
    let path = fixture("google-benchmark/output.json");
    let bytes = std::fs::read(&path).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let times = |name: &str, field: &str| -> Vec<f64> {
        doc["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["run_name"] == name && b["run_type"] == "iteration")
            .map(|b| b[field].as_f64().unwrap() * 1e-6)
            .collect()
    };
    let all = google_benchmark::parse(&bytes, Clock::Cpu).unwrap();
    let (base, opt) = (get(&all, "sum_loop"), get(&all, "sum_builtin"));
    assert_eq!(base.samples_ms, times("sum_loop", "cpu_time"));
    assert_eq!(opt.samples_ms, times("sum_builtin", "cpu_time"));
    let tool_half_width_pct = |b: &[f64], o: &[f64]| {
        let cv2 = |x: &[f64]| {
            let m = crate::stats::mean(x).unwrap();
            crate::stats::sample_variance(x).unwrap() / (m * m) / x.len() as f64
        };
        1.96 * (cv2(b) + cv2(o)).sqrt() * 100.0
    };
    let tool = tool_half_width_pct(&base.samples_ms, &opt.samples_ms);
    let ours = crate::bench::estimate::pair(&base.samples_ms, &opt.samples_ms)
        .unwrap()
        .speedup_half_width_pct()
        .unwrap();
    assert!(
        ours <= 2.0 * tool,
        "cpu_time: the pair's interval ±{ours:.2} % against the tool's ±{tool:.2} %"
    );
    let wall = google_benchmark::parse(&bytes, Clock::Wall).unwrap();
    let (wb, wo) = (get(&wall, "sum_loop"), get(&wall, "sum_builtin"));
    let wall_pct = crate::bench::estimate::pair(&wb.samples_ms, &wo.samples_ms)
        .unwrap()
        .speedup_half_width_pct()
        .unwrap();
    assert!(
        wall_pct > 4.0 * ours,
        "the fixture's wall times are the noisy ones: ±{wall_pct:.2} % against ±{ours:.2} %"
    );
    // A benchmark that asked for real (or manual, a device's) time keeps its real_time.
    let chose = br#"{"benchmarks": [
        {"name": "BM_gpu/manual_time", "run_name": "BM_gpu/manual_time", "run_type": "iteration", "real_time": 2.0, "cpu_time": 9.0, "time_unit": "ms"},
        {"name": "BM_io/real_time", "run_name": "BM_io/real_time", "run_type": "iteration", "real_time": 3.0, "cpu_time": 0.1, "time_unit": "ms"},
        {"name": "BM_cpu", "run_name": "BM_cpu", "run_type": "iteration", "real_time": 5.0, "cpu_time": 4.0, "time_unit": "ms"}]}"#;
    let all = google_benchmark::parse(chose, Clock::Cpu).unwrap();
    assert_eq!(get(&all, "BM_gpu/manual_time").samples_ms, [2.0]);
    assert_eq!(get(&all, "BM_io/real_time").samples_ms, [3.0]);
    assert_eq!(get(&all, "BM_cpu").samples_ms, [4.0]);
}
