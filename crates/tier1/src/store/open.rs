//! Opening a store from its spec (`local:DIR` or `github`).

use super::artifact_store::ArtifactStore;
use super::error::StoreError;
use super::{github, local};
use chrono::{DateTime, Utc};

/// What opening a store needs besides its spec.
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// `owner/name` the caller works for.
    pub(crate) repository: String,
    /// REST base URL (`GITHUB_API_URL`), for the github store.
    pub(crate) api_url: Option<String>,
    /// Fixed clock (`--now`); None: the system clock.
    pub(crate) now: Option<DateTime<Utc>>,
}

/// Open a store from its spec: `local:DIR` (an existing local store) or `github`.
pub fn open_store(spec: &str, cfg: &StoreConfig) -> Result<Box<dyn ArtifactStore>, StoreError> {
    if let Some(dir) = spec.strip_prefix("local:") {
        if dir.is_empty() {
            return Err(StoreError::Invalid(
                "store spec `local:` needs a directory: expected `local:DIR`".into(),
            ));
        }
        let mut s = local::LocalStore::open(std::path::Path::new(dir))?;
        if !cfg.repository.is_empty() && cfg.repository != s.repository() {
            return Err(StoreError::Invalid(format!(
                "local store {dir} models repository {}, not {}: omit --repository (and GITHUB_REPOSITORY) to restore it under its own name (docs/local-store.md)",
                s.repository(),
                cfg.repository
            )));
        }
        if let Some(now) = cfg.now {
            s = s.with_now(now);
        }
        return Ok(Box::new(s));
    }
    if spec == "github" {
        let repository = (!cfg.repository.is_empty()).then_some(cfg.repository.as_str());
        let mut s = github::GithubStore::from_env(cfg.api_url.as_deref(), repository)?;
        if let Some(now) = cfg.now {
            s = s.with_now(now);
        }
        return Ok(Box::new(s));
    }
    Err(StoreError::Invalid(format!(
        "unknown store {spec:?}: expected `local:DIR` or `github`"
    )))
}
