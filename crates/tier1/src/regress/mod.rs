//! Comparison of a run against the accepted anchor: the reference rules of `compare_suite_summaries`
//! (status, speedup, optimized latency with the absolute floor, memory savings points, optimized
//! memory, new and missing targets, anchor declines), refusing runs from different environments;
//! under `detection: statistical` a speed change must also be significant given run-to-run noise
//! (`significance`), else it is recorded as `within_noise`.

mod changes;
mod compare;
mod error;
pub mod noise;
pub(crate) mod pool;
mod settings;
pub(crate) mod significance;
mod single;
pub(crate) mod verdict;

pub(crate) use changes::TargetChanges;
pub use compare::compare_in;
pub(crate) use compare::{Decided, decide_target, find_target};
#[cfg(test)]
pub(crate) use compare::{compare, compare_target};
pub(crate) use error::RegressError;
