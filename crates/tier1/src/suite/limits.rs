//! The ranges a suite's values must lie in, so that every value a suite is accepted with is safe to
//! use: durations that cannot overflow a clock, counts that cannot exhaust memory, shapes with a
//! documented maximum, and free text small enough that no history package it is copied into can
//! outgrow the archive caps restore applies (docs/suite.md, "Limits"). The file itself is read with
//! a size limit and must be UTF-8.

use super::{Suite, SuiteError};
use std::io::Read;
use std::path::Path;

/// Largest suite file read, in bytes.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;
/// Longest name (suite, target key, category, profile, shape parameter), in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 64;
/// Longest target string and history root, in bytes.
pub(crate) const MAX_PATH_BYTES: usize = 256;
/// Longest free text (descriptions, rationale), in bytes: each is copied into every summary.
pub(crate) const MAX_TEXT_BYTES: usize = 4096;
/// Most targets.
pub(crate) const MAX_TARGETS: usize = 64;
/// Most profiles.
pub(crate) const MAX_PROFILES: usize = 32;
/// Most shape parameters of one target under one profile.
pub(crate) const MAX_SHAPE_PARAMS: usize = 32;
/// Largest shape value (the built-in targets index with 32-bit integers on the GPU); the memory a
/// shape needs is also checked against the machine before anything is allocated.
pub(crate) const MAX_SHAPE_VALUE: u64 = (1 << 31) - 1;
/// Most arguments of a command target.
pub(crate) const MAX_COMMAND_ARGS: usize = 256;
/// Longest argument of a command target, in bytes (Linux refuses longer ones, 128 KiB, to exec).
pub(crate) const MAX_ARG_BYTES: usize = 65_536;
/// Longest `timeout_s` and `budget_s`: one day.
pub(crate) const MAX_SECONDS: u64 = 86_400;
/// Most warm-up executions, timed rounds (`iterations`, `max_rounds`).
pub(crate) const MAX_ROUNDS: u32 = 1_000_000;
/// Longest `min_sample_ms`: one minute.
pub(crate) const MAX_SAMPLE_MS: f64 = 60_000.0;
/// Largest `precision_pct`.
pub(crate) const MAX_PRECISION_PCT: f64 = 1000.0;
/// Largest threshold (percent, points, ratios, counts of prior runs, robust deviations).
pub(crate) const MAX_THRESHOLD: f64 = 1e6;
/// Longest `history_window` and `anchor_outlier_min_runs`.
pub(crate) const MAX_WINDOW: u32 = 10_000;

