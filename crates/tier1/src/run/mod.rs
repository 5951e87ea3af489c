//! The producer step (`tier1-run`): refuse invalid or conflicting history, run the suite, write the
//! evidence package (`<evidence_root>/<run_id>/`: manifest, results, report), compare with the
//! accepted anchor, recheck each speed or latency regression once (`<run_id>__recheck__<key>`),
//! decide the gate, and append the run to the candidate history.

pub mod candidate;
mod error;
mod execute;
mod inputs;
mod outcome;
pub mod report;
mod request;
pub mod setup;
pub mod side_by_side;
mod step;
mod summary;
pub mod verdicts;

pub use error::RunError;
pub use inputs::{
    backend_for, default_profile, default_run_id, default_run_id_now, detect_git, read_attestations,
};
pub use outcome::{Ran, RunOutcome, SuiteUsed, TargetFailed};
pub use request::RunRequest;
pub use step::{run, run_and_compare};
pub use summary::build_summary;
