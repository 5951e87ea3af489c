//! A segment's chart summary (`SegmentRecord::chart`): what the dashboard draws of its sealed runs
//! once they left the package, one point per segment: per charted value (the suite representative
//! speedup, and per target the speedup, memory savings or time by its goal), the median, extremes
//! and count over the accepted or eligible runs where it succeeded, and the runs' time span.

use super::model::IndexRow;
use super::segment::{ChartSummary, ChartTarget, SealedTarget, Spread};
use super::trend::parsed_time;
use crate::json::Finite;
use crate::suite::Goal;

/// The value charted for a target by its goal: speedup, memory savings, or the baseline time for
/// a time goal (the dashboard charts the same).
pub(crate) fn goal_value(
    goal: Option<&str>,
    speedup: Option<Finite>,
    savings: Option<Finite>,
    time_ms: Option<Finite>,
) -> Option<f64> {
    match Goal::from_stored(goal) {
        Goal::Speed => speedup,
        Goal::Memory => savings,
        Goal::Time => time_ms,
    }
    .map(f64::from)
    .filter(|x| x.is_finite())
}

/// The spread of `xs` (None when empty).
fn spread(mut xs: Vec<f64>) -> Option<Spread> {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let median = crate::stats::median(&xs)?;
    Some(Spread {
        n: xs.len() as u32,
        median: Finite::checked(median)?,
        min: Finite::checked(xs[0])?,
        max: Finite::checked(xs[xs.len() - 1])?,
    })
}

/// The chart summary of sealed runs: each run's row and its summary's targets, in chain order.
pub(crate) fn chart_of<'a>(
    runs: impl Iterator<Item = (&'a IndexRow, &'a [SealedTarget])>,
) -> ChartSummary {
    let mut times: Vec<(Option<chrono::DateTime<chrono::Utc>>, &str)> = Vec::new();
    let mut representative = Vec::new();
    let mut targets: Vec<(ChartTarget, Vec<f64>)> = Vec::new();
    for (row, ts) in runs {
        times.push((parsed_time(&row.generated_at), row.generated_at.as_str()));
        if !(row.is_accepted() || row.is_eligible()) {
            continue;
        }
        if let Some(r) = row.representative_speedup.or(row.geomean_speedup) {
            representative.push(f64::from(r));
        }
        for t in ts.iter().filter(|t| t.status == "succeeded") {
            let Some(v) = goal_value(
                t.optimization_goal.as_deref(),
                t.best_speedup,
                t.best_memory_savings_pct,
                t.baseline_time_ms,
            ) else {
                continue;
            };
            match targets.iter_mut().find(|(c, _)| c.target == t.target) {
                Some((_, vs)) => vs.push(v),
                None => targets.push((
                    ChartTarget {
                        target: t.target.clone(),
                        key: t.key.clone(),
                        optimization_goal: t.optimization_goal.clone(),
                        value: Spread {
                            n: 0,
                            median: Finite::default(),
                            min: Finite::default(),
                            max: Finite::default(),
                        },
                    },
                    vec![v],
                )),
            }
        }
    }
    times.sort();
    ChartSummary {
        from: times.first().map(|t| t.1.to_string()).unwrap_or_default(),
        to: times.last().map(|t| t.1.to_string()).unwrap_or_default(),
        representative: spread(representative),
        targets: targets
            .into_iter()
            .filter_map(|(mut c, vs)| {
                c.value = spread(vs)?;
                Some(c)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(id: &str, at: &str, rep: f64, accepted: bool) -> IndexRow {
        serde_json::from_value(
            json!({"run_id": id, "generated_at": at, "summary_path": "x",
            "regression_summary_path": "x", "regression_json_path": "x", "trend_snapshot_path": "x",
            "geomean_speedup": rep, "run_accepted": accepted}),
        )
        .unwrap()
    }

    fn target(t: &str, goal: &str, speedup: f64, savings: f64, status: &str) -> SealedTarget {
        SealedTarget {
            target: t.into(),
            key: t.into(),
            status: status.into(),
            optimization_goal: Some(goal.into()),
            best_speedup: Finite::checked(speedup),
            best_memory_savings_pct: Finite::checked(savings),
            baseline_time_ms: None,
        }
    }

    #[test]
    fn medians_of_accepted_runs_by_goal() {
        let rows = [
            row("a", "2026-08-02T00:00:00Z", 2.0, true),
            row("b", "2026-08-01T00:00:00Z", 4.0, true),
            row("c", "2026-08-03T00:00:00Z", 100.0, false),
            row("d", "2026-08-04T00:00:00Z", 3.0, true),
        ];
        let ts = [
            vec![
                target("s", "speed", 2.0, 0.0, "succeeded"),
                target("m", "memory", 1.0, 40.0, "succeeded"),
            ],
            vec![
                target("s", "speed", 6.0, 0.0, "succeeded"),
                target("m", "memory", 1.0, 60.0, "failed"),
            ],
            vec![target("s", "speed", 900.0, 0.0, "succeeded")],
            vec![target("s", "speed", 4.0, 0.0, "succeeded")],
        ];
        let c = chart_of(rows.iter().zip(ts.iter().map(Vec::as_slice)));
        assert_eq!(
            (c.from.as_str(), c.to.as_str()),
            ("2026-08-01T00:00:00Z", "2026-08-04T00:00:00Z")
        );
        let r = c.representative.unwrap();
        assert_eq!(
            (r.n, f64::from(r.median), f64::from(r.min), f64::from(r.max)),
            (3, 3.0, 2.0, 4.0)
        );
        let s = &c.targets[0];
        assert_eq!(
            (s.target.as_str(), s.value.n, f64::from(s.value.median)),
            ("s", 3, 4.0)
        );
        let m = &c.targets[1];
        assert_eq!(
            (m.value.n, f64::from(m.value.median)),
            (1, 40.0),
            "memory savings, succeeded only"
        );
    }
}
