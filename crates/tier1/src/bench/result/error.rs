//! A results file that cannot be used.

/// A results file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// A field has a bad value.
    #[error("{what}: {message}")]
    Invalid {
        /// File, target and field (`benchmark_test_results.json: targets[block_scaling].variants[0]`).
        what: String,
        /// Expected and found.
        message: String,
    },
    /// The file was made for another suite.
    #[error("results are for suite {found}, expected {expected}")]
    SuiteMismatch {
        /// `name v<version>` of the suite given.
        expected: String,
        /// `name v<version>` in the file.
        found: String,
    },
}

impl crate::exit::Classify for ResultError {
    fn exit(&self) -> crate::exit::Exit {
        crate::exit::Exit::Invalid
    }
}

pub(super) fn invalid(what: impl Into<String>, message: impl Into<String>) -> ResultError {
    ResultError::Invalid {
        what: what.into(),
        message: message.into(),
    }
}
