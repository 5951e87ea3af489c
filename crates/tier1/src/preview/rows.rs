//! One row per target of a preview: the anchor's and the pull request's values, the change, and
//! the verdict the nightly's comparison gave it (regression, unknown, held by the floor,
//! improvement, within noise, ...) with the smallest slowdown it could detect, ordered most
//! serious first so a truncated table keeps what matters.

use crate::aggregate::{SUCCEEDED, finite, goal, optimized_memory_mb, optimized_time_ms, positive};
use crate::history::model::{ChangeRow, RegressionSummary, Summary, TargetSummary};
use crate::suite::Goal;
use serde::Serialize;

/// What the comparison decided for one target, most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TargetVerdict {
    /// In the anchor, absent from this run (blocks the gate).
    Missing,
    /// Succeeded in the anchor, did not succeed here (blocks the gate).
    Failed,
    /// A confirmed regression (blocks the gate).
    Regression,
    /// A regression its recheck did not confirm (passes the gate, never an anchor).
    ClearedByRecheck,
    /// The measurement cannot decide at this noise (passes the gate, never an anchor; listed
    /// with what it could not rule out).
    Unknown,
    /// A significant worsening beyond the threshold that the absolute floor kept from the gate.
    HeldByFloor,
    /// Better beyond the thresholds and beyond run-to-run noise.
    Improvement,
    /// A change beyond the thresholds that run-to-run noise explains.
    WithinNoise,
    /// Not in the anchor.
    New,
    /// No change beyond the thresholds.
    Unchanged,
}

impl TargetVerdict {
    /// The words (and mark) the Markdown shows.
    pub(crate) fn label(self) -> &'static str {
        match self {
            TargetVerdict::Missing => "❌ missing",
            TargetVerdict::Failed => "❌ failed",
            TargetVerdict::Regression => "❌ regression",
            TargetVerdict::ClearedByRecheck => "⚠️ cleared by recheck",
            TargetVerdict::Unknown => "❔ unknown",
            TargetVerdict::HeldByFloor => "⚠️ held by floor",
            TargetVerdict::Improvement => "✅ improvement",
            TargetVerdict::WithinNoise => "〰️ within noise",
            TargetVerdict::New => "🆕 new",
            TargetVerdict::Unchanged => "unchanged",
        }
    }
}

/// A measured value of one side (speed goal: speedup and optimized time; memory goal: savings and
/// optimized memory).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Side {
    /// `succeeded`, `failed_*`, ...
    pub(crate) status: String,
    /// Best speedup (speed goal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) speedup: Option<f64>,
    /// Optimized time in ms (speed goal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) optimized_ms: Option<f64>,
    /// Memory savings in percent (memory goal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) memory_savings_pct: Option<f64>,
    /// Optimized memory in MB (memory goal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) optimized_mb: Option<f64>,
}

/// One target of the preview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TargetRow {
    /// Target key.
    pub(crate) key: String,
    /// Target string (the comparison's identity).
    pub(crate) target: String,
    /// `speed` or `memory`.
    pub(crate) goal: &'static str,
    /// The anchor's values (None for a new target).
    pub(crate) anchor: Option<Side>,
    /// This run's values (None for a missing target).
    pub(crate) current: Option<Side>,
    /// The change shown: the deciding comparison row's, else the headline metric's.
    pub(crate) change: Option<Change>,
    /// The verdict.
    pub(crate) verdict: TargetVerdict,
    /// The smallest slowdown (percent) the comparison could detect for this target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detectable_pct: Option<f64>,
}

/// A change of one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    /// `speedup`, `optimized_latency`, `memory_savings`, `optimized_memory` or `status`.
    pub(crate) metric: &'static str,
    /// Percent (relative metrics) or percentage points (`memory_savings`); None for `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) delta: Option<f64>,
    /// `before -> after` for a status change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<String>,
}

