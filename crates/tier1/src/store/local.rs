//! The local artifact store: a directory that models GitHub Actions runs and artifacts
//! (`store.json` + `artifacts/<id>.bin`), with a settable clock, derived expiry, and atomic writes
//! serialized by an exclusive lock on `store.lock`. No file of the store is opened through a
//! symbolic link; the bookkeeping is checked against the disk before ids are handed out
//! (`local_check`), and runs may hold a lease that tells an abandoned run from a live one
//! (`local_lease`). The vault of sealed history segments is `local_vault`. Layout documented in
//! docs/local-store.md.

mod artifact_store;
mod cache;
mod files;
mod runs;
mod state;
mod upload;

pub(crate) use super::local_check::{ARTIFACTS_DIR, KEPT_WORK_DIR, VAULT_DIR};
pub use artifact_store::strip_ref;
pub use files::LocalStore;
pub use state::{NewRun, StoreState, StoredArtifact};

#[cfg(test)]
mod tests;
