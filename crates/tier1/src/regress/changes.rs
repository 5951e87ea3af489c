//! The change rows of one target pair and how a check files one: regression, improvement, decline,
//! within noise or held by the floor.

use crate::aggregate::finite;
use crate::history::model::ChangeRow;
use crate::history::{FloorHeld, Verdict};
use crate::suite::Thresholds;

/// Slack for threshold comparisons, so a change exactly at a threshold counts despite binary
/// floating-point rounding (for example 2.0 -> 1.9 is -5 %, not -4.999999 %).
pub(super) const EPS: f64 = 1e-9;

/// The change rows of one target pair.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TargetChanges {
    /// Rows over the regression thresholds.
    pub(crate) regressions: Vec<ChangeRow>,
    /// Rows over the improvement thresholds.
    pub(crate) improvements: Vec<ChangeRow>,
    /// Every decline, without threshold.
    pub(crate) declines: Vec<ChangeRow>,
    /// Rows over a threshold that the significance test attributes to noise.
    pub(crate) within_noise: Vec<ChangeRow>,
    /// Significant worsenings over a threshold that the absolute floor kept from the gate.
    pub(crate) held_by_floor: Vec<FloorHeld>,
}

/// One metric's movement, oriented so that positive `worse_by` is a worsening.
#[derive(Debug, Clone, Copy)]
pub(super) struct Change {
    /// Relative change (percent) or points, positive when worse.
    pub(super) worse_by: f64,
    /// Regression / improvement threshold in the same unit.
    pub(super) threshold: f64,
    /// Over the absolute floor (or no floor applies).
    pub(super) significant: bool,
    /// Any worsening at all (an anchor decline).
    pub(super) declined: bool,
    /// The statistical verdict of the metric (`None`: the reference rules alone decide).
    pub(super) test: Option<Verdict>,
    /// The absolute floor and the optimized time's change (ms), where a floor applies.
    pub(super) floor: Option<(f64, f64)>,
}

/// Whether an earlier check of the same target already counted a regression or improvement.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counted {
    pub(super) regressed: bool,
    pub(super) improved: bool,
}

impl TargetChanges {
    /// File `row`. By the reference rules alone (`test: None`): a regression when worse by at
    /// least the threshold and over the floor (unless `already` counted one), an improvement
    /// (the mirror image). Under a statistical verdict: a regression or improvement only when
    /// the metric's verdict says so (it already required the threshold); a regressed metric
    /// under the floor is held by the floor (listed with the rule, never silent); a change over
    /// a threshold that the test did not confirm is `within_noise`. Any worsening is a decline.
    /// Returns what this check counted.
    pub(super) fn record(&mut self, row: ChangeRow, c: Change, already: Counted) -> Counted {
        let mut counted = Counted::default();
        let over = c.worse_by >= c.threshold - EPS;
        let under = c.worse_by <= -c.threshold + EPS;
        let (worse, better) = match c.test {
            None => (c.significant && over, c.significant && !over && under),
            Some(v) => {
                if v == Verdict::Regressed && !c.significant {
                    self.held_by_floor.push(floor_held(&row, c.floor));
                } else if (over || under)
                    && c.significant
                    && !matches!(v, Verdict::Regressed | Verdict::Improved)
                {
                    self.within_noise.push(row.clone());
                }
                (
                    v == Verdict::Regressed && c.significant,
                    v == Verdict::Improved && c.significant,
                )
            }
        };
        if worse {
            counted.regressed = true;
            if !already.regressed {
                self.regressions.push(row.clone());
            }
        } else if better {
            counted.improved = true;
            if !already.improved {
                self.improvements.push(row.clone());
            }
        }
        if c.declined {
            self.declines.push(row);
        }
        counted
    }
    /// File the change of an optimized time (a pair's optimized variant, or a single benchmark's
    /// one variant) from `before` to `after` ms: an `optimized_latency` row judged on
    /// `optimized_latency_regression_pct`, over the `min_optimized_time_delta_ms` floor, with the
    /// metric's statistical verdict `test`; any growth is a decline. Skipped (nothing filed) when
    /// the relative change is not a finite number.
    pub(super) fn record_latency(
        &mut self,
        target: &str,
        (before, after): (f64, f64),
        th: &Thresholds,
        test: Option<Verdict>,
        already: Counted,
    ) -> Counted {
        let Some(delta_pct) = relative_pct(before, after) else {
            return Counted::default();
        };
        let floor = th.min_optimized_time_delta_ms;
        let delta_ms = after - before;
        let row = ChangeRow::OptimizedLatency {
            target: target.to_string(),
            before: before.into(),
            after: after.into(),
            delta_pct: delta_pct.into(),
            optimized_time_delta_ms: delta_ms.into(),
        };
        let change = Change {
            worse_by: delta_pct,
            threshold: th.optimized_latency_regression_pct,
            significant: delta_ms.abs() >= floor - EPS,
            declined: after > before,
            test,
            floor: Some((floor, delta_ms)),
        };
        self.record(row, change, already)
    }
}

