//! The artifact store flags the binaries share: the store, its clock, and the names of the
//! canonical history's artifacts.

use super::github_args::GithubArgs;
use crate::artifacts::{ArtifactPrefix, DEFAULT_PREFIX};
use crate::store::{StoreConfig, StoreError};
use chrono::{DateTime, Utc};

/// `--store`: which artifact store (`local:DIR` or `github`), as given. A binary for which the
/// store is one source among others (`tier1-dashboard`: `--history-root` or `--store`) flattens
/// this alone and says so in its own help; one that always opens a store flattens [`StoreArgs`].
#[derive(Debug, Clone, clap::Args)]
pub struct StoreSpecArg {
    /// Artifact store: `local:DIR` or `github` (default `github` when GITHUB_ACTIONS=true).
    #[arg(long, env = "TIER1_STORE")]
    pub(crate) store: Option<String>,
}

impl StoreSpecArg {
    /// The store given (flag or `TIER1_STORE`), if any; no default.
    pub fn given(&self) -> Option<&str> {
        self.store.as_deref()
    }
}

/// `--store` and `--now`.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    #[command(flatten)]
    pub(crate) store: StoreSpecArg,
    /// Fixed clock, RFC 3339 (evidence ages and expiry are computed against it).
    #[arg(long, env = "TIER1_NOW")]
    pub(crate) now: Option<DateTime<Utc>>,
}

impl StoreArgs {
    /// The store spec (`store_spec`): the one given, else `github` inside Actions.
    pub fn spec(&self) -> Result<String, StoreError> {
        store_spec(self.store.store.clone())
    }

    /// What opening the store needs besides its spec.
    pub fn config(&self, github: &GithubArgs) -> StoreConfig {
        StoreConfig {
            repository: github.repository().to_string(),
            api_url: Some(github.api_url.clone()),
            now: self.now,
        }
    }
}

/// `--workflow` and `--artifact-prefix`: where the canonical history is looked for.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArtifactsArgs {
    /// Producer workflow file whose runs hold the canonical history.
    #[arg(long, default_value = crate::restore::DEFAULT_WORKFLOW)]
    pub workflow: String,
    /// Artifact prefix of the canonical history: `<prefix>-history-*`, paired with
    /// `<prefix>-evidence-*`.
    #[arg(
        long,
        env = "TIER1_ARTIFACT_PREFIX",
        default_value = DEFAULT_PREFIX,
        value_parser = super::parsers::artifact_prefix
    )]
    pub artifact_prefix: ArtifactPrefix,
}

/// The artifact store spec a binary uses: the one given, else `github` inside Actions; outside
/// Actions one must be given (`local:DIR` or `github`).
pub(crate) fn store_spec(given: Option<String>) -> Result<String, crate::store::StoreError> {
    match given {
        Some(s) => Ok(s),
        None if crate::gha::in_actions() => Ok("github".into()),
        None => Err(crate::store::StoreError::Invalid(
            "--store is required outside GitHub Actions: expected `local:DIR` or `github`".into(),
        )),
    }
}
