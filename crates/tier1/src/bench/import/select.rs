//! The flags tier1 adds to a tool's own command (pytest-benchmark, Google Benchmark), after the
//! suite's, so they win where the tool takes the last value of a flag: every invocation runs only
//! the benchmarks the target names ([`selection`]: pytest's `-k`, Google Benchmark's
//! `--benchmark_filter`) on the profile's clock ([`command_flags`]), and a side-by-side invocation is a short pass sized to the comparison's
//! budget ([`short_pass`]: a few repetitions of a fraction of a second each), because each of its
//! rounds runs the tool once per build. Other tools, and names a filter cannot express exactly,
//! get no flag: the tool then runs as the suite says.

use crate::suite::{Clock, OutputFormat, Target};

/// The benchmark names a target's `variants` give, baseline first.
fn names(t: &Target) -> Vec<&str> {
    t.variants
        .iter()
        .flat_map(|m| std::iter::once(&m.baseline).chain(&m.optimized))
        .map(String::as_str)
        .collect()
}

/// The flags every invocation of a tool's command gets: its benchmarks only ([`selection`]) and
/// the profile's clock (pytest-benchmark times with `time.process_time` under `clock: cpu`;
/// Google Benchmark reports both times and the importer picks).
pub(crate) fn command_flags(t: &Target, clock: Clock) -> Vec<String> {
    let mut flags = selection(t);
    if t.format == OutputFormat::PytestBenchmark && clock == Clock::Cpu {
        flags.push("--benchmark-timer=time.process_time".into());
    }
    flags
}

/// The flags that make the tool run only the target's benchmarks (empty: run as written).
fn selection(t: &Target) -> Vec<String> {
    let names = names(t);
    if names.is_empty() {
        return Vec::new();
    }
    match t.format {
        OutputFormat::PytestBenchmark => pytest_keywords(&names)
            .map(|k| vec!["-k".to_string(), k])
            .unwrap_or_default(),
        OutputFormat::GoogleBenchmark => {
            let alternatives: Vec<String> = names.iter().map(|n| regex_escape(n)).collect();
            vec![format!("--benchmark_filter=^({})$", alternatives.join("|"))]
        }
        _ => Vec::new(),
    }
}

/// pytest's `-k` expression selecting the tests named (a `fullname`'s last `::` part is the
/// test's name): `test_a or test_b[1000]`. A keyword matches every test whose name contains it,
/// so at least the named tests run. `None` when a name holds a character the expression cannot
/// carry (pytest's identifiers: letters, digits, `_ : + - . [ ] \ /`) or is one of its words.
fn pytest_keywords(names: &[&str]) -> Option<String> {
    let mut keys: Vec<&str> = Vec::new();
    for full in names {
        let name = full.rsplit("::").next().unwrap_or(full);
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || ":+-.[]\\/".contains(c))
            && !["or", "and", "not", "True", "False", "None"].contains(&name);
        if !ok {
            return None;
        }
        if !keys.contains(&name) {
            keys.push(name);
        }
    }
    Some(keys.join(" or "))
}

/// `name` as a POSIX extended regular expression matching exactly it.
fn regex_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\.[]{}()*+?^$|".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Fewest rounds of a side-by-side comparison (its first look, `Budget::for_settings`), each two
/// invocations: the short pass is sized so that they fit the comparison's seconds.
const FIRST_LOOK_ROUNDS: f64 = 10.0;
/// Share of an invocation's seconds left to the tool's own start (interpreter, collection).
const MEASURED_SHARE: f64 = 0.5;
/// Bounds of one benchmark's seconds in a short pass.
const SHORT_PASS_SECONDS: (f64, f64) = (0.01, 0.5);

/// The flags that make one side-by-side invocation of the tool a short pass: `repetitions`
/// samples per benchmark (Google Benchmark's repetitions; pytest-benchmark's minimum rounds), and
/// each benchmark's seconds so that two invocations per round for the first look's rounds take
/// about `budget_s` (half of it measuring, the rest left to the tool's start). Empty for a tool
/// whose flags cannot be overridden this way: it runs as the suite says.
pub(crate) fn short_pass(t: &Target, repetitions: u32, budget_s: f64) -> Vec<String> {
    let benchmarks = names(t).len().max(1) as f64;
    let per_invocation = budget_s / (2.0 * FIRST_LOOK_ROUNDS) * MEASURED_SHARE;
    let (lo, hi) = SHORT_PASS_SECONDS;
    let seconds = (per_invocation / benchmarks).clamp(lo, hi);
    match t.format {
        OutputFormat::GoogleBenchmark => vec![
            format!("--benchmark_repetitions={repetitions}"),
            // Per repetition; a bare number of seconds is read by every version (1.8 and newer
            // also take `0.05s`).
            format!(
                "--benchmark_min_time={}",
                seconds_text(seconds / f64::from(repetitions.max(1)))
            ),
        ],
        OutputFormat::PytestBenchmark => vec![
            format!("--benchmark-min-rounds={repetitions}"),
            format!("--benchmark-max-time={}", seconds_text(seconds)),
        ],
        _ => Vec::new(),
    }
}

