//! `tier1-compare`: the pull request preview. Restore the default branch's canonical history with
//! every check restore makes into a scratch directory, run the suite on the checked-out commit
//! through `run::run_and_compare` against that scratch copy (so the anchor, the rechecks, the
//! noise history, the detection rule and the gate are the nightly's by construction), and write
//! the comparison: `preview.json` (also on stdout), `regression_summary.{json,md}`, `comment.md`
//! and the step summary, all saying "preview, not canonical". The scratch history and evidence are
//! deleted afterwards: a preview writes no history and uploads nothing.

mod compare;
mod error;
pub(crate) mod markdown;
mod outcome;
mod outputs;
pub mod post;
mod request;
pub(crate) mod rows;

pub use compare::{default_run_id, preview};
pub use error::PreviewError;
pub use outcome::PreviewOutcome;
pub(crate) use outputs::STEP_SUMMARY_MAX_CHARS;
pub use request::PreviewRequest;