fn floor_held(row: &ChangeRow, floor: Option<(f64, f64)>) -> FloorHeld {
    let (floor_ms, delta_ms) = floor.unwrap_or((0.0, 0.0));
    FloorHeld {
        row: row.clone(),
        rule: format!(
            "min_optimized_time_delta_ms: the optimized time moved {} ms, under the {} ms floor",
            crate::text::fmt_sig(delta_ms.abs(), 3),
            crate::text::fmt_sig(floor_ms, 3)
        ),
        floor_ms: floor_ms.into(),
        delta_ms: delta_ms.into(),
    }
}

/// `(after - before) / before * 100` when it is a finite number (never NaN or infinity, which no
/// history file may hold); `None` makes the caller skip the check.
pub(super) fn relative_pct(before: f64, after: f64) -> Option<f64> {
    finite(Some((after - before) / before * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(floor_ms: f64) -> Thresholds {
        Thresholds {
            optimized_latency_regression_pct: 10.0,
            min_optimized_time_delta_ms: floor_ms,
            ..Thresholds::default()
        }
    }

    fn row(ch: &[ChangeRow]) -> Option<(f64, f64, f64, f64)> {
        match ch {
            [
                ChangeRow::OptimizedLatency {
                    before,
                    after,
                    delta_pct,
                    optimized_time_delta_ms,
                    ..
                },
            ] => Some((
                before.get(),
                after.get(),
                delta_pct.get(),
                optimized_time_delta_ms.get(),
            )),
            _ => None,
        }
    }

    #[test]
    fn a_latency_change_is_one_row_judged_on_its_threshold_floor_and_verdict() {
        // 10 -> 12 ms: +20 % over the 10 % threshold and the 1 ms floor, no test: a regression.
        let mut ch = TargetChanges::default();
        let counted = ch.record_latency("t", (10.0, 12.0), &th(1.0), None, Counted::default());
        assert!(counted.regressed && !counted.improved);
        assert_eq!(row(&ch.regressions), Some((10.0, 12.0, 20.0, 2.0)));
        assert_eq!(row(&ch.declines), Some((10.0, 12.0, 20.0, 2.0)));

        // The same +20 % under a 5 ms floor: a decline, not a regression.
        let mut ch = TargetChanges::default();
        ch.record_latency("t", (10.0, 12.0), &th(5.0), None, Counted::default());
        assert!(ch.regressions.is_empty());
        assert_eq!(ch.declines.len(), 1);

        // The test calls it a regression but the floor holds it: listed with the rule.
        let mut ch = TargetChanges::default();
        let test = Some(Verdict::Regressed);
        ch.record_latency("t", (10.0, 12.0), &th(5.0), test, Counted::default());
        assert!(ch.regressions.is_empty());
        assert_eq!(ch.held_by_floor.len(), 1);
        let held = &ch.held_by_floor[0];
        assert_eq!((held.floor_ms.get(), held.delta_ms.get()), (5.0, 2.0));
        assert!(
            held.rule.starts_with("min_optimized_time_delta_ms"),
            "{}",
            held.rule
        );

        // An earlier check of the target already counted the regression: not listed twice.
        let mut ch = TargetChanges::default();
        let already = Counted {
            regressed: true,
            improved: false,
        };
        let counted = ch.record_latency("t", (10.0, 12.0), &th(1.0), None, already);
        assert!(counted.regressed && ch.regressions.is_empty());

        // 12 -> 10 ms: an improvement, no decline.
        let mut ch = TargetChanges::default();
        ch.record_latency("t", (12.0, 10.0), &th(1.0), None, Counted::default());
        assert_eq!(ch.improvements.len(), 1);
        assert!(ch.declines.is_empty());
    }

    #[test]
    fn a_latency_change_without_a_finite_relative_change_files_nothing() {
        let mut ch = TargetChanges::default();
        let counted = ch.record_latency("t", (0.0, 12.0), &th(1.0), None, Counted::default());
        assert!(!counted.regressed && !counted.improved);
        assert_eq!(ch, TargetChanges::default());
    }
}
