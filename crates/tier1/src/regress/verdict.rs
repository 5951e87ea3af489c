//! A target's verdict from its metrics and rows: **regressed** when a regression row stands
//! (status, memory, or a metric regressed over its floor), else **unknown** when a metric could
//! not rule a threshold-sized worsening out, else **improved** when an improvement row stands,
//! else **unchanged**. The target's detectable change is the larger of its metrics' (a slowdown
//! of both variants shows in the optimized time only). An unknown target gets an entry saying
//! what could not be ruled out, with the figures.

use super::TargetChanges;
use super::significance::TargetDecision;
use crate::history::model::TargetSummary;
use crate::history::{DetectionMethod, Inconclusive, MetricTest, TargetDetection, Verdict};
use crate::json::Finite;
use crate::text::{fmt_pct, fmt_sig};

/// The finished record (verdict, detectable change, floor marks) and, for an unknown target,
/// its inconclusive entry.
pub(crate) fn finish(
    decision: TargetDecision,
    changes: &TargetChanges,
    cur: &TargetSummary,
) -> (TargetDetection, Option<Inconclusive>) {
    let mut record = decision.record;
    for held in &changes.held_by_floor {
        if let Some(t) = record
            .tests
            .iter_mut()
            .find(|t| t.metric == held.row.reason())
        {
            t.held_by_floor = true;
        }
    }
    let unknown: Vec<&MetricTest> = record
        .tests
        .iter()
        .filter(|t| t.verdict == Some(Verdict::Unknown))
        .collect();
    let verdict = if !changes.regressions.is_empty() {
        Verdict::Regressed
    } else if record.method == DetectionMethod::Statistical && !unknown.is_empty() {
        Verdict::Unknown
    } else if !changes.improvements.is_empty() {
        Verdict::Improved
    } else {
        Verdict::Unchanged
    };
    let overloaded = cur
        .measurement
        .as_ref()
        .and_then(|m| m.overloaded.as_ref())
        .and_then(crate::history::overload::Overload::note);
    let inconclusive = (verdict == Verdict::Unknown).then(|| Inconclusive {
        target: cur.target.clone(),
        reason: unknown_reason(
            &unknown,
            decision.forced_unknown.as_deref(),
            &decision.unclaimed,
            overloaded.as_deref(),
        ),
        speedup_half_width_pct: cur
            .best_speedup
            .zip(cur.measurement.as_ref())
            .and_then(|(s, m)| m.speedup_half_width_pct(s))
            .map(Finite::from),
    });
    record.detectable_pct = record
        .tests
        .iter()
        .map(|t| t.detectable_pct)
        .reduce(Finite::max);
    record.verdict = Some(verdict);
    (record, inconclusive)
}

/// What an unknown target could not rule out, metric by metric (or, for a metric whose
/// improvement is `unclaimed`, why not), and, when the machine was overloaded while it was
/// measured, that (with what to do).
fn unknown_reason(
    tests: &[&MetricTest],
    forced: Option<&str>,
    unclaimed: &[(String, String)],
    overloaded: Option<&str>,
) -> String {
    let mut parts: Vec<String> = tests
        .iter()
        .map(|t| match unclaimed.iter().find(|(m, _)| *m == t.metric) {
            Some((_, why)) => format!("{}: {why}", figures(t)),
            None => describe(t),
        })
        .collect();
    if let Some(why) = forced {
        parts.insert(0, format!("{why}: its figures cannot decide"));
    }
    parts.extend(overloaded.map(str::to_string));
    parts.join("; ")
}

/// `speedup 2.73 -> 2.55 (-6.6 %): a 5 % worsening is not ruled out at this noise (p = 0.04,
/// run-to-run ±2.1 %; detectable 12.4 %)`.
pub(crate) fn describe(t: &MetricTest) -> String {
    format!(
        "{}: a {} % worsening is not ruled out at this noise (p = {}, run-to-run ±{} %; detectable {} %)",
        figures(t),
        fmt_sig(t.threshold_pct.map_or(f64::NAN, f64::from), 3),
        fmt_sig(t.p_value, 2),
        fmt_sig(t.noise_pct, 2),
        fmt_sig(t.detectable_pct, 3),
    )
}

