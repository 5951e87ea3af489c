//! The producer step (`tier1-run`): refuse invalid or conflicting history, run the suite, write the
//! evidence package (`<evidence_root>/<run_id>/`: manifest, results, report), compare with the
//! accepted anchor, compare each suspected target side by side with the anchor's own code, or,
//! where side by side cannot run, recheck each speed or latency regression once
//! (`<run_id>__recheck__<key>`), decide the gate, and append the run to the candidate history.

pub(crate) mod candidate;
mod confirm_night;
pub(crate) mod decide;
pub(crate) mod ending;
mod error;
mod execute;
mod inputs;
mod outcome;
pub(crate) mod report;
mod request;
pub(crate) mod setup;
pub(crate) mod shard;
pub(crate) mod side_by_side;
mod step;
mod summary;
pub(crate) mod timings;
pub(crate) mod verdicts;

pub use error::RunError;
pub use inputs::{backend_for, default_run_id_now, detect_git};
pub(crate) use inputs::{default_profile, read_attestations};
pub use outcome::RunOutcome;
pub(crate) use outcome::{Ran, SuiteUsed, TargetFailed};
pub use request::{RunRequest, ShardPlacement};
pub use step::run;
pub(crate) use step::{anchor_summary, run_and_compare};
pub(crate) use summary::build_summary;
