//! [`summarize`]: `summary.json` target rows from a validated results file.

use super::error::ResultError;
use super::format::ResultsFile;
use super::validation::validate;
use crate::history::model::TargetSummary;
use crate::json::Finite;
use crate::suite::Suite;
use std::collections::BTreeMap;

/// `summary.json` target rows, in suite order: the reference row rules (`best_optimized_time_ms =
/// baseline / best_speedup`, `best_optimized_memory_mb = baseline * (1 - savings / 100)`,
/// `artifacts` rewritten to `<run_id>/...`, `missing` rows for suite targets without a result).
/// The file is validated first. Aggregates are left to the caller.
pub fn summarize(r: &ResultsFile, suite: &Suite) -> Result<Vec<TargetSummary>, ResultError> {
    if r.suite_name != suite.suite_name || r.suite_version != suite.version {
        return Err(ResultError::SuiteMismatch {
            expected: format!("{} v{}", suite.suite_name, suite.version),
            found: format!("{} v{}", r.suite_name, r.suite_version),
        });
    }
    validate(r)?;
    let mut rows = Vec::with_capacity(suite.targets.len());
    for st in &suite.targets {
        let Some(t) = r.targets.iter().find(|t| t.target == st.target) else {
            rows.push(TargetSummary {
                key: st.key.clone(),
                target: st.target.clone(),
                category: st.category.clone(),
                rationale: st.rationale.clone(),
                status: "missing".into(),
                baseline_time_ms: None,
                best_speedup: None,
                best_optimized_time_ms: None,
                best_optimization: None,
                optimization_goal: None,
                baseline_memory_mb: None,
                best_memory_savings_pct: None,
                best_optimized_memory_mb: None,
                baseline_p75_ms: None,
                baseline_file: None,
                artifacts: BTreeMap::new(),
                verification_tolerance: None,
                measurement: None,
                measurement_settings: None,
                extra: Default::default(),
            });
            continue;
        };
        let m = &t.metrics;
        let best_optimized_time_ms = match (m.baseline_time_ms, m.best_speedup) {
            (Some(b), Some(s)) if b > 0.0 && s > 0.0 => Some(Finite::from(b.get() / s.get())),
            _ => None,
        };
        let best_optimized_memory_mb = match (m.baseline_memory_mb, m.best_memory_savings_pct) {
            (Some(b), Some(p)) if b > 0.0 => Some(Finite::from(b.get() * (1.0 - p.get() / 100.0))),
            _ => None,
        };
        let mut extra = serde_json::Map::new();
        if let Some(msg) = &t.message {
            extra.insert("message".into(), serde_json::Value::String(msg.clone()));
        }
        rows.push(TargetSummary {
            key: st.key.clone(),
            target: st.target.clone(),
            category: st.category.clone(),
            rationale: st.rationale.clone(),
            status: t.status.clone(),
            baseline_time_ms: m.baseline_time_ms,
            best_speedup: m.best_speedup,
            best_optimized_time_ms,
            best_optimization: m.best_optimization.clone(),
            optimization_goal: Some(t.optimization_goal.as_str().into()),
            baseline_memory_mb: m.baseline_memory_mb,
            best_memory_savings_pct: m.best_memory_savings_pct,
            best_optimized_memory_mb,
            baseline_p75_ms: m.baseline_p75_ms,
            baseline_file: t
                .baseline_file
                .as_deref()
                .filter(|p| crate::fsx::safe_relative_parts(p).is_some())
                .map(str::to_string),
            artifacts: t
                .artifacts
                .iter()
                .map(|(k, p)| (k.clone(), format!("{}/{p}", r.run_id)))
                .collect(),
            verification_tolerance: Some(t.tolerance),
            measurement: m.measurement.clone(),
            measurement_settings: Some(super::settings::of(r, st, suite)),
            extra,
        });
    }
    Ok(rows)
}
