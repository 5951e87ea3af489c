//! Trend series of the dashboard: the suite representative (geomean) speedup and one series per
//! target (speedup, or memory savings for memory-goal targets), as chart points classed by run.

use super::format;
use super::model::{Dashboard, RunClass, RunView};
use super::svg::{Chart, Point, PointKind};
use crate::history::model::TargetSummary;
use crate::suite::Goal;

fn kind(run: &RunView) -> PointKind {
    match run.class() {
        RunClass::Anchor => PointKind::Anchor,
        RunClass::Accepted => PointKind::Accepted,
        RunClass::Rejected => PointKind::Rejected,
    }
}

/// x positions: UTC seconds when every run has a parsable time, else the run's ordinal.
fn xs(dash: &Dashboard) -> Vec<f64> {
    if dash.runs.iter().all(|r| r.time.is_some()) {
        dash.runs
            .iter()
            .map(|r| r.time.map(|t| t.timestamp() as f64).unwrap_or_default())
            .collect()
    } else {
        (0..dash.runs.len()).map(|i| i as f64).collect()
    }
}

fn x_labels(dash: &Dashboard) -> (String, String) {
    let label = |r: Option<&RunView>| {
        r.map(|r| match r.time {
            Some(t) => t.format("%Y-%m-%d").to_string(),
            None => r.row.run_id.clone(),
        })
        .unwrap_or_default()
    };
    (label(dash.runs.first()), label(dash.runs.last()))
}

/// One point per run that has a value, labelled with run, time, value and class.
fn series(
    dash: &Dashboard,
    value: impl Fn(&RunView) -> Option<f64>,
    fmt_y: fn(Option<f64>) -> String,
) -> Vec<Point> {
    dash.runs
        .iter()
        .zip(xs(dash))
        .filter_map(|(run, x)| {
            let y = value(run)?;
            Some(Point {
                x,
                y,
                kind: kind(run),
                label: format!(
                    "{} · {} · {} · {}",
                    run.row.run_id,
                    format::time(&run.row.generated_at),
                    fmt_y(Some(y)),
                    run.class().label()
                ),
            })
        })
        .collect()
}

/// The suite representative (geomean) speedup over time.
pub fn suite_chart(dash: &Dashboard) -> Chart {
    let points = series(dash, RunView::representative, format::speedup);
    Chart {
        title: "Suite representative (geomean) speedup over time".into(),
        width: 1160,
        height: 230,
        fmt_y: format::speedup,
        x_labels: x_labels(dash),
        points,
    }
}

/// The targets to chart: the latest run's, in its order.
pub fn chart_targets(dash: &Dashboard) -> Vec<&TargetSummary> {
    dash.latest_evidence()
        .map(|r| r.summary.targets.iter().collect())
        .unwrap_or_default()
}

/// The value charted for a target: speedup, or memory savings for a memory goal.
pub fn target_value(t: &TargetSummary) -> Option<f64> {
    let v = match Goal::from_stored(t.optimization_goal.as_deref()) {
        Goal::Speed => t.best_speedup,
        Goal::Memory => t.best_memory_savings_pct,
        Goal::Time => t.baseline_time_ms,
    };
    v.filter(|x| x.is_finite())
}

/// One small chart for a target string.
pub fn target_chart(dash: &Dashboard, target: &TargetSummary) -> Chart {
    let goal = Goal::from_stored(target.optimization_goal.as_deref());
    let fmt_y: fn(Option<f64>) -> String = match goal {
        Goal::Speed => format::speedup,
        Goal::Memory => format::pct,
        Goal::Time => format::ms,
    };
    let points = series(
        dash,
        |r| {
            r.target(&target.target)
                .filter(|t| t.status == "succeeded")
                .and_then(target_value)
        },
        fmt_y,
    );
    let what = match goal {
        Goal::Speed => "speedup",
        Goal::Memory => "memory savings",
        Goal::Time => "time",
    };
    Chart {
        title: format!("{} {what} over time", target.key),
        width: 370,
        height: 150,
        fmt_y,
        x_labels: x_labels(dash),
        points,
    }
}
