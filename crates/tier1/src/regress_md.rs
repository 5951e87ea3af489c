//! `regression_summary.md`: the reference `render_regression_summary` Markdown of a comparison
//! (header, runs, counts, warnings, change tables, suppressed regressions, new and missing
//! targets), plus tier1's detection sections when the comparison carries them: changes within
//! noise, inconclusive targets and the detection method.

mod cells;
mod summary;
mod verdicts;

pub(crate) use cells::cell;
pub use summary::render;
pub(crate) use summary::render_titled;

#[cfg(test)]
mod tests;
