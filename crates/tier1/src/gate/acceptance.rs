//! Run acceptance: complete metrics, accepted provenance, no history warnings, and the
//! comparison's blockers (confirmed regressions, missing targets, targets still unknown).

use super::Check;
use crate::aggregate::{SUCCEEDED, finite, goal, positive};
use crate::history::model::{RegressionSummary, Summary};
use crate::json::Finite;
use crate::suite::Goal;

/// Reference `_summary_has_baseline_metrics`: every target succeeded with complete, finite metrics
/// (speed: baseline time, speedup, optimized time > 0; memory: baseline time > 0, finite savings,
/// optimized memory > 0) and the counts block agrees.
pub(crate) fn baseline_metrics(summary: &Summary) -> Check {
    let mut c = Check::default();
    let a = &summary.summary;
    c.require(a.target_count > 0, || "summary.target_count is 0".into());
    c.require(
        usize::try_from(a.target_count).ok() == Some(summary.targets.len()),
        || {
            format!(
                "summary.target_count is {} but the summary has {} target rows",
                a.target_count,
                summary.targets.len()
            )
        },
    );
    for (field, n) in [
        ("failed", a.failed),
        ("skipped", a.skipped),
        ("missing", a.missing),
    ] {
        c.require(n == 0, || format!("summary.{field} is {n}, expected 0"));
    }
    // A sharded night with a missing shard is incomplete: never accepted, never an anchor.
    for s in summary.shards.iter().flat_map(|r| &r.shards) {
        c.require(s.delivered(), || {
            format!(
                "incomplete night: shard {} of {} delivered no evidence ({}); its targets {} are missing",
                s.shard,
                summary.shards.as_ref().map_or(0, |r| r.count),
                s.reason.as_deref().unwrap_or("no package"),
                s.targets.join(", ")
            )
        });
    }
    for t in &summary.targets {
        let name = &t.key;
        if t.status != SUCCEEDED {
            c.fail(format!(
                "target {name}: status is {:?}, expected \"succeeded\"",
                t.status
            ));
            continue;
        }
        c.require(positive(t.baseline_time_ms).is_some(), || {
            format!(
                "target {name}: baseline_time_ms {} is not a finite number > 0",
                show(t.baseline_time_ms)
            )
        });
        match goal(t) {
            Goal::Speed => {
                c.require(positive(t.best_speedup).is_some(), || {
                    format!(
                        "target {name}: best_speedup {} is not a finite number > 0",
                        show(t.best_speedup)
                    )
                });
                c.require(positive(t.best_optimized_time_ms).is_some(), || {
                    format!(
                        "target {name}: best_optimized_time_ms {} is not a finite number > 0",
                        show(t.best_optimized_time_ms)
                    )
                });
            }
            // A single benchmark: its time (baseline_time_ms, required above) is its metric.
            Goal::Time => {}
            Goal::Memory => {
                c.require(finite(t.best_memory_savings_pct).is_some(), || {
                    format!(
                        "target {name}: best_memory_savings_pct {} is not a finite number",
                        show(t.best_memory_savings_pct)
                    )
                });
                c.require(positive(t.best_optimized_memory_mb).is_some(), || {
                    format!(
                        "target {name}: best_optimized_memory_mb {} is not a finite number > 0",
                        show(t.best_optimized_memory_mb)
                    )
                });
            }
        }
    }
    c
}

fn show(x: Option<Finite>) -> String {
    x.map_or_else(|| "null".into(), |v| v.to_string())
}

/// Whether `s` is a 40-character lower-case hex commit.
pub(crate) fn is_commit_hex(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Accepted provenance: `source_git_commit` is 40 lower hex, equals `source_manifest_git_commit`,
/// and `source_git_dirty` is false.
pub(crate) fn provenance(summary: &Summary) -> Check {
    let mut c = Check::default();
    let commit = summary.source_git_commit.as_deref();
    let manifest = summary.source_manifest_git_commit.as_deref();
    c.require(commit.is_some_and(is_commit_hex), || {
        format!("source_git_commit {commit:?} is not a 40-character lower-case hex commit")
    });
    c.require(commit.is_some() && commit == manifest, || {
        format!("source_git_commit {commit:?} differs from source_manifest_git_commit {manifest:?}")
    });
    c.require(summary.source_git_dirty == Some(false), || {
        format!(
            "source_git_dirty is {:?}, expected false",
            summary.source_git_dirty
        )
    });
    c
}

/// Reference `_tier1_run_accepted`: complete metrics, accepted provenance, no history warnings,
/// and no regressions or missing targets unless the comparison is explicitly accepted.
pub(crate) fn run_acceptance(
    summary: &Summary,
    comparison: &RegressionSummary,
    history_warnings: bool,
    explicit_acceptance: bool,
) -> Check {
    let mut c = baseline_metrics(summary);
    c.absorb(provenance(summary));
    c.require(!history_warnings, || "the history has warnings".into());
    if !explicit_acceptance {
        c.absorb(comparison_blockers(comparison));
    }
    c
}

/// `run_acceptance(..).passed()`.
pub fn run_accepted(
    summary: &Summary,
    comparison: &RegressionSummary,
    history_warnings: bool,
    explicit_acceptance: bool,
) -> bool {
    run_acceptance(summary, comparison, history_warnings, explicit_acceptance).passed()
}

/// Confirmed regressions, missing targets and, under `on_unknown: fail`, targets still unknown:
/// they block a run unless explicitly accepted. One reason per regression, naming the target,
/// metric, anchor and current values, change, threshold and detectable change.
pub(super) fn comparison_blockers(comparison: &RegressionSummary) -> Check {
    let mut c = Check::default();
    let detection = comparison.detection.as_ref();
    for row in &comparison.regressions {
        // A comparison with the anchor's own code that found the target worse is what confirmed
        // it (possibly against the history test's figures): its figures go with the message.
        let side_by_side = comparison
            .side_by_side
            .as_ref()
            .and_then(|b| b.decided(row.target()))
            .filter(|k| k.verdict == crate::history::SbsVerdict::Worse)
            .map(|k| format!("; side by side with the anchor's code: worse, {}", k.reason))
            .unwrap_or_default();
        c.fail(format!(
            "confirmed regression: {}{side_by_side}",
            crate::regress::verdict::describe_row(row, detection)
        ));
    }
    for t in &comparison.missing_targets {
        c.fail(format!(
            "missing target: {} ({}) is in the anchor but not in this run",
            t.key, t.target
        ));
    }
    if let Some(d) = detection
        && d.on_unknown == Some(crate::suite::UnknownRule::Fail)
    {
        let decided = |t: &str| {
            comparison
                .side_by_side
                .as_ref()
                .is_some_and(|b| b.decided(t).is_some())
        };
        for t in d.unknown().filter(|t| !decided(&t.target)) {
            c.fail(format!(
                "unknown verdict under thresholds.on_unknown: fail: {} (detectable {} %)",
                t.target,
                crate::text::fmt_sig(t.detectable_pct.map_or(f64::NAN, f64::from), 3)
            ));
        }
    }
    c
}
