//! GitHub REST access: configuration from the Actions environment, the token (never logged), the
//! client with pagination, retries and the token-free redirect download, and the response types.

pub mod client;
pub mod comments;
pub mod download;
pub mod environments;
pub mod pagination;
pub mod retry;
pub mod types;

pub use client::GithubClient;
pub use retry::RetryPolicy;

use std::fmt;
use std::time::Duration;

/// The `X-GitHub-Api-Version` tier1 sends (the reference implementation's value,
/// upstream-contract §5.1).
pub const API_VERSION: &str = "2026-03-10";

/// The User-Agent tier1 sends.
pub const USER_AGENT: &str = concat!("tier1/", env!("CARGO_PKG_VERSION"));

/// Default REST base URL when `GITHUB_API_URL` is unset.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A bearer token. Its `Debug` and `Display` never show the value.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wrap a token value; from now on it is redacted from every message
    /// ([`crate::text::register_secret`]), even one a server echoes back.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        crate::text::register_secret(&value);
        Token(value)
    }
    /// The secret value, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Everything a client needs: where, which repository, which token, and the timing bounds.
#[derive(Debug, Clone)]
pub struct GithubConfig {
    /// REST base URL without a trailing slash (`GITHUB_API_URL`).
    pub api_url: String,
    /// `owner/name` (`GITHUB_REPOSITORY`).
    pub repository: String,
    /// `GITHUB_TOKEN`.
    pub token: Token,
    /// Retry bounds for idempotent calls.
    pub retry: RetryPolicy,
    /// Longest wait for any single read (headers or a body chunk).
    pub read_timeout: Duration,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
}

/// Environment knobs for tests and slow networks (milliseconds).
const ENV_TIMEOUT_MS: &str = "TIER1_GITHUB_TIMEOUT_MS";
const ENV_RETRY_BASE_MS: &str = "TIER1_GITHUB_RETRY_BASE_MS";
const ENV_MAX_WAIT_MS: &str = "TIER1_GITHUB_MAX_WAIT_MS";
const ENV_ATTEMPTS: &str = "TIER1_GITHUB_ATTEMPTS";

impl GithubConfig {
    /// Build from explicit values with default timing.
    pub fn new(api_url: &str, repository: &str, token: Token) -> Result<Self, GithubError> {
        let repository = repository.trim().to_string();
        let valid = repository
            .split_once('/')
            .is_some_and(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'));
        if !valid {
            return Err(GithubError::Config(format!(
                "repository must be `owner/name`, found {repository:?}"
            )));
        }
        let api_url = api_url.trim().trim_end_matches('/').to_string();
        let parsed = url::Url::parse(&api_url).map_err(|_| {
            GithubError::Config(format!(
                "GITHUB_API_URL is not a URL: {:?}",
                crate::text::redact_urls(&api_url)
            ))
        })?;
        if parsed.query().is_some()
            || parsed.fragment().is_some()
            || !parsed.username().is_empty()
            || parsed.password().is_some()
        {
            return Err(GithubError::Config(format!(
                "GITHUB_API_URL {}: expected a base URL without credentials, query or fragment (routes are appended to it)",
                crate::text::redact_urls(&api_url)
            )));
        }
        if token.expose().trim().is_empty() {
            return Err(GithubError::Config("GITHUB_TOKEN is empty".into()));
        }
        Ok(GithubConfig {
            api_url,
            repository,
            token,
            retry: RetryPolicy::default(),
            read_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(15),
        })
    }

    /// Build from the given API URL (or `GITHUB_API_URL`, default api.github.com), the given repository (or
    /// `GITHUB_REPOSITORY`) and `GITHUB_TOKEN`, then apply the `TIER1_GITHUB_*` timing knobs.
    /// In Actions (`GITHUB_ACTIONS=true`) the token is masked in the job log.
    pub fn from_env(api_url: Option<&str>, repository: Option<&str>) -> Result<Self, GithubError> {
        let api = match api_url {
            Some(u) => u.to_string(),
            None => std::env::var("GITHUB_API_URL").unwrap_or_else(|_| DEFAULT_API_URL.into()),
        };
        let repo = match repository {
            Some(r) => r.to_string(),
            None => std::env::var("GITHUB_REPOSITORY").map_err(|_| {
                GithubError::Config("GITHUB_REPOSITORY is not set and no repository given".into())
            })?,
        };
        let token = std::env::var("GITHUB_TOKEN")
            .map_err(|_| GithubError::Config("GITHUB_TOKEN is not set".into()))?;
        let token = Token::new(token);
        crate::gha::mask(token.expose());
        let mut cfg = GithubConfig::new(&api, &repo, token)?;
        if let Some(ms) = env_ms(ENV_TIMEOUT_MS)? {
            cfg.read_timeout = ms;
            cfg.connect_timeout = cfg.connect_timeout.min(ms);
        }
        if let Some(ms) = env_ms(ENV_RETRY_BASE_MS)? {
            cfg.retry.base_delay = ms;
            cfg.retry.max_delay = ms.saturating_mul(16);
        }
        if let Some(ms) = env_ms(ENV_MAX_WAIT_MS)? {
            cfg.retry.max_server_wait = ms;
        }
        if let Ok(v) = std::env::var(ENV_ATTEMPTS) {
            cfg.retry.max_attempts = v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| {
                    GithubError::Config(format!(
                        "{ENV_ATTEMPTS} must be an integer >= 1, found {v:?}"
                    ))
                })?;
        }
        Ok(cfg)
    }

    /// `/repos/{owner}/{name}`.
    pub fn repo_route(&self) -> String {
        format!("/repos/{}", self.repository)
    }
}

fn env_ms(name: &str) -> Result<Option<Duration>, GithubError> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| {
                GithubError::Config(format!(
                    "{name} must be an integer (milliseconds), found {v:?}"
                ))
            }),
    }
}

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
    pub fn status(&self) -> u16 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_redacted_in_debug() {
        let cfg = GithubConfig::new("http://x/", "o/r", Token::new("s3cret")).unwrap();
        let dbg = format!("{cfg:?}");
        assert!(!dbg.contains("s3cret"), "{dbg}");
        assert_eq!(cfg.api_url, "http://x");
        assert_eq!(cfg.repo_route(), "/repos/o/r");
    }

    #[test]
    fn config_refuses_bad_values() {
        for (api, repo, tok) in [
            ("http://x", "o", "t"),
            ("http://x", "o/r/x", "t"),
            ("not a url", "o/r", "t"),
            ("http://x", "o/r", " "),
        ] {
            assert!(matches!(
                GithubConfig::new(api, repo, Token::new(tok)),
                Err(GithubError::Config(_))
            ));
        }
    }
}
