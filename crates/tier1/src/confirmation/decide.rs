//! What a side-by-side verdict does to the comparison ([`apply`]): `worse` confirms a regression,
//! `same` clears it, `unknown` leaves it as the history test left it.

use super::suspect::is_row_of;
use crate::aggregate::{optimized_time_ms, positive};
use crate::history::model::{ChangeRow, RegressionSummary, Summary, SuppressedRegression};
use crate::history::{SbsVerdict, SideBySideBlock, SideBySideCheck};
use crate::regress::find_target;

/// The `suppression_reason` of a regression side by side found the same as the anchor's code.
pub(crate) const CLEARED_REASON: &str = "side_by_side_same";

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
