//! The measurement settings of one target's row (`crate::history::settings`), from the results
//! file and the suite: what reaches the measured code and changes what it measures. For every
//! target its kind and shapes; for tier1's own measuring (built-in targets, `format: tier1`
//! commands, whose helpers get `TIER1_WARMUP` and `TIER1_MIN_SAMPLE_MS`) the warm-up and the
//! sample length; for a command its argv as the program gets it (`{rounds}` and `{warmup}`
//! filled in, `{output}` kept: a fresh path each time) and the suite's `build` step; for a
//! tool's output its format and the benchmarks named as variants. The precision, the budget and
//! the rounds are left out: they change how precise a measurement is, not what it measures. The
//! profile's clock is part of the environment, whose change refuses the comparison already.

use super::format::ResultsFile;
use crate::bench::invocation::{ROUNDS, WARMUP};
use crate::history::settings::MeasurementSettings;
use crate::suite::{Suite, Target, TargetKind};

/// The settings `r` measured target `t` (of `suite`) with.
pub(super) fn of(r: &ResultsFile, t: &Target, suite: &Suite) -> MeasurementSettings {
    let mut s = MeasurementSettings::default();
    s.set(
        "kind",
        match t.kind {
            TargetKind::Builtin => "builtin",
            TargetKind::Command => "command",
        }
        .into(),
    );
    let shapes = t.shapes.get(&r.profile).cloned().unwrap_or_default();
    s.set("shapes", json(&shapes));
    let tier1_measures = t.kind == TargetKind::Builtin || t.format.is_tier1();
    if tier1_measures {
        s.set("warmup", r.warmup.to_string());
        let min_sample_ms = suite
            .profile(&r.profile)
            .map(|p| suite.settings_for(p, t).min_sample_ms);
        if let Some(ms) = min_sample_ms {
            s.set("min_sample_ms", ms.to_string());
        }
    }
    if t.kind == TargetKind::Command {
        let argv: Vec<String> = t
            .command
            .iter()
            .map(|a| {
                a.replace(ROUNDS, &r.iterations.to_string())
                    .replace(WARMUP, &r.warmup.to_string())
            })
            .collect();
        s.set("command", json(&argv));
        if !suite.build.is_empty() {
            s.set("build", json(&suite.build));
        }
        if !tier1_measures {
            s.set("format", t.format.as_str().into());
            if let Some(v) = &t.variants {
                s.set("variants", json(v));
            }
        }
    }
    s
}

/// Compact JSON text of a setting's value (its canonical form).
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::ResultsFile;

    fn results(profile: &str) -> ResultsFile {
        serde_json::from_value(serde_json::json!({
            "schema_version": 3, "run_id": "r", "timestamp": "t", "suite_name": "tier1",
            "suite_version": 1, "profile": profile, "backend": "cpu",
            "environment": {"backend": "cpu", "device_names": []}, "seed": 42,
            "min_speedup": 1.05, "warmup": 5, "iterations": 12, "targets": []
        }))
        .expect("a results file")
    }

    #[test]
    fn a_tool_command_records_its_argv_as_run_format_and_names() {
        let mut suite = Suite::embedded();
        let mut t = suite.targets[0].clone();
        t.kind = TargetKind::Command;
        t.format = crate::suite::OutputFormat::GoogleBenchmark;
        t.command = vec![
            "./bench".into(),
            "--benchmark_repetitions={rounds}".into(),
            "--benchmark_out={output}".into(),
        ];
        t.variants = Some(crate::suite::VariantMap {
            baseline: "BM_A".into(),
            optimized: vec!["BM_B".into()],
        });
        suite.build = vec!["make".into()];
        let s = of(&results("cpu"), &t, &suite);
        assert_eq!(
            s.0["command"],
            r#"["./bench","--benchmark_repetitions=12","--benchmark_out={output}"]"#
        );
        assert_eq!(s.0["format"], "google-benchmark");
        assert_eq!(
            s.0["variants"],
            r#"{"baseline":"BM_A","optimized":["BM_B"]}"#
        );
        assert_eq!(s.0["build"], r#"["make"]"#);
        assert_eq!(s.0["kind"], "command");
        // The tool measures: tier1's warm-up and sample length do not reach it.
        assert!(
            !s.0.contains_key("warmup") && !s.0.contains_key("min_sample_ms"),
            "{s:?}"
        );
    }

    #[test]
    fn a_builtin_target_records_its_shapes_warmup_and_sample_length() {
        let suite = Suite::embedded();
        let t = &suite.targets[0];
        let s = of(&results("cpu"), t, &suite);
        assert_eq!(s.0["kind"], "builtin");
        assert_eq!(s.0["warmup"], "5");
        assert!(s.0["shapes"].starts_with('{'), "{s:?}");
        assert!(s.0.contains_key("min_sample_ms"), "{s:?}");
        assert!(!s.0.contains_key("command"), "{s:?}");
    }
}
