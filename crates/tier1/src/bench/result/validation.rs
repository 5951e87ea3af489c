//! [`validate`]: a results file checked against its own samples and the derivation.

use super::derived::derive;
use super::error::{ResultError, invalid};
use super::format::{Metrics, RESULTS_SCHEMA_MIN, RESULTS_SCHEMA_VERSION, ResultsFile, Role};
use crate::bench::estimate::Estimator;
use crate::bench::stats::Stats;

/// Check the file: schema, names, finite samples, statistics equal to a recomputation from the
/// samples, and stored verdicts equal to `derive()`. A file that fails is not a usable result.
pub fn validate(r: &ResultsFile) -> Result<(), ResultError> {
    let file = "benchmark_test_results.json";
    if !(RESULTS_SCHEMA_MIN..=RESULTS_SCHEMA_VERSION).contains(&r.schema_version) {
        return Err(invalid(
            format!("{file}: schema_version"),
            format!(
                "expected {RESULTS_SCHEMA_MIN} to {RESULTS_SCHEMA_VERSION}, found {}",
                r.schema_version
            ),
        ));
    }
    if !crate::fsx::is_safe_run_id(&r.run_id) {
        return Err(invalid(
            format!("{file}: run_id"),
            format!("{:?} is not a safe run id", r.run_id),
        ));
    }
    if chrono::DateTime::parse_from_rfc3339(&r.timestamp).is_err() {
        return Err(invalid(
            format!("{file}: timestamp"),
            format!("expected RFC 3339, found {:?}", r.timestamp),
        ));
    }
    if !r.min_speedup.is_finite() || r.min_speedup < 0.0 {
        return Err(invalid(
            format!("{file}: min_speedup"),
            format!("expected a finite number >= 0, found {}", r.min_speedup),
        ));
    }
    let mut keys = std::collections::BTreeSet::new();
    for t in &r.targets {
        let what = format!("{file}: targets[{}]", t.key);
        if !keys.insert(t.key.as_str()) {
            return Err(invalid(what, "duplicate target key"));
        }
        for (k, p) in &t.artifacts {
            if !is_artifact_key(k) || crate::fsx::safe_relative_parts(p).is_none() {
                return Err(invalid(
                    format!("{what}.artifacts.{k}"),
                    format!(
                        "expected a key ending in _rep/_trace/_json and a safe relative path, found {p:?}"
                    ),
                ));
            }
        }
        for (i, v) in t.variants.iter().enumerate() {
            let vw = format!("{what}.variants[{i}] ({})", v.name);
            let expect_role = if i == 0 {
                Role::Baseline
            } else {
                Role::Optimized
            };
            if v.role != expect_role {
                return Err(invalid(
                    vw,
                    format!("expected role {expect_role:?}, found {:?}", v.role),
                ));
            }
            if v.repetitions == 0 {
                return Err(invalid(
                    format!("{vw}.repetitions"),
                    "expected at least 1 execution per sample, found 0",
                ));
            }
            match Stats::of(&v.samples_ms) {
                None => {
                    return Err(invalid(
                        format!("{vw}.samples_ms"),
                        "expected at least one finite, non-negative sample",
                    ));
                }
                Some(s) if s != v.stats => {
                    return Err(invalid(
                        format!("{vw}.stats"),
                        "stored statistics differ from those of samples_ms",
                    ));
                }
                Some(_) => {}
            }
        }
        let (s, msg, m) = derive(
            t,
            r.min_speedup.get(),
            Estimator::for_schema(r.schema_version),
        );
        if s != t.status || msg != t.message || m != t.metrics {
            let (field, stored, derived) = if s != t.status {
                ("status", format!("{:?}", t.status), format!("{s:?}"))
            } else if msg != t.message {
                ("message", format!("{:?}", t.message), format!("{msg:?}"))
            } else {
                let json = |x: &Metrics| serde_json::to_string(x).unwrap_or_default();
                ("metrics", json(&t.metrics), json(&m))
            };
            return Err(invalid(
                format!("{what}.{field}"),
                format!(
                    "the stored {field} differs from the one derived from its samples: stored {stored}, derived {derived}"
                ),
            ));
        }
    }
    Ok(())
}

fn is_artifact_key(k: &str) -> bool {
    k.ends_with("_rep") || k.ends_with("_trace") || k.ends_with("_json")
}
