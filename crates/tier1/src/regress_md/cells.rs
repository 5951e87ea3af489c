//! The text of the summary's lines and table cells: numbers as the reference prints them, and text
//! made safe inside a cell, a list item or a code span.

use crate::history::model::ChangeRow;
use std::fmt::Write;

pub(super) fn line(md: &mut String, args: std::fmt::Arguments<'_>) {
    // Writing to a String cannot fail.
    let _ = md.write_fmt(args);
    md.push('\n');
}

/// Before, after and delta cells: delta is `delta_pct`, else `delta_points`, formatted `+.2f`.
pub(crate) fn cells(row: &ChangeRow) -> (String, String, String) {
    match row {
        ChangeRow::Status { before, after, .. } => (cell(before), cell(after), "-".into()),
        ChangeRow::Speedup {
            before,
            after,
            delta_pct,
            ..
        }
        | ChangeRow::OptimizedLatency {
            before,
            after,
            delta_pct,
            ..
        }
        | ChangeRow::OptimizedMemory {
            before,
            after,
            delta_pct,
            ..
        } => (num(*before), num(*after), signed(*delta_pct)),
        ChangeRow::MemorySavings {
            before,
            after,
            delta_points,
            ..
        } => (num(*before), num(*after), signed(*delta_points)),
    }
}

/// A number as Python's `str(float)` prints ordinary values (`2.0`, `2.49`).
pub(super) fn num(x: impl Into<f64>) -> String {
    let x: f64 = x.into();
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

pub(super) fn opt_num(x: Option<impl Into<f64>>) -> String {
    x.map_or_else(|| "-".into(), num)
}

pub(super) fn signed(x: impl Into<f64>) -> String {
    format!("{:+.2}", x.into())
}

/// Text safe inside a table cell: no line breaks, escaped pipes, no backticks.
pub(crate) fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

/// Text safe inside a list item or code span: no line breaks or backticks.
pub(crate) fn inline(s: &str) -> String {
    s.replace(['\n', '\r'], " ").replace('`', "'")
}