/// Seconds as a short decimal (`0.0833`), never in exponent notation.
fn seconds_text(s: f64) -> String {
    let text = format!("{s:.4}");
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Suite, TargetKind, VariantMap};

    fn target(format: OutputFormat, baseline: &str, optimized: &[&str]) -> Target {
        let mut t = Suite::embedded().targets[0].clone();
        t.kind = TargetKind::Command;
        t.format = format;
        t.variants = Some(VariantMap {
            baseline: baseline.into(),
            optimized: optimized.iter().map(|s| s.to_string()).collect(),
        });
        t
    }

    #[test]
    fn pytest_runs_only_the_named_tests() {
        let t = target(
            OutputFormat::PytestBenchmark,
            "bench/test_sort.py::test_sort_insertion",
            &["test_sort_builtin[1000]", "test_sort_insertion"],
        );
        assert_eq!(
            selection(&t),
            ["-k", "test_sort_insertion or test_sort_builtin[1000]"]
        );
        // A parameter id with a space cannot be written in `-k`: the tool runs as written.
        let t = target(OutputFormat::PytestBenchmark, "test_x[a b]", &[]);
        assert!(selection(&t).is_empty());
        let t = target(OutputFormat::PytestBenchmark, "test_x[a,b]", &[]);
        assert!(selection(&t).is_empty());
    }

    #[test]
    fn google_benchmark_runs_only_the_named_benchmarks_by_exact_name() {
        let t = target(
            OutputFormat::GoogleBenchmark,
            "BM_Sort/1024",
            &["BM_Fast<int>/8/repeats:3", "BM_a.b"],
        );
        assert_eq!(
            selection(&t),
            ["--benchmark_filter=^(BM_Sort/1024|BM_Fast<int>/8/repeats:3|BM_a\\.b)$"]
        );
    }

    #[test]
    fn pytest_times_the_process_cpu_under_clock_cpu() {
        let t = target(OutputFormat::PytestBenchmark, "test_a", &[]);
        assert_eq!(command_flags(&t, Clock::Wall), ["-k", "test_a"]);
        assert_eq!(
            command_flags(&t, Clock::Cpu),
            ["-k", "test_a", "--benchmark-timer=time.process_time"]
        );
        let gb = target(OutputFormat::GoogleBenchmark, "BM_A", &[]);
        assert_eq!(command_flags(&gb, Clock::Cpu), selection(&gb));
    }

    #[test]
    fn other_tools_and_tier1_documents_get_no_flags() {
        for format in [
            OutputFormat::Hyperfine,
            OutputFormat::Criterion,
            OutputFormat::Nvbench,
        ] {
            let t = target(format, "a", &["b"]);
            assert!(command_flags(&t, Clock::Cpu).is_empty(), "{format:?}");
            assert!(short_pass(&t, 3, 10.0).is_empty(), "{format:?}");
        }
        let mut t = target(OutputFormat::Tier1, "a", &[]);
        t.variants = None;
        assert!(selection(&t).is_empty());
        assert!(short_pass(&t, 3, 10.0).is_empty());
    }

    #[test]
    fn a_short_pass_fits_the_first_look_in_the_budget() {
        // 10 s for 10 rounds of two invocations: 0.5 s each, half of it measuring, for two
        // benchmarks: 0.125 s each, in 3 repetitions of about 0.0417 s.
        let gb = target(OutputFormat::GoogleBenchmark, "BM_A", &["BM_B"]);
        assert_eq!(
            short_pass(&gb, 3, 10.0),
            ["--benchmark_repetitions=3", "--benchmark_min_time=0.0417"]
        );
        let py = target(OutputFormat::PytestBenchmark, "test_a", &["test_b"]);
        assert_eq!(
            short_pass(&py, 3, 10.0),
            ["--benchmark-min-rounds=3", "--benchmark-max-time=0.125"]
        );
        // Bounded: never less than 10 ms of a benchmark, never more than half a second.
        assert_eq!(
            short_pass(&py, 3, 0.1),
            ["--benchmark-min-rounds=3", "--benchmark-max-time=0.01"]
        );
        assert_eq!(
            short_pass(&py, 3, 3600.0),
            ["--benchmark-min-rounds=3", "--benchmark-max-time=0.5"]
        );
    }
}
