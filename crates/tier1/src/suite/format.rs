//! How a command target's output is read (`targets[].format`): tier1's own document, or the
//! output of a benchmarking tool the project already uses (pytest-benchmark, Google Benchmark,
//! criterion, hyperfine, nvbench), with `targets[].variants` naming which of the tool's
//! benchmarks is the baseline and which are optimized. The importers live in
//! `crate::bench::import`; this module holds the suite fields and their rules.

use super::{Goal, Target, TargetKind};
use serde::{Deserialize, Serialize};

/// The output format of a command target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum OutputFormat {
    /// A `tier1.command_result.v1` document (docs/command-targets.md).
    #[default]
    Tier1,
    /// pytest-benchmark's `--benchmark-json` file.
    PytestBenchmark,
    /// Google Benchmark's JSON (`--benchmark_format=json` or `--benchmark_out`), with repetitions.
    GoogleBenchmark,
    /// criterion's `<CRITERION_HOME>/<id>/new/{sample,benchmark}.json`.
    Criterion,
    /// hyperfine's `--export-json` file.
    Hyperfine,
    /// nvbench's `--json` file (with `--jsonbin` sample files when present).
    Nvbench,
}

impl OutputFormat {
    /// The suite spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Tier1 => "tier1",
            OutputFormat::PytestBenchmark => "pytest-benchmark",
            OutputFormat::GoogleBenchmark => "google-benchmark",
            OutputFormat::Criterion => "criterion",
            OutputFormat::Hyperfine => "hyperfine",
            OutputFormat::Nvbench => "nvbench",
        }
    }

    /// Whether this is the default (tier1's own document).
    pub(crate) fn is_tier1(&self) -> bool {
        *self == OutputFormat::Tier1
    }

    /// The floor (`min_optimized_time_delta_ms`) a target reading this format has when it sets
    /// none, where it is not the suite's: 0 ms for CPU tools, whose timers resolve nanoseconds
    /// and whose benchmarks often run in microseconds (issue 43: a +29 % slowdown of a 33 µs
    /// Google Benchmark pair was held by the 0.05 ms floor). The contract's 0.05 ms floor is for
    /// GPU kernel timings (CUDA events, launch overhead): tier1's own documents and nvbench keep
    /// the suite's.
    pub(crate) fn own_floor_ms(self) -> Option<f64> {
        match self {
            OutputFormat::PytestBenchmark
            | OutputFormat::GoogleBenchmark
            | OutputFormat::Criterion
            | OutputFormat::Hyperfine => Some(0.0),
            OutputFormat::Tier1 | OutputFormat::Nvbench => None,
        }
    }
}

/// Which of a tool's benchmarks are the target's variants (the names as the tool prints them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VariantMap {
    /// The baseline (for a single benchmark, its only variant).
    pub(crate) baseline: String,
    /// The optimized variants (none for a single benchmark).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) optimized: Vec<String>,
}

