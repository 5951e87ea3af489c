//! Which targets are compared side by side: the [`Suspect`]s of a comparison after its recheck
//! ([`suspected`]) and the `suspected_as` values that are not a verdict.

use crate::aggregate::goal;
use crate::history::TargetDetection;
use crate::history::model::{ChangeRow, RegressionSummary, Summary};
use crate::recheck::{SUPPRESSION_REASON, is_rechecked};
use crate::regress::find_target;
use crate::suite::{Goal, Suite, TargetKind};

/// The `suspected_as` of a target whose regression the pooled recheck cleared: a regression before
/// the recheck, so still compared side by side (a drift of the anchor's recorded figures can hide
/// a real change from the recheck).
pub(crate) const RECHECK_CLEARED: &str = "cleared_by_recheck";

/// The `suspected_as` of a target the history test called improved: a drift of the anchor's
/// recorded figures larger than a real slowdown reads as an improvement, so it is compared side by
/// side too (only `worse` changes its verdict).
pub(crate) const IMPROVED: &str = "improved";

/// The `suspected_as` of a target whose measurement settings changed since the anchor (unknown,
/// not compared with the anchor's figures): side by side measures both builds with the new
/// settings, so `worse` is a regression of the code; `same` clears nothing (the target still
/// needs a new anchor) and does not keep the run from being one.
pub(crate) const SETTINGS_CHANGED: &str = "settings_changed";

/// The `suspected_as` of a pair the history test decided without a suspicion but while blind:
/// its stated detectable change more than [`BLIND`] times what this night's and the anchor's
/// measurements alone resolve (`measured_detectable_pct`), so the window's run-to-run noise or a
/// young history's prior, not the measurement, is what it could not see past (issue 43: an
/// imported pair stated 12-22 % on nights its tool's repetitions resolved 5-7 %). Compared side by
/// side, which cancels that noise, for the targets the caller names (a night's command targets:
/// their comparison runs the tool's command, where a built-in pair's would add a build and its
/// whole budget to every young night of the README's job); only `worse` changes its verdict.
pub(crate) const IMPRECISE: &str = "imprecise_history";

/// How many times what the measurements alone resolve the history test's detectable change may
/// be before the pair is [`IMPRECISE`] (issue 43's bound: within 2x of the tool's own repetitions).
pub(crate) const BLIND: f64 = 2.0;

/// The targets of a night of `suite` that are [`IMPRECISE`] when their history test is blind:
/// its command targets.
pub(crate) fn blind_too(suite: &Suite) -> impl Fn(&str) -> bool + '_ {
    |target| {
        suite
            .targets
            .iter()
            .any(|t| t.target == target && t.kind == TargetKind::Command)
    }
}

/// A target to compare side by side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suspect {
    /// Target string.
    pub(crate) target: String,
    /// `regressed`, `unknown`, [`SETTINGS_CHANGED`], [`RECHECK_CLEARED`], `within_noise` or
    /// [`IMPROVED`].
    pub(crate) suspected_as: &'static str,
    /// Which metrics decide: `optimized_time` or `speedup` when the suspicion is of that metric
    /// alone, else `both`.
    pub(crate) decide_on: &'static str,
}

/// A speed or latency row ([`is_rechecked`]) of `target`: the rows a side-by-side verdict moves.
pub(super) fn is_row_of(row: &ChangeRow, target: &str) -> bool {
    is_rechecked(row) && row.target() == target
}

/// The suspected speed and time targets of a comparison after its recheck, once each, in the
/// order: regressions, unknown, regressions the recheck cleared ([`RECHECK_CLEARED`]), within
/// noise, improvements ([`IMPROVED`]), then the pairs `blind_too` names whose history test was
/// blind ([`IMPRECISE`]) (empty without an anchor).
pub(crate) fn suspected(
    c: &RegressionSummary,
    current: &Summary,
    blind_too: &dyn Fn(&str) -> bool,
) -> Vec<Suspect> {
    let mut out: Vec<Suspect> = Vec::new();
    if c.baseline_run_id.is_none() {
        return out;
    }
    let rows_of = |rows: &[ChangeRow], target: &str| -> Vec<&'static str> {
        rows.iter()
            .filter(|r| is_row_of(r, target))
            .map(ChangeRow::reason)
            .collect()
    };
    let mut push = |target: &str, as_: &'static str, reasons: Vec<&'static str>| {
        let measured = find_target(current, target).is_some_and(|t| goal(t) != Goal::Memory);
        if !measured || out.iter().any(|s| s.target == target) {
            return;
        }
        let single = find_target(current, target).is_some_and(|t| goal(t) == Goal::Time);
        let decide_on = match reasons.as_slice() {
            _ if single => "optimized_time",
            ["optimized_latency"] => "optimized_time",
            ["speedup"] => "speedup",
            _ => "both",
        };
        out.push(Suspect {
            target: target.to_string(),
            suspected_as: as_,
            decide_on,
        });
    };
    for r in c.regressions.iter().filter(|r| is_rechecked(r)) {
        push(r.target(), "regressed", rows_of(&c.regressions, r.target()));
    }
    for t in &c.inconclusive {
        let settings_changed = c
            .detection
            .as_ref()
            .and_then(|d| d.target(&t.target))
            .is_some_and(|d| !d.settings_changed.is_empty());
        let as_ = if settings_changed {
            SETTINGS_CHANGED
        } else {
            "unknown"
        };
        push(&t.target, as_, Vec::new());
    }
    let cleared: Vec<ChangeRow> = c
        .suppressed_regressions
        .iter()
        .filter(|s| s.suppression_reason == SUPPRESSION_REASON)
        .map(|s| s.row.clone())
        .collect();
    for r in cleared.iter().filter(|r| is_rechecked(r)) {
        push(r.target(), RECHECK_CLEARED, rows_of(&cleared, r.target()));
    }
    for r in c.within_noise.iter().filter(|r| is_rechecked(r)) {
        push(
            r.target(),
            "within_noise",
            rows_of(&c.within_noise, r.target()),
        );
    }
    for r in c.improvements.iter().filter(|r| is_rechecked(r)) {
        push(r.target(), IMPROVED, rows_of(&c.improvements, r.target()));
    }
    let blind = c.detection.iter().flat_map(|d| &d.targets).filter(|d| {
        blind_too(&d.target)
            && find_target(current, &d.target).is_some_and(|t| goal(t) == Goal::Speed)
            && is_blind(d)
    });
    for d in blind {
        push(&d.target, IMPRECISE, Vec::new());
    }
    out
}

/// Whether one of the target's tests states a detectable change more than [`BLIND`] times what
/// its measurements alone resolve.
fn is_blind(d: &TargetDetection) -> bool {
    d.tests.iter().any(|t| {
        t.measured_detectable_pct
            .is_some_and(|m| t.detectable_pct.get() > BLIND * m.get())
    })
}
