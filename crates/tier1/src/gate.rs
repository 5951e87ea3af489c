//! The release gate (contract §3.3-3.4, §5.5 step 4): complete metrics, accepted provenance,
//! run acceptance, baseline eligibility of a normal publication, the eligible-anchor rules restore
//! re-derives, and the exit verdict. Every check returns the reasons it failed, not just a bool.

use crate::aggregate::{SUCCEEDED, finite, goal, positive};
use crate::exit::Exit;
use crate::history::model::{RegressionSummary, Summary};
use crate::json::Finite;
use crate::suite::Goal;
use serde::Serialize;

/// The outcome of one gate check: empty `reasons` means it passed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Check {
    /// One line per failed condition, naming the field with expected and found values.
    pub(crate) reasons: Vec<String>,
}

impl Check {
    /// True when no condition failed.
    pub(crate) fn passed(&self) -> bool {
        self.reasons.is_empty()
    }
    fn fail(&mut self, reason: impl Into<String>) {
        self.reasons.push(reason.into());
    }
    fn require(&mut self, ok: bool, reason: impl FnOnce() -> String) {
        if !ok {
            self.reasons.push(reason());
        }
    }
    fn absorb(&mut self, other: Check) {
        self.reasons.extend(other.reasons);
    }
}

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
fn comparison_blockers(comparison: &RegressionSummary) -> Check {
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

/// Anchor quality: every target carries a measurement record taken without throttling, and
/// where the profile requires it (`anchor_precision: required`, and every record older than that
/// setting) one that reached its precision. Under `measured` an anchor carries whatever
/// precision the machine reached, and later verdicts state what they can detect.
pub(crate) fn anchor_precision(summary: &Summary) -> Check {
    let mut c = Check::default();
    for t in &summary.targets {
        match &t.measurement {
            None => c.fail(format!(
                "target {}: no measurement record; an anchor needs a measurement record",
                t.key
            )),
            Some(m) => {
                if let Some(why) = m.anchor_refusal(t.best_speedup) {
                    c.fail(format!("target {}: the measurement {why}", t.key));
                }
            }
        }
    }
    c
}

/// Reference `_tier1_baseline_eligible` for normal publication: eligible only when the run was
/// accepted, the caller allows an initial anchor, there was no prior anchor (`baseline_run_id`
/// null), there are no suppressed regressions and no anchor declines, and (tier1) every target
/// was measured precisely ([`anchor_precision`]).
pub(crate) fn baseline_eligibility(
    summary: &Summary,
    comparison: &RegressionSummary,
    run_accepted: bool,
    allow_initial_anchor: bool,
) -> Check {
    let mut c = Check::default();
    c.require(run_accepted, || "the run was not accepted".into());
    c.require(allow_initial_anchor, || {
        "an initial anchor is not allowed here (anchors move only through protected promotion)"
            .into()
    });
    if let Some(anchor) = &comparison.baseline_run_id {
        c.fail(format!(
            "a prior anchor {anchor} exists; only protected promotion may move it"
        ));
    }
    c.absorb(no_suppressed(comparison));
    let d = comparison.anchor_declines.len();
    c.require(d == 0, || {
        format!("the comparison has {d} anchor decline(s)")
    });
    c.absorb(anchor_precision(summary));
    c
}

fn no_suppressed(comparison: &RegressionSummary) -> Check {
    let mut c = Check::default();
    let s = comparison.suppressed_regressions.len();
    c.require(s == 0, || {
        format!("{s} regression(s) were cleared only by a recheck; such a run is never an anchor")
    });
    let cleared: Vec<&str> = comparison
        .side_by_side
        .iter()
        .flat_map(|b| b.cleared())
        .map(|t| t.target.as_str())
        .collect();
    c.require(cleared.is_empty(), || {
        format!(
            "{} suspected target(s) were cleared only by side by side ({}); such a run is never an anchor",
            cleared.len(),
            cleared.join(", ")
        )
    });
    let unconfirmed: Vec<&str> = comparison
        .side_by_side
        .iter()
        .flat_map(|b| b.unconfirmed())
        .map(|t| t.target.as_str())
        .collect();
    c.require(unconfirmed.is_empty(), || {
        format!(
            "{} regression(s) of the history test were neither confirmed nor ruled out side by side ({}); such a run is never an anchor",
            unconfirmed.len(),
            unconfirmed.join(", ")
        )
    });
    c
}

/// Contract §5.5 step 4 "Eligible anchors must meet": the run was accepted; no comparison changes
/// (regressions, improvements, anchor declines, missing targets) unless the acceptance is explicit;
/// no suppressed regressions; no prior anchor without explicit acceptance; no history warnings;
/// complete metrics; accepted provenance; and (tier1) no target whose measurement record says it
/// was imprecise (rows without a record, from older writers, are not judged).
pub(crate) fn eligible_anchor_rules(
    summary: &Summary,
    comparison: &RegressionSummary,
    run_accepted: bool,
    explicit_acceptance: bool,
    history_warnings: bool,
) -> Check {
    let mut c = Check::default();
    c.require(run_accepted, || "the run was not accepted".into());
    if !explicit_acceptance {
        let changes = [
            ("regression", comparison.regressions.len()),
            ("improvement", comparison.improvements.len()),
            ("anchor decline", comparison.anchor_declines.len()),
            ("missing target", comparison.missing_targets.len()),
        ];
        for (what, n) in changes {
            c.require(n == 0, || {
                format!(
                    "the comparison has {n} {what}(s) and the anchor was not explicitly accepted"
                )
            });
        }
        if let Some(anchor) = &comparison.baseline_run_id {
            c.fail(format!(
                "the run was compared with prior anchor {anchor} and was not explicitly accepted"
            ));
        }
    }
    c.absorb(no_suppressed(comparison));
    c.require(!history_warnings, || "the history has warnings".into());
    c.absorb(baseline_metrics(summary));
    c.absorb(provenance(summary));
    for t in &summary.targets {
        if let Some(why) = t
            .measurement
            .as_ref()
            .and_then(|m| m.anchor_refusal(t.best_speedup))
        {
            c.fail(format!("target {}: the measurement {why}", t.key));
        }
    }
    c
}

/// What the run step knows when it decides its exit code (reference `_tier1_result_failure_count`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunOutcome<'a> {
    /// The run summary (None when it could not be built).
    pub(crate) summary: Option<&'a Summary>,
    /// The final comparison, after rechecks (None when it could not be computed).
    pub(crate) comparison: Option<&'a RegressionSummary>,
    /// `execution.total_failed`: benchmark executions that failed.
    pub(crate) execution_failed: u32,
    /// The history failed its integrity checks.
    pub(crate) history_integrity_failed: bool,
    /// The gate's `run_accepted`.
    pub(crate) run_accepted: bool,
}

