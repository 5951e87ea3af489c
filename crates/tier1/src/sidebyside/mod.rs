//! Side by side with the anchor's own code: a clean git worktree at a recorded commit, built once
//! per commit into a verified cache ([`build_cache`]), then measured interleaved with the current
//! build, round by round, each invocation a separate process from its own worktree
//! ([`measure`]); the paired ratios current/anchor decide `worse`, `same` or `unknown`
//! ([`decide`], recorded as an [`outcome`]). [`confirm()`] is the one entry point (docs/formats.md,
//! "Side-by-side outcome").

pub mod build_cache;
pub mod build_step;
pub mod confirm;
pub mod decide;
pub mod git;
pub mod measure;
pub mod outcome;
pub mod worktree;

pub use build_cache::default_cache_dir;
pub use build_step::BuildStep;
pub use confirm::{ConfirmRequest, InPlace, confirm, confirm_from};
pub use outcome::{
    Budget, BuildRecord, Cause, DecideOn, Problem, RatioCi, Side, SideBySideOutcome, Stop, Verdict,
};
