//! A request the job refuses before doing anything, and its exit code.

use crate::exit::{Classify, Exit};
use crate::store::StoreError;

/// A request the job refuses before doing anything.
#[derive(Debug, thiserror::Error)]
pub enum NightlyError {
    /// The request breaks a rule of the workflow's request validation.
    #[error("{0}")]
    Request(String),
    /// The checkout cannot be bound.
    #[error("{0}")]
    Checkout(String),
    /// The store could not be opened or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An output root (`--store`, `--history-out`) is unusable: the message names it and the
    /// input it collides with; the exit code is the output-root rule's.
    #[error("{0}")]
    Output(String, Exit),
    /// SIGINT or SIGTERM arrived before the run was recorded.
    #[error("{0}")]
    Cancelled(crate::process::Cancelled),
    /// `--suite-config` is unreadable or invalid, or the workflow or artifact prefix (flag or
    /// suite field) is not usable.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
}

impl Classify for NightlyError {
    fn exit(&self) -> Exit {
        match self {
            NightlyError::Request(_) | NightlyError::Checkout(_) => Exit::Invalid,
            NightlyError::Store(e) => e.exit(),
            NightlyError::Output(_, exit) => *exit,
            NightlyError::Cancelled(_) => Exit::Cancelled,
            NightlyError::Suite(e) => e.exit(),
        }
    }
}
