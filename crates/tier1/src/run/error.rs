//! A run that could not start or complete, and its exit code.

use crate::bench::harness::HarnessError;
use crate::bench::result::ResultError;
use crate::evidence::EvidenceError;
use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use crate::regress::RegressError;

/// A run that could not start or complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The history root fails validation.
    #[error("Refusing to run Tier-1 with invalid canonical history: {0}")]
    InvalidHistory(HistoryError),
    /// The run id or its directories already exist.
    #[error("{0}")]
    Exists(String),
    /// The checkout has changes: refused before anything runs.
    #[error("{0} (or pass --allow-dirty to try the suite without a canonical result)")]
    DirtyCheckout(String),
    /// The harness could not run.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// The results file is invalid.
    #[error(transparent)]
    Result(#[from] ResultError),
    /// The comparison was refused.
    #[error(transparent)]
    Regress(#[from] RegressError),
    /// Writing evidence failed.
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    /// Writing the candidate history failed.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The suite config is invalid.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// An input file (attestation JSON) is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] crate::json::JsonError),
}

impl Classify for RunError {
    fn exit(&self) -> Exit {
        match self {
            RunError::InvalidHistory(e) => e.exit(),
            RunError::Exists(_) => Exit::Conflict,
            RunError::DirtyCheckout(_) => Exit::Invalid,
            RunError::Harness(e) => e.exit(),
            RunError::Result(e) => e.exit(),
            RunError::Regress(e) => e.exit(),
            RunError::Evidence(e) => e.exit(),
            RunError::History(e) => e.exit(),
            RunError::Suite(e) => e.exit(),
            RunError::Input(e) => e.exit(),
        }
    }
}