impl Change {
    fn of_row(row: &ChangeRow) -> Change {
        let (delta, status) = match row {
            ChangeRow::Status { before, after, .. } => (None, Some(format!("{before} → {after}"))),
            ChangeRow::Speedup { delta_pct, .. }
            | ChangeRow::OptimizedLatency { delta_pct, .. }
            | ChangeRow::OptimizedMemory { delta_pct, .. } => (Some(delta_pct.get()), None),
            ChangeRow::MemorySavings { delta_points, .. } => (Some(delta_points.get()), None),
        };
        Change {
            metric: row.reason(),
            delta,
            status,
        }
    }

    /// The headline change of a pair without a deciding row: speedup (speed) or savings (memory).
    fn headline(goal: Goal, anchor: &Side, current: &Side) -> Option<Change> {
        let (metric, delta) = match goal {
            Goal::Speed => {
                let (a, c) = (positive(anchor.speedup)?, positive(current.speedup)?);
                ("speedup", (c - a) / a * 100.0)
            }
            Goal::Time => {
                let (a, c) = (
                    positive(anchor.optimized_ms)?,
                    positive(current.optimized_ms)?,
                );
                ("time", (c - a) / a * 100.0)
            }
            Goal::Memory => {
                let (a, c) = (anchor.memory_savings_pct?, current.memory_savings_pct?);
                ("memory_savings", c - a)
            }
        };
        delta.is_finite().then_some(Change {
            metric,
            delta: Some(delta),
            status: None,
        })
    }
}

fn side(t: &TargetSummary) -> Side {
    let succeeded = t.status == SUCCEEDED;
    let (speed, memory) = match goal(t) {
        Goal::Speed | Goal::Time => (succeeded, false),
        Goal::Memory => (false, succeeded),
    };
    Side {
        status: t.status.clone(),
        speedup: speed.then(|| positive(t.best_speedup)).flatten(),
        optimized_ms: speed.then(|| optimized_time_ms(t)).flatten(),
        memory_savings_pct: memory.then(|| finite(t.best_memory_savings_pct)).flatten(),
        optimized_mb: memory.then(|| optimized_memory_mb(t)).flatten(),
    }
}

fn goal_name(g: Goal) -> &'static str {
    match g {
        Goal::Speed => "speed",
        Goal::Memory => "memory",
        Goal::Time => "time",
    }
}

/// The rows of a preview: every target of this run and every missing one, most serious verdict
/// first, then in suite order.
pub(crate) fn rows(current: &Summary, anchor: &Summary, cmp: &RegressionSummary) -> Vec<TargetRow> {
    let first_row = |list: &[ChangeRow], target: &str| {
        list.iter()
            .find(|r| r.target() == target)
            .map(Change::of_row)
    };
    let mut out = Vec::new();
    for t in &current.targets {
        let prev = anchor.targets.iter().find(|a| a.target == t.target);
        let g = match prev {
            Some(p) => crate::aggregate::pair_goal(t, p),
            None => goal(t),
        };
        let regression = first_row(&cmp.regressions, &t.target);
        let suppressed = cmp
            .suppressed_regressions
            .iter()
            .find(|s| s.row.target() == t.target)
            .map(|s| Change::of_row(&s.row));
        let improvement = first_row(&cmp.improvements, &t.target);
        let noise = first_row(&cmp.within_noise, &t.target);
        let (verdict, change) = if prev.is_none() {
            (TargetVerdict::New, None)
        } else if let Some(c) = regression {
            let failed = cmp
                .regressions
                .iter()
                .any(|r| r.target() == t.target && matches!(r, ChangeRow::Status { .. }));
            let v = if failed {
                TargetVerdict::Failed
            } else {
                TargetVerdict::Regression
            };
            (v, Some(c))
        } else if let Some(c) = suppressed {
            (TargetVerdict::ClearedByRecheck, Some(c))
        } else if cmp.inconclusive.iter().any(|i| i.target == t.target) {
            (TargetVerdict::Unknown, noise.or(improvement))
        } else if let Some(h) = cmp
            .held_by_floor
            .iter()
            .find(|h| h.row.target() == t.target)
        {
            (TargetVerdict::HeldByFloor, Some(Change::of_row(&h.row)))
        } else if let Some(c) = improvement {
            (TargetVerdict::Improvement, Some(c))
        } else if let Some(c) = noise {
            (TargetVerdict::WithinNoise, Some(c))
        } else {
            (TargetVerdict::Unchanged, None)
        };
        let anchor_side = prev.map(side);
        let current_side = side(t);
        let change = change.or_else(|| {
            anchor_side
                .as_ref()
                .and_then(|a| Change::headline(g, a, &current_side))
        });
        out.push(TargetRow {
            key: t.key.clone(),
            target: t.target.clone(),
            goal: goal_name(g),
            anchor: anchor_side,
            current: Some(current_side),
            change,
            verdict,
            detectable_pct: cmp
                .detection
                .as_ref()
                .and_then(|d| d.target(&t.target))
                .and_then(|d| d.detectable_pct)
                .map(f64::from),
        });
    }
    for m in &cmp.missing_targets {
        out.push(TargetRow {
            key: m.key.clone(),
            target: m.target.clone(),
            goal: goal_name(goal(m)),
            anchor: Some(side(m)),
            current: None,
            change: None,
            verdict: TargetVerdict::Missing,
            detectable_pct: None,
        });
    }
    // Stable: suite order within a verdict.
    out.sort_by_key(|r| r.verdict);
    out
}

