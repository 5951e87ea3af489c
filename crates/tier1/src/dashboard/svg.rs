//! Hand-written inline SVG trend charts: accepted runs as a line, anchors marked, rejected evidence
//! as faint points that never move the y-axis (an outlier beyond it is drawn clipped at the edge
//! with a marker), and point thinning that keeps anchors and extremes.

use super::format::esc;
use std::borrow::Borrow;
use std::fmt::Write;

/// Most points drawn per series before thinning starts.
pub(crate) const MAX_POINTS: usize = 200;

/// What a point stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PointKind {
    /// An accepted run (part of the line).
    Accepted,
    /// An accepted anchor (part of the line, marked).
    Anchor,
    /// Rejected evidence (faint, off the line, never scales the axis).
    Rejected,
}

impl PointKind {
    fn on_line(self) -> bool {
        !matches!(self, PointKind::Rejected)
    }
}

/// One data point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    /// Position on the x axis (time in seconds, or an ordinal).
    pub(crate) x: f64,
    /// Value.
    pub(crate) y: f64,
    /// Accepted, anchor or rejected.
    pub(crate) kind: PointKind,
    /// Tooltip text (escaped when drawn).
    pub(crate) label: String,
}

/// A chart to draw.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    /// Accessible name of the chart.
    pub(crate) title: String,
    /// Width in px.
    pub(crate) width: u32,
    /// Height in px.
    pub(crate) height: u32,
    /// Formats a y value for the axis labels.
    pub(crate) fmt_y: fn(Option<f64>) -> String,
    /// What the x values are (ticks under the axis: date and time of day, or run ids).
    pub(crate) x_axis: super::axis::XAxis,
    /// The points in x order.
    pub(crate) points: Vec<Point>,
}

/// The y range drawn: scaled to the accepted points only (rejected points only when nothing
/// was accepted), padded by 10 % of the spread and spanning at least ±5 % of the largest value,
/// so a change below the regression thresholds never looks like a cliff; `None` without points.
pub(crate) fn y_range(points: &[Point]) -> Option<(f64, f64)> {
    let accepted: Vec<f64> = points
        .iter()
        .filter(|p| p.kind.on_line() && p.y.is_finite())
        .map(|p| p.y)
        .collect();
    let ys = if accepted.is_empty() {
        points
            .iter()
            .filter(|p| p.y.is_finite())
            .map(|p| p.y)
            .collect()
    } else {
        accepted
    };
    let lo = ys.iter().copied().reduce(f64::min)?;
    let hi = ys.iter().copied().reduce(f64::max)?;
    let pad = ((hi - lo) * 0.1)
        .max(hi.abs().max(lo.abs()) * 0.05)
        .max(0.01);
    let bottom = if lo >= 0.0 {
        (lo - pad).max(0.0)
    } else {
        lo - pad
    };
    Some((bottom, hi + pad))
}

/// Indices of the points to draw: all when `points.len() <= max`, else the first, the last,
/// every anchor, the global extremes, and the min and max of each of `max / 2` equal buckets.
pub(crate) fn thin<P: Borrow<Point>>(points: &[P], max: usize) -> Vec<usize> {
    let points: Vec<&Point> = points.iter().map(Borrow::borrow).collect();
    let n = points.len();
    if n <= max {
        return (0..n).collect();
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut extremes = (0, 0);
    for (i, p) in points.iter().enumerate() {
        if p.kind == PointKind::Anchor {
            keep[i] = true;
        }
        if p.y < points[extremes.0].y {
            extremes.0 = i;
        }
        if p.y > points[extremes.1].y {
            extremes.1 = i;
        }
    }
    keep[extremes.0] = true;
    keep[extremes.1] = true;
    let buckets = (max / 2).max(1);
    let size = n.div_ceil(buckets);
    for start in (0..n).step_by(size) {
        let end = (start + size).min(n);
        let (mut lo, mut hi) = (start, start);
        for i in start..end {
            if points[i].y < points[lo].y {
                lo = i;
            }
            if points[i].y > points[hi].y {
                hi = i;
            }
        }
        keep[lo] = true;
        keep[hi] = true;
    }
    (0..n).filter(|&i| keep[i]).collect()
}

const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 22.0;

/// Draw the chart as an `<svg>` element: its opening and title, then (with data) the frame and y
/// grid, the x ticks, the rejected evidence (first, so the accepted line stays on top), the line
/// and its points.
pub(crate) fn render(chart: &Chart) -> String {
    let (w, h) = (f64::from(chart.width), f64::from(chart.height));
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(&chart.title)
    );
    let _ = write!(s, "<title>{}</title>", esc(&chart.title));
    let Some((y0, y1)) = y_range(&chart.points) else {
        let _ = write!(
            s,
            r#"<text class="empty" x="{}" y="{}" text-anchor="middle">no data yet</text></svg>"#,
            w / 2.0,
            h / 2.0
        );
        return s;
    };
    let (x_min, x_max) = x_range(&chart.points);
    let f = Frame {
        px0: LEFT,
        px1: w - RIGHT,
        py0: h - BOTTOM,
        py1: TOP,
        x_min,
        x_max,
        y0,
        y1,
    };
    frame_and_grid(&mut s, chart, &f);
    x_ticks(&mut s, chart, &f, h);
    let (line, rejected): (Vec<&Point>, Vec<&Point>) =
        chart.points.iter().partition(|p| p.kind.on_line());
    let line = thinned(&line);
    let rejected = thinned(&rejected);
    for p in &rejected {
        rejected_point(&mut s, &f, p);
    }
    accepted_line(&mut s, &f, &line);
    s.push_str("</svg>");
    s
}

