//! The `ArtifactStore` trait: what restore, publish and promote need from "GitHub Actions artifacts",
//! with two backends, `local` (a directory that models runs and artifacts) and `github` (REST).

pub(crate) mod artifact_store;
pub(crate) mod error;
pub mod github;
pub mod local;
mod local_check;
pub(crate) mod local_lease;
pub(crate) mod open;
pub(crate) mod records;

pub use artifact_store::ArtifactStore;
pub use error::StoreError;
pub(crate) use open::StoreConfig;
pub use open::open_store;
pub use records::{ArtifactMeta, WorkflowRun};
pub(crate) use records::{
    ArtifactProvenance, ArtifactRule, Downloaded, Listing, RepositoryRef, RunProvenance, Skipped,
};