/// How many rows have each verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    /// Confirmed regressions.
    pub(crate) regressions: usize,
    /// Targets that no longer succeed.
    pub(crate) failed: usize,
    /// Targets missing from this run.
    pub(crate) missing: usize,
    /// Regressions their recheck cleared.
    pub(crate) cleared_by_recheck: usize,
    /// Targets the measurement could not decide.
    pub(crate) unknown: usize,
    /// Held by the floor.
    pub(crate) held_by_floor: usize,
    /// Improvements.
    pub(crate) improvements: usize,
    /// Changes run-to-run noise explains.
    pub(crate) within_noise: usize,
    /// New targets.
    pub(crate) new: usize,
    /// No change beyond the thresholds.
    pub(crate) unchanged: usize,
}

impl Counts {
    /// Count the verdicts of `rows`.
    pub(crate) fn of(rows: &[TargetRow]) -> Counts {
        let mut c = Counts::default();
        for r in rows {
            let n = match r.verdict {
                TargetVerdict::Missing => &mut c.missing,
                TargetVerdict::Failed => &mut c.failed,
                TargetVerdict::Regression => &mut c.regressions,
                TargetVerdict::ClearedByRecheck => &mut c.cleared_by_recheck,
                TargetVerdict::Unknown => &mut c.unknown,
                TargetVerdict::HeldByFloor => &mut c.held_by_floor,
                TargetVerdict::Improvement => &mut c.improvements,
                TargetVerdict::WithinNoise => &mut c.within_noise,
                TargetVerdict::New => &mut c.new,
                TargetVerdict::Unchanged => &mut c.unchanged,
            };
            *n += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::fixtures::*;
    use crate::history::Inconclusive;
    use crate::recheck::{RecheckResult, apply};
    use crate::regress::compare;
    use crate::suite::Thresholds;

    fn verdicts(rows: &[TargetRow]) -> Vec<(&str, TargetVerdict)> {
        rows.iter().map(|r| (r.key.as_str(), r.verdict)).collect()
    }

    #[test]
    fn every_outcome_of_the_comparison_has_its_verdict_most_serious_first() {
        let anchor = summary(
            "anchor",
            vec![
                speed_opt("same", 2.0, 5.0),
                speed_opt("slower", 2.0, 5.0),
                speed_opt("faster", 2.0, 5.0),
                speed_opt("broken", 2.0, 5.0),
                speed_opt("cleared", 2.0, 5.0),
                memory_target("kv", 1024.0, 50.0),
                speed_opt("gone", 2.0, 5.0),
            ],
        );
        let current = summary(
            "pr",
            vec![
                speed_opt("same", 2.02, 4.95),
                speed_opt("slower", 1.5, 6.667),
                speed_opt("faster", 2.5, 4.0),
                with_status(speed_opt("broken", 2.0, 5.0), "failed_error"),
                speed_opt("cleared", 1.5, 6.667),
                memory_target("kv", 1024.0, 40.0),
                speed_opt("fresh", 3.0, 1.0),
            ],
        );
        let th = Thresholds::default();
        let first = compare(&current, Some(&anchor), th).unwrap();
        let recheck = RecheckResult {
            target: "labs/cleared:cleared".into(),
            key: "cleared".into(),
            recheck_output_json: "x.json".into(),
            row: Some(speed_opt("cleared", 2.0, 5.0)),
        };
        let cmp = apply(
            first,
            &current,
            &anchor,
            &[recheck],
            th,
            &Default::default(),
        );
        let rows = rows(&current, &anchor, &cmp);
        assert_eq!(
            verdicts(&rows),
            [
                ("gone", TargetVerdict::Missing),
                ("broken", TargetVerdict::Failed),
                ("slower", TargetVerdict::Regression),
                ("kv", TargetVerdict::Regression),
                ("cleared", TargetVerdict::ClearedByRecheck),
                ("faster", TargetVerdict::Improvement),
                ("fresh", TargetVerdict::New),
                ("same", TargetVerdict::Unchanged),
            ]
        );
        let slower = &rows[2];
        assert_eq!(slower.change.as_ref().unwrap().metric, "speedup");
        assert!((slower.change.as_ref().unwrap().delta.unwrap() + 25.0).abs() < 1e-9);
        assert_eq!(slower.anchor.as_ref().unwrap().speedup, Some(2.0));
        assert_eq!(slower.current.as_ref().unwrap().optimized_ms, Some(6.667));
        let kv = &rows[3];
        assert_eq!(kv.goal, "memory");
        assert_eq!(kv.change.as_ref().unwrap().metric, "memory_savings");
        assert_eq!(kv.current.as_ref().unwrap().speedup, None);
        let broken = &rows[1];
        assert_eq!(
            broken.change.as_ref().unwrap().status.as_deref(),
            Some("succeeded → failed_error")
        );
        // An unchanged row still shows its headline change.
        let same = &rows[7];
        assert!((same.change.as_ref().unwrap().delta.unwrap() - 1.0).abs() < 1e-9);
        assert!(rows[0].current.is_none() && rows[6].anchor.is_none());
        let c = Counts::of(&rows);
        assert_eq!((c.regressions, c.failed, c.missing, c.new), (2, 1, 1, 1));
    }

    #[test]
    fn noise_and_imprecision_are_their_own_verdicts() {
        let anchor = summary(
            "anchor",
            vec![speed_opt("a", 2.0, 5.0), speed_opt("b", 2.0, 5.0)],
        );
        let current = summary(
            "pr",
            vec![speed_opt("a", 2.2, 4.5), speed_opt("b", 2.0, 5.0)],
        );
        let mut cmp = compare(&current, Some(&anchor), Thresholds::default()).unwrap();
        let moved = cmp.improvements.remove(0);
        cmp.improvements.clear();
        cmp.within_noise.push(moved);
        cmp.inconclusive.push(Inconclusive {
            target: "labs/b:b".into(),
            reason: "interval ±4 %".into(),
            speedup_half_width_pct: Some(4.0.into()),
        });
        let rows = rows(&current, &anchor, &cmp);
        assert_eq!(
            verdicts(&rows),
            [
                ("b", TargetVerdict::Unknown),
                ("a", TargetVerdict::WithinNoise)
            ]
        );
        assert!((rows[1].change.as_ref().unwrap().delta.unwrap() - 10.0).abs() < 1e-9);
    }
}