/// The plot area in px and the data ranges it shows.
struct Frame {
    px0: f64,
    px1: f64,
    py0: f64,
    py1: f64,
    x_min: f64,
    x_max: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    /// The x pixel of data value `x` (the middle when every point has one x).
    fn sx(&self, x: f64) -> f64 {
        if self.x_max > self.x_min {
            self.px0 + (x - self.x_min) / (self.x_max - self.x_min) * (self.px1 - self.px0)
        } else {
            (self.px0 + self.px1) / 2.0
        }
    }

    /// The y pixel of data value `y`.
    fn sy(&self, y: f64) -> f64 {
        self.py0 - (y - self.y0) / (self.y1 - self.y0) * (self.py0 - self.py1)
    }
}

/// The plot's frame and three horizontal grid lines with their y labels.
fn frame_and_grid(s: &mut String, chart: &Chart, f: &Frame) {
    let (px0, px1, py0, py1) = (f.px0, f.px1, f.py0, f.py1);
    let _ = write!(
        s,
        r#"<rect class="plot" x="{px0}" y="{py1}" width="{:.1}" height="{:.1}"/>"#,
        px1 - px0,
        py0 - py1
    );
    for frac in [0.0, 0.5, 1.0] {
        let v = f.y0 + (f.y1 - f.y0) * frac;
        let y = f.sy(v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{px0}" y1="{y:.1}" x2="{px1}" y2="{y:.1}"/><text class="axis" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            px0 - 4.0,
            y + 3.5,
            esc(&(chart.fmt_y)(Some(v)))
        );
    }
}

/// The x ticks under the plot, with their labels (`h` is the chart's height).
fn x_ticks(s: &mut String, chart: &Chart, f: &Frame, h: f64) {
    let ticks = super::axis::ticks(
        &chart.x_axis,
        f.x_min,
        f.x_max,
        super::axis::tick_count(f.px1 - f.px0),
    );
    let py0 = f.py0;
    for (i, (x, label)) in ticks.iter().enumerate() {
        let x = f.sx(*x);
        let anchor = tick_anchor(i, ticks.len());
        let _ = write!(
            s,
            r#"<line class="tick" x1="{x:.1}" y1="{py0}" x2="{x:.1}" y2="{:.1}"/><text class="axis x-tick" x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
            py0 + 4.0,
            h - 6.0,
            esc(label)
        );
    }
}

/// The `text-anchor` of tick `i` of `n`: a lone tick centred, the first starting and the last
/// ending at its position (so neither runs off the chart), the others centred.
fn tick_anchor(i: usize, n: usize) -> &'static str {
    let last = n.saturating_sub(1);
    match i {
        _ if n == 1 => "middle",
        0 => "start",
        i if i == last => "end",
        _ => "middle",
    }
}

/// One rejected point: a faint circle, or a marker clipped at the edge it lies beyond.
fn rejected_point(s: &mut String, f: &Frame, p: &Point) {
    let (py0, py1) = (f.py0, f.py1);
    let x = f.sx(p.x);
    let tip = esc(&p.label);
    if p.y > f.y1 {
        let _ = write!(
            s,
            r#"<path class="clipped" d="M{:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z"><title>{tip} (above the axis)</title></path>"#,
            x - 4.0,
            py1 + 7.0,
            x,
            py1,
            x + 4.0,
            py1 + 7.0
        );
    } else if p.y < f.y0 {
        let _ = write!(
            s,
            r#"<path class="clipped" d="M{:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z"><title>{tip} (below the axis)</title></path>"#,
            x - 4.0,
            py0 - 7.0,
            x,
            py0,
            x + 4.0,
            py0 - 7.0
        );
    } else {
        let _ = write!(
            s,
            r#"<circle class="rejected" cx="{x:.1}" cy="{:.1}" r="2.5"><title>{tip}</title></circle>"#,
            f.sy(p.y)
        );
    }
}