/// A tool's benchmark name as a tier1 variant name: every character outside `[A-Za-z0-9_.-]`
/// becomes `_` (`BM_Sort/1024` is `BM_Sort_1024`).
pub(crate) fn variant_name(tool_name: &str) -> String {
    tool_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The rules of `format` and `variants` for one target: a field (relative to the target) and
/// the message when broken.
pub(crate) fn check(t: &Target) -> Result<(), (&'static str, String)> {
    let key = &t.key;
    let Some(map) = &t.variants else {
        if !t.format.is_tier1() {
            return Err((
                "variants",
                format!(
                    "target {key:?}: format {} needs `variants` ({{ baseline: <benchmark name>, optimized: [<name>, ...] }}), found none",
                    t.format.as_str()
                ),
            ));
        }
        return Ok(());
    };
    if t.format.is_tier1() {
        return Err((
            "variants",
            format!(
                "target {key:?}: `variants` maps a tool's benchmarks and needs a `format` (pytest-benchmark, google-benchmark, criterion, hyperfine, nvbench), found format tier1"
            ),
        ));
    }
    if t.kind != TargetKind::Command {
        return Err((
            "format",
            format!("target {key:?}: `format` is only allowed with kind: command"),
        ));
    }
    let names = std::iter::once(&map.baseline).chain(&map.optimized);
    if let Some(empty) = names.clone().position(|n| n.trim().is_empty()) {
        return Err((
            "variants",
            format!("target {key:?}: variants: benchmark name {empty} is empty"),
        ));
    }
    match (t.optimization_goal, map.optimized.is_empty()) {
        (Goal::Time, false) => {
            return Err((
                "variants.optimized",
                format!(
                    "target {key:?}: optimization_goal time (a single benchmark) has only a baseline, found {} optimized: {:?}",
                    map.optimized.len(),
                    map.optimized
                ),
            ));
        }
        (Goal::Speed, true) => {
            return Err((
                "variants.optimized",
                format!(
                    "target {key:?}: optimization_goal speed compares a baseline with optimized variants, found none (for one benchmark, use optimization_goal: time)"
                ),
            ));
        }
        (Goal::Memory, _) => {
            return Err((
                "optimization_goal",
                format!(
                    "target {key:?}: format {} reports times only, found optimization_goal memory",
                    t.format.as_str()
                ),
            ));
        }
        _ => {}
    }
    let mut seen = std::collections::BTreeMap::new();
    for name in &map.optimized {
        let v = variant_name(name);
        if v == "baseline" {
            return Err((
                "variants.optimized",
                format!("target {key:?}: optimized benchmark {name:?} would be named \"baseline\""),
            ));
        }
        if let Some(first) = seen.insert(v.clone(), name) {
            return Err((
                "variants.optimized",
                format!(
                    "target {key:?}: optimized benchmarks {first:?} and {name:?} have the same variant name {v:?}"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::suite::Suite;

    /// A one-target suite whose target carries `extra` lines.
    fn suite(goal: &str, extra: &str) -> Result<Suite, String> {
        let text = format!(
            "suite_name: s\nversion: 1\ntargets:\n  - key: k\n    category: c\n    target: a:k\n    optimization_goal: {goal}\n    tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    kind: command\n    command: [tool]\n{extra}"
        );
        Suite::parse(&text, "s.yaml").map_err(|e| e.to_string())
    }

    #[test]
    fn formats_need_variants_that_fit_the_goal() {
        let s = suite(
            "speed",
            "    format: google-benchmark\n    variants: { baseline: BM_Ref/64, optimized: [BM_Fast/64] }\n",
        )
        .unwrap();
        let t = &s.targets[0];
        assert_eq!(t.format, super::OutputFormat::GoogleBenchmark);
        assert_eq!(
            super::variant_name(&t.variants.as_ref().unwrap().optimized[0]),
            "BM_Fast_64"
        );
        suite(
            "time",
            "    format: pytest-benchmark\n    variants: { baseline: test_a }\n",
        )
        .unwrap();
        for (goal, extra, want) in [
            (
                "speed",
                "    format: hyperfine\n",
                "format hyperfine needs `variants`",
            ),
            (
                "speed",
                "    variants: { baseline: a, optimized: [b] }\n",
                "needs a `format`",
            ),
            (
                "time",
                "    format: criterion\n    variants: { baseline: a, optimized: [b] }\n",
                "has only a baseline, found 1 optimized",
            ),
            (
                "speed",
                "    format: criterion\n    variants: { baseline: a }\n",
                "use optimization_goal: time",
            ),
            (
                "memory",
                "    format: nvbench\n    variants: { baseline: a, optimized: [b] }\n",
                "reports times only",
            ),
            (
                "speed",
                "    format: nvbench\n    variants: { baseline: a, optimized: [x/1, x_1] }\n",
                "have the same variant name \"x_1\"",
            ),
            (
                "speed",
                "    format: nvbench\n    variants: { baseline: a, optimized: [baseline] }\n",
                "would be named \"baseline\"",
            ),
            ("speed", "    format: bencher\n", "bencher"),
        ] {
            let e = suite(goal, extra).unwrap_err();
            assert!(e.contains(want) && e.contains("s.yaml"), "{extra}: {e}");
        }
    }
}
