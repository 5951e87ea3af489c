//! Where side by side enters the verdict (docs/regression-model.md, "Side by side"). After the
//! pooled recheck a speed or time target is *suspected* when it is a regression, `unknown`, a
//! regression before the recheck that the recheck cleared, over a threshold but within noise, or
//! improved ([`suspected`]). Its side-by-side comparison with the
//! anchor's own code then decides ([`apply`]): `worse` is a confirmed regression (even where the
//! history test said unknown, noise or improved); `same` clears it (its regression rows move to
//! `suppressed_regressions` with [`CLEARED_REASON`]: the run passes the gate and is never an
//! anchor); `unknown` leaves the target as the history test left it, with the reason recorded.
//! The same function re-applies the recorded block when promotion recomputes a comparison.

use crate::aggregate::{goal, optimized_time_ms, positive};
use crate::history::model::{ChangeRow, RegressionSummary, Summary, SuppressedRegression};
use crate::history::{SbsVerdict, SideBySideBlock, SideBySideCheck};
use crate::recheck::{SUPPRESSION_REASON, is_rechecked};
use crate::regress::find_target;
use crate::suite::Goal;

/// The `suppression_reason` of a regression side by side found the same as the anchor's code.
pub(crate) const CLEARED_REASON: &str = "side_by_side_same";

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
fn is_row_of(row: &ChangeRow, target: &str) -> bool {
    is_rechecked(row) && row.target() == target
}

/// The suspected speed and time targets of a comparison after its recheck, once each, in the
/// order: regressions, unknown, regressions the recheck cleared ([`RECHECK_CLEARED`]), within
/// noise, improvements ([`IMPROVED`]) (empty without an anchor).
pub(crate) fn suspected(c: &RegressionSummary, current: &Summary) -> Vec<Suspect> {
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
    out
}

/// Apply the side-by-side block to the comparison after its recheck (see the module docs) and
/// record it as the comparison's `side_by_side`.
pub(crate) fn apply(
    mut c: RegressionSummary,
    current: &Summary,
    anchor: &Summary,
    block: SideBySideBlock,
) -> RegressionSummary {
    for check in &block.checks {
        match check.verdict {
            SbsVerdict::Worse => confirm(&mut c, current, anchor, check),
            SbsVerdict::Same => clear(&mut c, check),
            SbsVerdict::Unknown if check.is_unconfirmed() => unconfirmed(&mut c, check),
            SbsVerdict::Unknown => {}
        }
    }
    c.side_by_side = Some(block);
    c
}

/// A `worse` target becomes a confirmed regression (and no longer an improvement): its rows
/// within noise or cleared by the recheck move back to the regressions, or, when it has none,
/// rows are made from the first measurement against the anchor for the metrics that worsened
/// side by side.
fn confirm(
    c: &mut RegressionSummary,
    current: &Summary,
    anchor: &Summary,
    check: &SideBySideCheck,
) {
    let t = check.target.as_str();
    c.inconclusive.retain(|u| u.target != t);
    c.improvements.retain(|r| !is_row_of(r, t));
    if c.regressions.iter().any(|r| is_row_of(r, t)) {
        return;
    }
    let (noise, kept): (Vec<ChangeRow>, Vec<ChangeRow>) = std::mem::take(&mut c.within_noise)
        .into_iter()
        .partition(|r| is_row_of(r, t));
    c.within_noise = kept;
    let (back, kept): (Vec<SuppressedRegression>, Vec<SuppressedRegression>) =
        std::mem::take(&mut c.suppressed_regressions)
            .into_iter()
            .partition(|s| s.row.target() == t);
    c.suppressed_regressions = kept;
    let mut rows: Vec<ChangeRow> = noise;
    rows.extend(back.into_iter().map(|s| s.row));
    if rows.is_empty() {
        rows = made_rows(current, anchor, check);
    }
    c.regressions.extend(rows);
}

