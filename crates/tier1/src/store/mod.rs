//! The `ArtifactStore` trait: what restore, publish and promote need from "GitHub Actions artifacts"
//! and from the vault of sealed history segments, with two backends, `local` (a directory that
//! models runs, artifacts and the vault) and `github` (REST: artifacts and immutable releases).

pub(crate) mod artifact_store;
pub(crate) mod error;
pub mod github;
mod github_vault;
pub mod local;
mod local_check;
pub(crate) mod local_lease;
mod local_vault;
pub(crate) mod open;
pub(crate) mod records;
pub mod vault;

pub use artifact_store::ArtifactStore;
pub use error::StoreError;
pub(crate) use open::StoreConfig;
pub use open::open_store;
pub use records::{ArtifactMeta, WorkflowRun};
pub(crate) use records::{
    ArtifactProvenance, ArtifactRule, Downloaded, Listing, RepositoryRef, RunProvenance, Skipped,
};
pub use vault::VaultObject;
