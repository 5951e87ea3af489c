//! The error of a comparison that must not be computed (runs from different environments).

use crate::exit::{Classify, Exit};

/// A comparison that must not be computed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegressError {
    /// The two runs were measured in different environments (backend, device model, profile).
    #[error(
        "refusing to compare run {current} with anchor {anchor}: environment {found:?} differs from the anchor's {expected:?}"
    )]
    EnvironmentMismatch {
        /// Current run id.
        current: String,
        /// Anchor run id.
        anchor: String,
        /// The anchor's environment key.
        expected: String,
        /// The current run's environment key.
        found: String,
    },
}

impl Classify for RegressError {
    fn exit(&self) -> Exit {
        Exit::Invalid
    }
}