/// Read a suite file: at most [`MAX_FILE_BYTES`] bytes (a device such as `/dev/zero` included),
/// and UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String, SuiteError> {
    let shown = path.display().to_string();
    let io = |source| SuiteError::Io {
        path: shown.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(SuiteError::Parse {
            path: shown,
            message: format!(
                "the file is larger than {MAX_FILE_BYTES} bytes: expected a suite file of at most that size"
            ),
        });
    }
    String::from_utf8(bytes).map_err(|e| SuiteError::Parse {
        path: shown,
        message: format!(
            "not UTF-8 text: invalid byte at offset {}: expected a UTF-8 YAML file",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// A value out of range: the field (a dotted path) and the message.
pub(crate) type OutOfRange = (String, String);

fn text(at: &str, v: &str, max: usize) -> Result<(), OutOfRange> {
    if v.len() > max {
        return Err((
            at.to_string(),
            format!("expected at most {max} bytes, found {}", v.len()),
        ));
    }
    Ok(())
}

fn count(at: &str, n: usize, max: usize, what: &str) -> Result<(), OutOfRange> {
    if n > max {
        return Err((
            at.to_string(),
            format!("expected at most {max} {what}, found {n}"),
        ));
    }
    Ok(())
}

fn at_most<T: PartialOrd + std::fmt::Display>(at: &str, v: T, max: T) -> Result<(), OutOfRange> {
    if v > max {
        return Err((at.to_string(), format!("expected at most {max}, found {v}")));
    }
    Ok(())
}

/// Check every size and number of `suite` against the limits above.
pub(crate) fn check(suite: &Suite) -> Result<(), OutOfRange> {
    text("suite_name", &suite.suite_name, MAX_NAME_BYTES)?;
    text("description", &suite.description, MAX_TEXT_BYTES)?;
    text("history_root", &suite.history_root, MAX_PATH_BYTES)?;
    text("default_profile", &suite.default_profile, MAX_NAME_BYTES)?;
    count("targets", suite.targets.len(), MAX_TARGETS, "targets")?;
    count("profiles", suite.profiles.len(), MAX_PROFILES, "profiles")?;
    for (i, t) in suite.targets.iter().enumerate() {
        let at = |f: &str| format!("targets.{i}.{f}");
        text(&at("key"), &t.key, MAX_NAME_BYTES)?;
        text(&at("target"), &t.target, MAX_PATH_BYTES)?;
        text(&at("category"), &t.category, MAX_NAME_BYTES)?;
        text(&at("rationale"), &t.rationale, MAX_TEXT_BYTES)?;
        count(
            &at("command"),
            t.command.len(),
            MAX_COMMAND_ARGS,
            "arguments",
        )?;
        for (j, arg) in t.command.iter().enumerate() {
            text(&at(&format!("command.{j}")), arg, MAX_ARG_BYTES)?;
        }
        if let Some(v) = t.precision_pct {
            at_most(&at("precision_pct"), v, MAX_PRECISION_PCT)?;
        }
        if let Some(v) = t.budget_s {
            at_most(&at("budget_s"), v, MAX_SECONDS as f64)?;
        }
        if let Some(v) = t.min_sample_ms {
            at_most(&at("min_sample_ms"), v, MAX_SAMPLE_MS)?;
        }
        if let Some(o) = &t.thresholds {
            for (name, v) in o.fields() {
                at_most(&at(&format!("thresholds.{name}")), v, MAX_THRESHOLD)?;
            }
        }
        for (profile, shapes) in &t.shapes {
            let at = |f: &str| format!("targets.{i}.shapes.{profile}{f}");
            count(&at(""), shapes.len(), MAX_SHAPE_PARAMS, "parameters")?;
            for (name, v) in shapes {
                text(&at(&format!(".{name}")), name, MAX_NAME_BYTES)?;
                at_most(&at(&format!(".{name}")), *v, MAX_SHAPE_VALUE)?;
            }
        }
    }
    for (name, p) in &suite.profiles {
        let at = |f: &str| format!("profiles.{name}.{f}");
        text(&format!("profiles.{name}"), name, MAX_NAME_BYTES)?;
        text(&at("description"), &p.description, MAX_TEXT_BYTES)?;
        at_most(&at("warmup"), p.warmup, MAX_ROUNDS)?;
        at_most(&at("iterations"), p.iterations, MAX_ROUNDS)?;
        at_most(&at("max_rounds"), p.max_rounds, MAX_ROUNDS)?;
        at_most(&at("timeout_s"), p.timeout_s, MAX_SECONDS)?;
        at_most(&at("budget_s"), p.budget_s, MAX_SECONDS as f64)?;
        at_most(&at("min_sample_ms"), p.min_sample_ms, MAX_SAMPLE_MS)?;
        if let Some(v) = p.precision_pct {
            at_most(&at("precision_pct"), v, MAX_PRECISION_PCT)?;
        }
    }
    let t = &suite.thresholds;
    for (name, v) in t.numbers() {
        at_most(&format!("thresholds.{name}"), v, MAX_THRESHOLD)?;
    }
    at_most("thresholds.history_window", t.history_window, MAX_WINDOW)?;
    at_most(
        "thresholds.anchor_outlier_min_runs",
        t.anchor_outlier_min_runs,
        MAX_WINDOW,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::EMBEDDED_TIER1_YAML;

    fn with(replace: &str, by: &str) -> String {
        assert!(EMBEDDED_TIER1_YAML.contains(replace), "{replace}");
        Suite::parse(&EMBEDDED_TIER1_YAML.replacen(replace, by, 1), "t.yaml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn values_that_would_overflow_or_exhaust_are_refused_at_their_field() {
        for (from, to, field) in [
            (
                "timeout_s: 600",
                "timeout_s: 18446744073709551615",
                "profiles.cpu.timeout_s",
            ),
            ("budget_s: 20", "budget_s: 1e308", "profiles.cpu.budget_s"),
            (
                "  - key: block_scaling\n",
                "  - key: block_scaling\n    precision_pct: 1e6\n    budget_s: 1e308\n",
                "targets.0.precision_pct",
            ),
            (
                "  - key: block_scaling\n",
                "  - key: block_scaling\n    budget_s: 1e308\n",
                "targets.0.budget_s",
            ),
            (
                "  - key: block_scaling\n",
                "  - key: block_scaling\n    thresholds: { speedup_regression_pct: 1e300 }\n",
                "targets.0.thresholds.speedup_regression_pct",
            ),
            (
                "max_rounds: 200\n",
                "max_rounds: 4000000000\n",
                "profiles.smoke.max_rounds",
            ),
            (
                "precision_pct: 25.0",
                "precision_pct: 1001",
                "profiles.smoke.precision_pct",
            ),
            (
                "min_speedup: 1.05",
                "min_speedup: 1e300",
                "thresholds.min_speedup",
            ),
            (
                "smoke: { m: 64, n: 64, k: 128 }",
                "smoke: { m: 64, n: 64, k: 100000000000 }",
                "targets.0.shapes.smoke.k",
            ),
        ] {
            let e = with(from, to);
            assert!(
                e.contains(field) && e.contains("expected at most"),
                "{to}: {e}"
            );
            assert!(e.starts_with("t.yaml: line "), "names the line: {e}");
        }
        let long = format!("rationale: {}", "r".repeat(MAX_TEXT_BYTES + 1));
        let e = with(
            "rationale: Blackwell block-scaled GEMM with explicit baseline/optimized verification.",
            &long,
        );
        assert!(
            e.contains("targets.0.rationale: expected at most 4096 bytes, found 4097"),
            "{e}"
        );
    }

    #[test]
    fn a_suite_file_is_read_with_a_limit_and_as_utf8() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("larger than 1048576 bytes"), "{e}");
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.yaml");
        std::fs::write(&p, b"suite_name: caf\xe9\n").unwrap();
        let e = read_text(&p).unwrap_err();
        assert!(
            e.to_string()
                .contains("not UTF-8 text: invalid byte at offset 15"),
            "{e}"
        );
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
        let e = Suite::load(&t.path().join("absent.yaml")).unwrap_err();
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Io);
    }
}
