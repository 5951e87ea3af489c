//! The GitHub flags the binaries share: the REST API base URL and the repository.

/// `--api-url` and `--repository`, with their Actions environment fallbacks. A binary that must
/// have the repository marks it required, and one that says more of it says so in its own help:
/// `#[command(mut_arg("repository", |a| a.required(true)))]`.
#[derive(Debug, Clone, clap::Args)]
pub struct GithubArgs {
    /// REST API base URL (GitHub).
    #[arg(long, env = "GITHUB_API_URL", default_value = crate::github::DEFAULT_API_URL)]
    pub api_url: String,
    /// `owner/name` of the repository.
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub repository: Option<String>,
}

impl GithubArgs {
    /// The repository given, or `""` when none was.
    pub fn repository(&self) -> &str {
        self.repository.as_deref().unwrap_or_default()
    }
}
