//! A failed GitHub call, naming the endpoint (never the token), with its exit code.

/// A GitHub call that failed. Messages name the endpoint (method and path, never the token).
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// Missing or malformed configuration.
    #[error("GitHub configuration: {0}")]
    Config(String),
    /// GitHub answered with a non-success status (after retries where allowed).
    #[error("{endpoint}: HTTP {status}: {message}")]
    Status {
        /// `GET /repos/...`.
        endpoint: String,
        /// HTTP status.
        status: u16,
        /// GitHub's `message`, or the reason retries stopped.
        message: String,
    },
    /// The connection failed, timed out, or broke mid-body.
    #[error("{endpoint}: transport error: {message}")]
    Transport {
        /// `GET /repos/...`.
        endpoint: String,
        /// The cause.
        message: String,
    },
    /// The body is not the JSON shape expected.
    #[error("{endpoint}: unexpected response body: {message}")]
    Decode {
        /// `GET /repos/...`.
        endpoint: String,
        /// The serde error.
        message: String,
    },
    /// The resource is gone (HTTP 410: an expired or deleted artifact).
    #[error("{endpoint}: HTTP 410: gone (expired or deleted)")]
    Gone {
        /// `GET /repos/...`.
        endpoint: String,
    },
    /// Downloaded bytes disagree with the metadata (length, cap, digest).
    #[error("{endpoint}: {message}")]
    Integrity {
        /// The download endpoint.
        endpoint: String,
        /// Expected and found values.
        message: String,
    },
    /// Pagination could not reach the last page (a `Link` loop, a page cap, or fewer items than
    /// `total_count`): discovery is incomplete.
    #[error("{endpoint}: incomplete listing: {message}")]
    Incomplete {
        /// `GET /repos/...`.
        endpoint: String,
        /// What went wrong.
        message: String,
    },
}

impl GithubError {
    /// HTTP status of a `Status` error, 0 otherwise.
    pub(crate) fn status(&self) -> u16 {
        match self {
            GithubError::Status { status, .. } => *status,
            _ => 0,
        }
    }
}

impl crate::exit::Classify for GithubError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            GithubError::Config(_) => Exit::Invalid,
            GithubError::Status { status: 404, .. } => Exit::Unavailable,
            GithubError::Incomplete { .. } | GithubError::Integrity { .. } => Exit::Integrity,
            GithubError::Gone { .. } => Exit::Unavailable,
            GithubError::Status { .. } | GithubError::Transport { .. } => Exit::Remote,
            GithubError::Decode { .. } => Exit::Remote,
        }
    }
}
