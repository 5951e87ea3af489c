//! The x axis of the trend charts: ticks evenly spaced over the charted span, labelled with the
//! date and the time of day in UTC (two nights of one day read apart), or with run ids where some
//! run has no parsable time and the axis is the runs' order.

use chrono::DateTime;

/// What the x values of a chart are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum XAxis {
    /// UTC seconds since the epoch.
    Time,
    /// Ordinals: `x = i` is the run `ids[i]`.
    Ordinal(Vec<String>),
}

/// Room one tick label needs, in px ("2026-06-01 03:15 UTC" at the axis font size).
pub(crate) const TICK_SPACING_PX: f64 = 180.0;

/// How many ticks fit a plot `plot_width` px wide (at least 2).
pub(crate) fn tick_count(plot_width: f64) -> usize {
    ((plot_width / TICK_SPACING_PX).floor() as usize).max(2)
}

/// Ticks closer than this (seconds) show seconds too.
const SECONDS_BELOW: f64 = 600.0;

/// `2026-06-01 03:15 UTC` (with `:07` seconds when `seconds`) for UTC seconds `x`.
pub(crate) fn time_label(x: f64, seconds: bool) -> String {
    let format = if seconds {
        "%Y-%m-%d %H:%M:%S UTC"
    } else {
        "%Y-%m-%d %H:%M UTC"
    };
    DateTime::from_timestamp(x.round() as i64, 0)
        .map(|t| t.format(format).to_string())
        .unwrap_or_default()
}

/// Up to `count` ticks `(x, label)` from `lo` to `hi` (one tick when they are equal), without
/// repeated labels; time ticks less than ten minutes apart show seconds, so runs minutes apart
/// read apart too.
pub(crate) fn ticks(axis: &XAxis, lo: f64, hi: f64, count: usize) -> Vec<(f64, String)> {
    if !(lo.is_finite() && hi.is_finite()) {
        return vec![];
    }
    let xs: Vec<f64> = if hi > lo && count > 1 {
        let n = count - 1;
        (0..=n)
            .map(|i| lo + (hi - lo) * i as f64 / n as f64)
            .collect()
    } else {
        vec![lo]
    };
    let seconds = xs.len() > 1 && (hi - lo) / ((xs.len() - 1) as f64) < SECONDS_BELOW;
    let mut out: Vec<(f64, String)> = Vec::with_capacity(xs.len());
    for x in xs {
        let (x, label) = match axis {
            XAxis::Time => (x, time_label(x, seconds)),
            XAxis::Ordinal(ids) => {
                let i = x.round().max(0.0) as usize;
                (i as f64, ids.get(i).cloned().unwrap_or_default())
            }
        };
        if out.iter().all(|(_, l)| *l != label) {
            out.push((x, label));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_nights_of_one_day_read_apart() {
        let night = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .expect("time")
                .timestamp() as f64
        };
        let (a, b) = (night("2026-06-01T03:15:00Z"), night("2026-06-01T21:40:00Z"));
        let t = ticks(&XAxis::Time, a, b, 2);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["2026-06-01 03:15 UTC", "2026-06-01 21:40 UTC"]);
        assert_eq!(ticks(&XAxis::Time, a, b, 3)[1].1, "2026-06-01 12:27 UTC");
        assert_eq!(ticks(&XAxis::Time, a, a, 5).len(), 1, "one run: one tick");
        let t = ticks(&XAxis::Time, a, a + 8.0, 2);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["2026-06-01 03:15:00 UTC", "2026-06-01 03:15:08 UTC"]
        );
    }

    #[test]
    fn ordinal_ticks_name_runs_once() {
        let ids = XAxis::Ordinal(vec!["r1".into(), "r2".into()]);
        let t = ticks(&ids, 0.0, 1.0, 5);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["r1", "r2"]);
        assert_eq!(tick_count(302.0), 2);
        assert_eq!(tick_count(1092.0), 6);
    }
}
