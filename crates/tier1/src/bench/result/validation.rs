//! [`validate`]: a results file checked against its own samples and the derivation.

use super::derived::derive;
use super::error::{ResultError, invalid};
use super::format::{
    Metrics, RESULTS_SCHEMA_MIN, RESULTS_SCHEMA_VERSION, ResultsFile, Role, TargetResult,
    VariantResult,
};
use crate::bench::estimate::Estimator;
use crate::bench::stats::Stats;

/// Name of the file in error locations.
const FILE: &str = "benchmark_test_results.json";

/// Check the file: schema, names, finite samples, statistics equal to a recomputation from the
/// samples, and stored verdicts equal to `derive()`. A file that fails is not a usable result.
pub fn validate(r: &ResultsFile) -> Result<(), ResultError> {
    check_header(r)?;
    let mut keys = std::collections::BTreeSet::new();
    for t in &r.targets {
        let what = format!("{FILE}: targets[{}]", t.key);
        if !keys.insert(t.key.as_str()) {
            return Err(invalid(what, "duplicate target key"));
        }
        check_artifacts(t, &what)?;
        for (i, v) in t.variants.iter().enumerate() {
            check_variant(i, v, &format!("{what}.variants[{i}] ({})", v.name))?;
        }
        check_derived(r, t, &what)?;
    }
    Ok(())
}

/// The file's own fields: a schema still read, a safe run id, an RFC 3339 timestamp, a finite
/// `min_speedup` of at least 0.
fn check_header(r: &ResultsFile) -> Result<(), ResultError> {
    if !(RESULTS_SCHEMA_MIN..=RESULTS_SCHEMA_VERSION).contains(&r.schema_version) {
        return Err(invalid(
            format!("{FILE}: schema_version"),
            format!(
                "expected {RESULTS_SCHEMA_MIN} to {RESULTS_SCHEMA_VERSION}, found {}",
                r.schema_version
            ),
        ));
    }
    if !crate::fsx::is_safe_run_id(&r.run_id) {
        return Err(invalid(
            format!("{FILE}: run_id"),
            format!("{:?} is not a safe run id", r.run_id),
        ));
    }
    if chrono::DateTime::parse_from_rfc3339(&r.timestamp).is_err() {
        return Err(invalid(
            format!("{FILE}: timestamp"),
            format!("expected RFC 3339, found {:?}", r.timestamp),
        ));
    }
    if !r.min_speedup.is_finite() || r.min_speedup < 0.0 {
        return Err(invalid(
            format!("{FILE}: min_speedup"),
            format!("expected a finite number >= 0, found {}", r.min_speedup),
        ));
    }
    Ok(())
}

/// Every artifact of target `t` (at `what`) under an evidence key, at a safe relative path.
fn check_artifacts(t: &TargetResult, what: &str) -> Result<(), ResultError> {
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
    Ok(())
}

/// Variant `i` (at `vw`): the baseline first then optimized ones, at least one execution per
/// sample, finite samples and the statistics of its samples.
fn check_variant(i: usize, v: &VariantResult, vw: &str) -> Result<(), ResultError> {
    let expect_role = if i == 0 {
        Role::Baseline
    } else {
        Role::Optimized
    };
    if v.role != expect_role {
        return Err(invalid(
            vw.to_string(),
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
        None => Err(invalid(
            format!("{vw}.samples_ms"),
            "expected at least one finite, non-negative sample",
        )),
        Some(s) if s != v.stats => Err(invalid(
            format!("{vw}.stats"),
            "stored statistics differ from those of samples_ms",
        )),
        Some(_) => Ok(()),
    }
}

/// Target `t`'s stored status, message and metrics equal to those derived from its samples (the
/// first that differs is named).
fn check_derived(r: &ResultsFile, t: &TargetResult, what: &str) -> Result<(), ResultError> {
    let (s, msg, m) = derive(
        t,
        r.min_speedup.get(),
        Estimator::for_schema(r.schema_version),
    );
    if s == t.status && msg == t.message && m == t.metrics {
        return Ok(());
    }
    let (field, stored, derived) = if s != t.status {
        ("status", format!("{:?}", t.status), format!("{s:?}"))
    } else if msg != t.message {
        ("message", format!("{:?}", t.message), format!("{msg:?}"))
    } else {
        let json = |x: &Metrics| serde_json::to_string(x).unwrap_or_default();
        ("metrics", json(&t.metrics), json(&m))
    };
    Err(invalid(
        format!("{what}.{field}"),
        format!(
            "the stored {field} differs from the one derived from its samples: stored {stored}, derived {derived}"
        ),
    ))
}

fn is_artifact_key(k: &str) -> bool {
    k.ends_with("_rep") || k.ends_with("_trace") || k.ends_with("_json")
}