/// The exit verdict: every failing condition, fail closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Verdict {
    /// True when there are no failures.
    pub(crate) passed: bool,
    /// One line per failing condition.
    pub(crate) failures: Vec<String>,
}

impl Verdict {
    /// `Exit::Ok` when passed, else `Exit::Gate`.
    pub(crate) fn exit(&self) -> Exit {
        if self.passed { Exit::Ok } else { Exit::Gate }
    }
}

/// The verdict of a run (`baseline_eligible: false` on an accepted run still passes).
pub(crate) fn verdict(outcome: &RunOutcome<'_>) -> Verdict {
    let mut c = Check::default();
    match outcome.summary {
        None => c.fail("the run summary is missing"),
        Some(s) => {
            let a = &s.summary;
            c.require(a.target_count > 0, || "summary.target_count is 0".into());
            for (field, n) in [
                ("failed", a.failed),
                ("skipped", a.skipped),
                ("missing", a.missing),
            ] {
                c.require(n == 0, || format!("summary.{field} is {n}, expected 0"));
            }
        }
    }
    let ef = outcome.execution_failed;
    c.require(ef == 0, || {
        format!("execution.total_failed is {ef}, expected 0")
    });
    match outcome.comparison {
        None => c.fail("the comparison against the anchor is missing"),
        Some(cmp) => c.absorb(comparison_blockers(cmp)),
    }
    c.require(!outcome.history_integrity_failed, || {
        "the history failed integrity checks".into()
    });
    c.require(outcome.run_accepted, || "run_accepted is false".into());
    Verdict {
        passed: c.passed(),
        failures: c.reasons,
    }
}

#[cfg(test)]
mod tests;