/// The accepted line (two points or more), its anchors marked and, up to 60 points, each point.
fn accepted_line(s: &mut String, f: &Frame, line: &[&Point]) {
    if line.len() > 1 {
        s.push_str(r#"<polyline class="line" points=""#);
        for (i, p) in line.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(s, "{sep}{:.1},{:.1}", f.sx(p.x), f.sy(p.y));
        }
        s.push_str(r#""/>"#);
    }
    for p in line {
        let (x, y, tip) = (f.sx(p.x), f.sy(p.y), esc(&p.label));
        if p.kind == PointKind::Anchor {
            let _ = write!(
                s,
                r#"<path class="anchor" d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z"><title>{tip} (anchor)</title></path>"#,
                y - 5.0,
                x + 5.0,
                y + 5.0,
                x - 5.0
            );
        } else if line.len() <= 60 {
            let _ = write!(
                s,
                r#"<circle class="accepted" cx="{x:.1}" cy="{y:.1}" r="2.5"><title>{tip}</title></circle>"#
            );
        }
    }
}

/// The smallest and largest x of `points`.
fn x_range(points: &[Point]) -> (f64, f64) {
    let xs = points.iter().map(|p| p.x);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// The points of `points` drawn, thinned to [`MAX_POINTS`].
fn thinned<'a>(points: &[&'a Point]) -> Vec<&'a Point> {
    thin(points, MAX_POINTS)
        .into_iter()
        .map(|i| points[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_anchors_keep_the_first_and_last_labels_on_the_chart() {
        for (i, n, anchor) in [
            (0, 1, "middle"),
            (0, 2, "start"),
            (1, 2, "end"),
            (0, 3, "start"),
            (1, 3, "middle"),
            (2, 3, "end"),
        ] {
            assert_eq!(tick_anchor(i, n), anchor, "tick {i} of {n}");
        }
    }

    fn pts(ys: &[(f64, PointKind)]) -> Vec<Point> {
        ys.iter()
            .enumerate()
            .map(|(i, &(y, kind))| Point {
                x: i as f64,
                y,
                kind,
                label: format!("run{i}"),
            })
            .collect()
    }

    #[test]
    fn rejected_outlier_never_moves_the_axis_and_is_clipped() {
        use PointKind::*;
        let base = pts(&[(2.0, Anchor), (2.1, Accepted), (1.9, Accepted)]);
        let mut with_outlier = base.clone();
        with_outlier.push(Point {
            x: 3.0,
            y: 2000.0,
            kind: Rejected,
            label: "outlier <b>".into(),
        });
        assert_eq!(y_range(&base), y_range(&with_outlier));
        let (_, top) = y_range(&with_outlier).unwrap();
        assert!(top < 3.0, "axis top {top} follows accepted runs only");
        let svg = render(&Chart {
            title: "t".into(),
            width: 300,
            height: 120,
            fmt_y: super::super::format::speedup,
            x_axis: super::super::axis::XAxis::Ordinal(vec!["a".into(), "b".into()]),
            points: with_outlier,
        });
        assert!(svg.contains(r#"class="clipped""#), "{svg}");
        assert!(svg.contains("outlier &lt;b&gt; (above the axis)"));
        assert!(svg.contains(r#"class="anchor""#));
        assert!(!svg.contains("<b>"));
    }

    #[test]
    fn thinning_keeps_anchors_extremes_and_ends() {
        let mut points: Vec<Point> = (0..1000)
            .map(|i| Point {
                x: f64::from(i),
                y: 2.0 + f64::from(i % 7) * 0.01,
                kind: PointKind::Accepted,
                label: String::new(),
            })
            .collect();
        points[437].kind = PointKind::Anchor;
        points[500].y = 9.0;
        points[600].y = 0.5;
        let kept = thin(&points, MAX_POINTS);
        assert!(kept.len() <= MAX_POINTS + 5, "{} kept", kept.len());
        for i in [0, 437, 500, 600, 999] {
            assert!(kept.contains(&i), "index {i} kept");
        }
        assert_eq!(thin(&points[..50], MAX_POINTS).len(), 50);
    }

    #[test]
    fn empty_chart_says_so() {
        let svg = render(&Chart {
            title: "t".into(),
            width: 100,
            height: 50,
            fmt_y: super::super::format::speedup,
            x_axis: super::super::axis::XAxis::Time,
            points: vec![],
        });
        assert!(svg.contains("no data yet"));
    }
}
