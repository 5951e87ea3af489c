//! Why a suite run cannot start or be recorded ([`HarnessError`]), and the exit status of each.

/// A suite run that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The profile is not in the suite.
    #[error("profile {profile:?} is not in suite {suite} (profiles: {known})")]
    UnknownProfile {
        /// Asked for.
        profile: String,
        /// Suite name.
        suite: String,
        /// Known profiles.
        known: String,
    },
    /// The profile is for another backend.
    #[error("profile {profile:?} is for the {expected} backend, found backend {found}")]
    BackendMismatch {
        /// Profile name.
        profile: String,
        /// The profile's backend.
        expected: String,
        /// The backend given.
        found: String,
    },
    /// `only` names a key that is not in the suite.
    #[error("target {0:?} is not in the suite")]
    UnknownTarget(String),
    /// The run id is not safe.
    #[error("run id {0:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    BadRunId(String),
    /// The results file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The destination already holds a results file.
    #[error("{0}: already exists; refusing to overwrite")]
    Exists(String),
    /// The run would record more than its evidence package can hold (`crate::bench::limits`):
    /// stopped before anything was written.
    #[error("{0}")]
    TooLarge(String),
    /// SIGINT or SIGTERM arrived: the suite stopped and its results were discarded.
    #[error("the suite was {0} while running target {1}; its results were discarded")]
    Cancelled(crate::process::Cancelled, String),
}

impl crate::exit::Classify for HarnessError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            HarnessError::Write { source, .. } => crate::exit::of_io(source),
            HarnessError::Exists(_) => crate::exit::Exit::Conflict,
            HarnessError::Cancelled(..) => crate::exit::Exit::Cancelled,
            _ => crate::exit::Exit::Invalid,
        }
    }
}
