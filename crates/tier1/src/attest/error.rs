//! Failures of runner attestation, with their exit codes.

use super::record::Attestation;
use crate::exit::{Classify, Exit};
use thiserror::Error;

/// Failures of runner attestation.
#[derive(Debug, Error)]
pub enum RunnerError {
    /// One or more checks failed; the attestation records each of them.
    #[error("runner attestation failed: {}", .failed.join("; "))]
    Failed {
        /// One message per failed check, naming it with its expected and found values.
        failed: Vec<String>,
        /// The full record (printed on stdout even on refusal).
        attestation: Box<Attestation>,
    },
    /// A required input (environment variable or option) is missing or malformed.
    #[error("{what}: expected {expected}, found {found}")]
    Input {
        /// The variable, option or file.
        what: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// The API response is not a jobs API response.
    #[error("{source_name}: not a jobs API response: {message}")]
    Jobs {
        /// File path or URL.
        source_name: String,
        /// Parser message.
        message: String,
    },
    /// The jobs API call failed.
    #[error("jobs API {url}: {message}")]
    Remote {
        /// The URL requested.
        url: String,
        /// What failed (status and body excerpt, or transport error).
        message: String,
    },
    /// The runner version could not be determined.
    #[error("runner version: {0}")]
    Version(String),
    /// Reading or writing a JSON file failed.
    #[error(transparent)]
    Json(#[from] crate::json::JsonError),
}

impl Classify for RunnerError {
    fn exit(&self) -> Exit {
        match self {
            RunnerError::Failed { .. } | RunnerError::Version(_) => Exit::Attestation,
            RunnerError::Input { .. } | RunnerError::Jobs { .. } => Exit::Invalid,
            RunnerError::Remote { .. } => Exit::Remote,
            RunnerError::Json(e) => e.exit(),
        }
    }
}
