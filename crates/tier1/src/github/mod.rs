//! GitHub REST access: configuration from the Actions environment, the token (never logged), the
//! client with pagination, retries and the token-free redirect download, and the response types.

pub mod client;
pub mod comments;
pub mod config;
pub mod download;
pub mod environments;
pub mod error;
pub mod pagination;
pub mod retry;
pub mod token;
pub mod types;

pub use client::GithubClient;
pub use config::{API_VERSION, DEFAULT_API_URL, GithubConfig, USER_AGENT};
pub use error::GithubError;
pub use retry::RetryPolicy;
pub use token::Token;