/// Rows for a target the history test did not call a regression: the optimized latency when
/// its time worsened side by side, the speedup when its speedup did.
fn made_rows(current: &Summary, anchor: &Summary, check: &SideBySideCheck) -> Vec<ChangeRow> {
    let (Some(cur), Some(prev)) = (
        find_target(current, &check.target),
        find_target(anchor, &check.target),
    ) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    let time_worse = check.optimized_time_ratio.is_some_and(|r| r.low > 1.0);
    let speed_worse = check.speedup_ratio.is_some_and(|r| r.high < 1.0);
    if let (Some(before), Some(after)) = (optimized_time_ms(prev), optimized_time_ms(cur))
        && (time_worse || !speed_worse)
    {
        rows.push(ChangeRow::OptimizedLatency {
            target: check.target.clone(),
            before: before.into(),
            after: after.into(),
            delta_pct: ((after - before) / before * 100.0).into(),
            optimized_time_delta_ms: (after - before).into(),
        });
    }
    if let (Some(before), Some(after)) = (positive(prev.best_speedup), positive(cur.best_speedup))
        && speed_worse
    {
        let (tb, ta) = (optimized_time_ms(prev), optimized_time_ms(cur));
        rows.push(ChangeRow::Speedup {
            target: check.target.clone(),
            before: before.into(),
            after: after.into(),
            delta_pct: ((after - before) / before * 100.0).into(),
            optimized_time_before_ms: tb.map(Into::into),
            optimized_time_after_ms: ta.map(Into::into),
            optimized_time_delta_ms: tb.zip(ta).map(|(b, a)| (a - b).into()),
        });
    }
    rows
}

/// A regression the comparison measured but could not decide (`too_noisy`) is not confirmed:
/// the history test's change on its own may be the machine drifting (what side by side cancels),
/// so the target is unknown (the gate's `on_unknown` rule decides), its rows move to
/// `within_noise`, and the run is never an anchor. A comparison that could not run (a build or
/// checkout failure) is no evidence and changes nothing.
fn unconfirmed(c: &mut RegressionSummary, check: &SideBySideCheck) {
    let t = check.target.as_str();
    let (moved, kept): (Vec<ChangeRow>, Vec<ChangeRow>) = std::mem::take(&mut c.regressions)
        .into_iter()
        .partition(|r| is_row_of(r, t));
    c.regressions = kept;
    if moved.is_empty() {
        return;
    }
    c.within_noise.extend(moved);
    if let Some(d) = c.detection.as_mut()
        && let Some(td) = d.targets.iter_mut().find(|x| x.target == t)
    {
        td.verdict = Some(crate::history::Verdict::Unknown);
    }
    c.inconclusive.retain(|u| u.target != t);
    c.inconclusive.push(crate::history::Inconclusive {
        target: t.to_string(),
        reason: format!(
            "the history test's regression is not confirmed side by side with the anchor's own code: {}",
            check.reason
        ),
        speedup_half_width_pct: None,
    });
}

/// A `same` target is cleared: its regression rows move to `suppressed_regressions`, and it is
/// no longer unknown, unless its measurement settings changed since the anchor (both builds
/// measured with the new settings alike: still no comparison with the anchor's figures, which a
/// new anchor must replace).
fn clear(c: &mut RegressionSummary, check: &SideBySideCheck) {
    let t = check.target.as_str();
    let settings_changed = c
        .detection
        .as_ref()
        .and_then(|d| d.target(t))
        .is_some_and(|d| !d.settings_changed.is_empty());
    if !settings_changed {
        c.inconclusive.retain(|u| u.target != t);
    }
    let (moved, kept): (Vec<ChangeRow>, Vec<ChangeRow>) = std::mem::take(&mut c.regressions)
        .into_iter()
        .partition(|r| is_row_of(r, t));
    c.regressions = kept;
    let id = check
        .evidence_dir
        .clone()
        .unwrap_or_else(|| format!("side_by_side/{}", check.key));
    c.suppressed_regressions
        .extend(moved.into_iter().map(|row| SuppressedRegression {
            row,
            suppression_reason: CLEARED_REASON.into(),
            recheck_run_id: id.clone(),
            recheck_speedup: None,
            recheck_optimized_time_ms: None,
        }));
}

mod detectable;
pub(crate) use detectable::detectable_pct;

#[cfg(test)]
mod tests;
