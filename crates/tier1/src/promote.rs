//! Protected promotion (`tier1-promote`, contract §6): ratify the candidate's newest run as the
//! canonical anchor after every check of §6.2 in order, then write live history plus the ratified
//! row (chained) to a staged output root, compacted like a publication (`compaction`). A bootstrap
//! promotion starts a new chain.
//!
//! The request and its own checks are `request`; the steps, in order, `steps`; what each step
//! decides, pure functions of what it read, `rules`; what is recorded and written, `output`.

mod error;
mod evidence;
pub mod inputs;
mod output;
mod refusal;
mod request;
pub mod reviews;
mod rules;
mod shards;
mod steps;
#[cfg(test)]
mod tests;

pub use error::PromoteError;
pub use output::PromoteOutcome;
pub use request::PromoteRequest;
pub(crate) use request::check_free_text;
pub use steps::promote;
