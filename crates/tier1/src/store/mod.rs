//! The `ArtifactStore` trait: what restore, publish and promote need from "GitHub Actions artifacts",
//! with two backends, `local` (a directory that models runs and artifacts) and `github` (REST).

pub mod artifact_store;
pub mod error;
pub mod github;
pub mod local;
mod local_check;
pub mod local_lease;
pub mod open;
pub mod records;

pub use artifact_store::{ArtifactStore, GITHUB_BOOTSTRAP_HINT};
pub use error::{StoreError, skipped_error};
pub use open::{StoreConfig, open_store};
pub use records::{
    ArtifactMeta, ArtifactProvenance, ArtifactRule, Downloaded, Listing, RepositoryRef,
    RunProvenance, Skipped, WorkflowRun,
};
