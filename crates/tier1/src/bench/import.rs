//! Importers: a command target with a tool's `format` (pytest-benchmark, Google Benchmark,
//! criterion, hyperfine, nvbench; `crate::suite::OutputFormat`) is run with the tool's own
//! command, and its output is read here: every benchmark the tool reports with its samples (time
//! of one execution, ms), then the suite's `variants` pick the baseline and the optimized ones by
//! the names the tool prints. A benchmark the tool reports as failed, one the suite names and the
//! output lacks, or one it reports twice, fails the target with a message naming it and what the
//! output holds.

mod criterion;
mod google_benchmark;
mod hyperfine;
mod measured;
mod nvbench;
mod pytest;
mod select;
mod variants;

pub(crate) use measured::Measured;
pub(crate) use select::{command_flags, short_pass};
pub(crate) use variants::{ToolOutput, variants};

#[cfg(test)]
mod tests;
