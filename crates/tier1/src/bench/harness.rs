//! The harness: per target, verification first (outside timing), then timing by rounds
//! ([`sampling`](crate::bench::sampling): batched samples, variants interleaved in a shuffled
//! order, rounds added until the speedup and optimized time are precise or the budget is spent),
//! with the machine's state recorded around it and one re-measurement when the device throttled;
//! a panic or a run past `profile.timeout_s` fails that target only.
//!
//! The suite run and its passes (`suite_run`), one built-in target on its own thread
//! (`builtin`), the results file written once (`write`) and why a run cannot start (`error`).

mod builtin;
mod error;
mod suite_run;
mod write;

pub use crate::bench::options::HarnessOptions;
pub use crate::bench::options::Hook;
pub use error::HarnessError;
pub use suite_run::run_suite;
pub(crate) use suite_run::{MEASURE_LOCK, run_suite_timed};
pub use write::write_results;
