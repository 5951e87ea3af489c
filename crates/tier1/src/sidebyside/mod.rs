//! Side by side with the anchor's own code: a clean git worktree at a recorded commit, built once
//! per commit into a verified cache (`build_cache`; an entry is trusted only when signed with the
//! builder's private key: `cache_key`, `entry_trust`), then measured interleaved with the current
//! build, round by round, each invocation a separate process from its own worktree
//! (`measure`); the paired ratios current/anchor decide `worse`, `same` or `unknown`
//! (`decide`, recorded as an `outcome`). [`confirm()`] is the one entry point (docs/formats.md,
//! "Side-by-side outcome").

pub(crate) mod build_cache;
pub(crate) mod build_step;
pub(crate) mod cache_key;
pub mod confirm;
pub(crate) mod decide;
pub(crate) mod entry_trust;
pub(crate) mod fetch;
pub(crate) mod git;
pub(crate) mod measure;
pub(crate) mod outcome;
pub(crate) mod remote;
pub(crate) mod rounds;
pub mod running;
pub(crate) mod worktree;

pub use build_cache::default_cache_dir;
pub use cache_key::Builder;
pub use confirm::ConfirmRequest;
pub use confirm::confirm;
pub use confirm::{InPlace, confirm_from};
pub(crate) use outcome::RatioCi;
pub use outcome::{Budget, Cause, DecideOn, Side, SideBySideOutcome, Stop, Verdict};
