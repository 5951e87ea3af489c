//! Client configuration: the API URL, repository and token from the Actions environment, the
//! request headers' constants, and the `TIER1_GITHUB_*` timing knobs.

use super::error::GithubError;
use super::retry::RetryPolicy;
use super::token::Token;
use std::time::Duration;

/// The `X-GitHub-Api-Version` tier1 sends (the reference implementation's value,
/// `docs/contract.md` §5.1).
pub(crate) const API_VERSION: &str = "2026-03-10";

/// The User-Agent tier1 sends.
pub(crate) const USER_AGENT: &str = concat!("tier1/", env!("CARGO_PKG_VERSION"));

/// Default REST base URL when `GITHUB_API_URL` is unset.
pub(crate) const DEFAULT_API_URL: &str = "https://api.github.com";

/// Everything a client needs: where, which repository, which token, and the timing bounds.
#[derive(Debug, Clone)]
pub struct GithubConfig {
    /// REST base URL without a trailing slash (`GITHUB_API_URL`).
    pub(crate) api_url: String,
    /// `owner/name` (`GITHUB_REPOSITORY`).
    pub(crate) repository: String,
    /// `GITHUB_TOKEN`.
    pub token: Token,
    /// Retry bounds for idempotent calls.
    pub retry: RetryPolicy,
    /// Longest wait for any single read (headers or a body chunk).
    pub read_timeout: Duration,
    /// Longest wait for a connection.
    pub(crate) connect_timeout: Duration,
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
    pub(crate) fn repo_route(&self) -> String {
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
