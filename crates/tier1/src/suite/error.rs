//! Why a suite file cannot be used: [`SuiteError`] and its exit code.

#[cfg(doc)]
use super::Suite;

/// A suite file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML is malformed or has unknown fields or bad values.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser message, with line and column.
        message: String,
    },
    /// The YAML parses but violates a suite rule.
    #[error("{path}: line {line}: {message}")]
    Rule {
        /// The file.
        path: String,
        /// 1-based line of the offending item (0 when unknown).
        line: usize,
        /// What is wrong, with expected and found values.
        message: String,
    },
    /// No suite file can be chosen (see [`Suite::discover`]).
    #[error("suite: {message}")]
    Choice {
        /// Which files were considered and what to pass.
        message: String,
    },
}

impl crate::exit::Classify for SuiteError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            SuiteError::Io { source, .. } => crate::exit::of_io(source),
            _ => crate::exit::Exit::Invalid,
        }
    }
}