/// `speedup 2.73 -> 2.55 (-6.6 %)`: the metric, the anchor's and the current value, the change.
fn figures(t: &MetricTest) -> String {
    let unit = if t.metric == "speedup" { "x" } else { " ms" };
    format!(
        "{} {}{unit} -> {}{unit} ({})",
        t.metric,
        fmt_sig(t.reference_value, 4),
        fmt_sig(t.current_value, 4),
        fmt_pct(t.change_pct, 1),
    )
}

/// One regression row in words with every figure a reader needs to act: target, metric, anchor
/// and current values, change, threshold and, where the target was tested, its detectable
/// change (`labs/a:a speedup 2.731x -> 2.310x (-15.4 %; threshold -5 %; detectable 8.1 %)`).
/// The thresholds are those the target's test recorded, else the suite defaults (rows decided
/// by the reference rules carry no test).
pub(crate) fn describe_row(
    row: &crate::history::model::ChangeRow,
    detection: Option<&crate::history::Detection>,
) -> String {
    use crate::history::model::ChangeRow as R;
    let test = detection
        .and_then(|d| d.target(row.target()))
        .and_then(|t| t.test(row.reason()));
    let detectable = test
        .map(|t| format!("; detectable {} %", fmt_sig(t.detectable_pct, 3)))
        .unwrap_or_default();
    let defaults = crate::suite::Thresholds::default();
    let th = crate::suite::Thresholds {
        speedup_regression_pct: test
            .and_then(|t| t.threshold_pct)
            .map_or(defaults.speedup_regression_pct, f64::from),
        optimized_latency_regression_pct: test
            .and_then(|t| t.threshold_pct)
            .map_or(defaults.optimized_latency_regression_pct, f64::from),
        min_optimized_time_delta_ms: test
            .and_then(|t| t.floor_ms)
            .map_or(defaults.min_optimized_time_delta_ms, f64::from),
        ..defaults
    };
    match row {
        R::Status {
            target,
            before,
            after,
        } => format!("{target} status {before} -> {after}"),
        R::Speedup {
            target,
            before,
            after,
            delta_pct,
            ..
        } => format!(
            "{target} speedup {}x -> {}x ({}; threshold -{} %{detectable})",
            fmt_sig(*before, 4),
            fmt_sig(*after, 4),
            fmt_pct(*delta_pct, 1),
            fmt_sig(th.speedup_regression_pct, 3)
        ),
        R::OptimizedLatency {
            target,
            before,
            after,
            delta_pct,
            optimized_time_delta_ms,
        } => format!(
            "{target} optimized time {} ms -> {} ms ({}, {} ms; threshold +{} % and {} ms{detectable})",
            fmt_sig(*before, 4),
            fmt_sig(*after, 4),
            fmt_pct(*delta_pct, 1),
            fmt_sig(*optimized_time_delta_ms, 3),
            fmt_sig(th.optimized_latency_regression_pct, 3),
            fmt_sig(th.min_optimized_time_delta_ms, 3)
        ),
        R::MemorySavings {
            target,
            before,
            after,
            delta_points,
        } => format!(
            "{target} memory savings {} % -> {} % ({delta_points:+.1} points; threshold -{} points)",
            fmt_sig(*before, 4),
            fmt_sig(*after, 4),
            fmt_sig(th.memory_savings_regression_points, 3)
        ),
        R::OptimizedMemory {
            target,
            before,
            after,
            delta_pct,
            ..
        } => format!(
            "{target} optimized memory {} MB -> {} MB ({}; threshold +{} %)",
            fmt_sig(*before, 4),
            fmt_sig(*after, 4),
            fmt_pct(*delta_pct, 1),
            fmt_sig(th.optimized_memory_regression_pct, 3)
        ),
    }
}

#[cfg(test)]
mod tests;
