//! `tier1-nightly`: the workflow's job chain run locally against the local store, in the same
//! order: validate the request → restore → run → bind → pack → upload evidence → verify its digest →
//! upload the candidate → publish (normal) or promote (accept) after restoring live history again
//! → record the run's conclusion. The same core functions serve the GitHub jobs.

mod decide;
mod error;
pub(crate) mod history_out;
mod housekeeping;
mod job;
mod jobs;
pub(crate) mod locks;
mod outcome;
mod prepare;
mod producer;
mod publication;
mod request;
mod sharded;
mod single;

pub(crate) use error::NightlyError;
pub(crate) use job::RETENTION_DAYS;
pub use job::run;
pub(crate) use outcome::NightlyOutcome;
pub use request::NightlyRequest;
pub(crate) use request::validate_request;
