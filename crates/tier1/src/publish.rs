//! Normal publication (`tier1-publish`, contract §6.5 with tier1's extensions): merge a producer's
//! candidate run into live canonical history as evidence. It never publishes an anchor; a candidate
//! compared against a superseded anchor is kept as stale, ineligible evidence. The output index extends
//! the live hash chain (live rows unchanged as a prefix); the output tree is staged, compacted when
//! it would approach restore's caps (`compaction`), checked to be restorable, then renamed.
//!
//! The request and the outcome are `request`; the steps, in order, `merge`; what each step
//! decides, pure functions of what it read, `checks`; the refusals, `error`.

mod checks;
mod error;
mod merge;
mod request;

pub(crate) use checks::{check_paths_bound, check_suite_identity, check_summary_identity};
pub use error::PublishError;
pub use merge::merge;
pub use request::{MergeOutcome, MergeRequest};
