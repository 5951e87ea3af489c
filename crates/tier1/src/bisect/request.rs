//! What a bisection is asked ([`BisectRequest`]) and why it could not complete
//! ([`BisectError`], with its exit codes).

use crate::sidebyside::{Budget, DecideOn};
use crate::suite::Suite;
use std::path::Path;

/// What to bisect.
#[derive(Debug, Clone)]
pub struct BisectRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// Profile.
    pub profile: &'a str,
    /// The target that changed.
    pub target_key: &'a str,
    /// A commit without the change (the anchor's, or the last accepted night's).
    pub good: &'a str,
    /// A commit with the change (taken as bad; not measured).
    pub bad: &'a str,
    /// The repository.
    pub repo_root: &'a Path,
    /// The build cache.
    pub cache_dir: &'a Path,
    /// Where `bisect.json` and `steps/` go (absent or empty).
    pub output_dir: &'a Path,
    /// Budget of each comparison.
    pub budget: Budget,
    /// Threshold (percent) of each comparison.
    pub threshold_pct: f64,
    /// Seed of the order of the builds in each round.
    pub seed: u64,
    /// Which metrics show the change (both, unless it is a change of one).
    pub decide_on: DecideOn,
}

/// Why a bisection could not complete.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The request is not usable (no repository, unknown commit, good not before bad, unknown
    /// target or profile, bad budget).
    #[error("{0}")]
    Invalid(String),
    /// The good commit cannot be built or run: there is nothing to compare with.
    #[error("{0}")]
    GoodUnusable(String),
    /// The output directory already holds data.
    #[error("{0}")]
    Conflict(String),
    /// Writing the report failed.
    #[error("{0}")]
    Io(String),
    /// SIGINT or SIGTERM arrived.
    #[error("{0}")]
    Cancelled(String),
}

impl crate::exit::Classify for BisectError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            BisectError::Invalid(_) => Exit::Invalid,
            BisectError::GoodUnusable(_) => Exit::Unavailable,
            BisectError::Conflict(_) => Exit::Conflict,
            BisectError::Io(_) => Exit::Io,
            BisectError::Cancelled(_) => Exit::Cancelled,
        }
    }
}
