//! Trend series of the dashboard: the suite representative (geomean) speedup and one series per
//! target (speedup, memory savings for memory-goal targets, or time for time-goal targets), as chart
//! points classed by run, and beside a speed target's speedup its optimized time (ms, live runs: a
//! sealed run keeps no optimized time); the sealed runs of a compacted history are charted with
//! the live ones.

use super::axis::XAxis;
use super::format;
use super::model::{Dashboard, RunClass, RunView};
use super::svg::{Chart, Point, PointKind};
use crate::history::model::TargetSummary;
use crate::history::segment::SealedTarget;
use crate::history::segment_chart::goal_value;
use crate::suite::Goal;
use chrono::{DateTime, Utc};

fn kind(class: RunClass) -> PointKind {
    match class {
        RunClass::Anchor => PointKind::Anchor,
        RunClass::Accepted => PointKind::Accepted,
        RunClass::Rejected => PointKind::Rejected,
    }
}

/// Where a chart run's target rows are.
#[derive(Clone, Copy)]
enum Targets<'a> {
    Live(&'a RunView),
    Sealed(&'a [SealedTarget]),
}

/// A run as the charts see it: live, or sealed in a segment of a compacted history.
#[derive(Clone, Copy)]
struct ChartRun<'a> {
    time: Option<DateTime<Utc>>,
    run_id: &'a str,
    generated_at: &'a str,
    class: RunClass,
    representative: Option<f64>,
    targets: Targets<'a>,
}

impl ChartRun<'_> {
    /// The charted value of the target string `target`, when it succeeded.
    fn target(&self, target: &str) -> Option<f64> {
        match self.targets {
            Targets::Live(r) => r
                .target(target)
                .filter(|t| t.status == "succeeded")
                .and_then(target_value),
            Targets::Sealed(ts) => ts
                .iter()
                .find(|t| t.target == target && t.status == "succeeded")
                .and_then(|t| {
                    goal_value(
                        t.optimization_goal.as_deref(),
                        t.best_speedup,
                        t.best_memory_savings_pct,
                        t.baseline_time_ms,
                    )
                }),
        }
    }
}

/// Every run of the history, live and sealed, by time then run id.
fn chart_runs(dash: &Dashboard) -> Vec<ChartRun<'_>> {
    let live = dash.runs.iter().map(|r| ChartRun {
        time: r.time,
        run_id: &r.row.run_id,
        generated_at: &r.row.generated_at,
        class: r.class(),
        representative: r.representative(),
        targets: Targets::Live(r),
    });
    let sealed = dash.sealed.iter().map(|p| ChartRun {
        time: p.time,
        run_id: &p.run_id,
        generated_at: &p.generated_at,
        class: RunClass::Accepted,
        representative: p.representative,
        targets: Targets::Sealed(&p.targets),
    });
    let mut all: Vec<ChartRun<'_>> = sealed.chain(live).collect();
    all.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.run_id.cmp(b.run_id)));
    all
}

/// x positions: UTC seconds when every run has a parsable time, else the run's ordinal.
fn xs(runs: &[ChartRun<'_>]) -> Vec<f64> {
    if runs.iter().all(|r| r.time.is_some()) {
        runs.iter()
            .map(|r| r.time.map(|t| t.timestamp() as f64).unwrap_or_default())
            .collect()
    } else {
        (0..runs.len()).map(|i| i as f64).collect()
    }
}

/// The x axis of `runs`: time when every run has a parsable time (as [`xs`]), else run ids.
fn x_axis(runs: &[ChartRun<'_>]) -> XAxis {
    if runs.iter().all(|r| r.time.is_some()) {
        XAxis::Time
    } else {
        XAxis::Ordinal(runs.iter().map(|r| r.run_id.to_string()).collect())
    }
}

/// One point per run that has a value, labelled with run, time, value and class.
fn series(
    runs: &[ChartRun<'_>],
    value: impl Fn(&ChartRun<'_>) -> Option<f64>,
    fmt_y: fn(Option<f64>) -> String,
) -> Vec<Point> {
    runs.iter()
        .zip(xs(runs))
        .filter_map(|(run, x)| {
            let y = value(run)?;
            Some(Point {
                x,
                y,
                kind: kind(run.class),
                label: format!(
                    "{} · {} · {} · {}",
                    run.run_id,
                    format::time(run.generated_at),
                    fmt_y(Some(y)),
                    run.class.label()
                ),
            })
        })
        .collect()
}

/// The suite representative (geomean) speedup over time.
pub(crate) fn suite_chart(dash: &Dashboard) -> Chart {
    let runs = chart_runs(dash);
    let points = series(&runs, |r| r.representative, format::speedup);
    Chart {
        title: format!(
            "{}Suite representative (geomean) speedup over time",
            dash.class_label()
        ),
        width: 1160,
        height: 230,
        fmt_y: format::speedup,
        x_axis: x_axis(&runs),
        points,
    }
}

/// The targets to chart: the latest run's, in its order.
pub(crate) fn chart_targets(dash: &Dashboard) -> Vec<&TargetSummary> {
    dash.latest_evidence()
        .map(|r| r.summary.targets.iter().collect())
        .unwrap_or_default()
}

/// The value charted for a target: speedup, memory savings for a memory goal, the baseline time
/// for a time goal.
pub(crate) fn target_value(t: &TargetSummary) -> Option<f64> {
    goal_value(
        t.optimization_goal.as_deref(),
        t.best_speedup,
        t.best_memory_savings_pct,
        t.baseline_time_ms,
    )
}

/// One small chart for a target string.
pub(crate) fn target_chart(dash: &Dashboard, target: &TargetSummary) -> Chart {
    let goal = Goal::from_stored(target.optimization_goal.as_deref());
    let fmt_y: fn(Option<f64>) -> String = match goal {
        Goal::Speed => format::speedup,
        Goal::Memory => format::pct,
        Goal::Time => format::ms,
    };
    let runs = chart_runs(dash);
    let points = series(&runs, |r| r.target(&target.target), fmt_y);
    let what = match goal {
        Goal::Speed => "speedup",
        Goal::Memory => "memory savings",
        Goal::Time => "time",
    };
    Chart {
        title: format!("{}{} {what} over time", dash.class_label(), target.key),
        width: 370,
        height: 150,
        fmt_y,
        x_axis: x_axis(&runs),
        points,
    }
}

/// The optimized time (ms) of a speed-goal target over time, beside its speedup chart; `None` for
/// other goals. Sealed runs keep no optimized time and are not charted here.
pub(crate) fn target_time_chart(dash: &Dashboard, target: &TargetSummary) -> Option<Chart> {
    if Goal::from_stored(target.optimization_goal.as_deref()) != Goal::Speed {
        return None;
    }
    let runs = chart_runs(dash);
    let points = series(
        &runs,
        |r| match r.targets {
            Targets::Live(v) => v
                .target(&target.target)
                .filter(|t| t.status == "succeeded")
                .and_then(|t| crate::aggregate::finite(t.best_optimized_time_ms)),
            Targets::Sealed(_) => None,
        },
        format::ms,
    );
    Some(Chart {
        title: format!(
            "{}{} optimized time over time",
            dash.class_label(),
            target.key
        ),
        width: 370,
        height: 150,
        fmt_y: format::ms,
        x_axis: x_axis(&runs),
        points,
    })
}
