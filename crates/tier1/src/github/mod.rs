//! GitHub REST access: configuration from the Actions environment, the token (never logged), the
//! client with pagination, retries and the token-free redirect download, and the response types.

pub(crate) mod client;
pub mod comments;
pub(crate) mod config;
pub(crate) mod download;
pub(crate) mod environments;
pub(crate) mod error;
pub(crate) mod pagination;
pub(crate) mod retry;
pub(crate) mod token;
pub(crate) mod types;

pub use client::GithubClient;
pub use config::GithubConfig;
pub(crate) use config::{API_VERSION, DEFAULT_API_URL, USER_AGENT};
pub(crate) use error::GithubError;
pub use token::Token;
