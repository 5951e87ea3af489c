//! The evidence package of a run: layout under the evidence root (`artifacts/runs/<run_id>/`),
//! the manifest, binding the identity to the checkout, deterministic packing, and verifying the
//! uploaded artifact's digest and effective retention.

pub mod bind;
pub mod error;
pub mod git;
pub mod layout;
pub mod manifest;
pub mod pack;
pub mod retention;
pub mod verify;

pub use error::EvidenceError;
pub use layout::{
    DEFAULT_EVIDENCE_ROOT, MANIFEST_FILE, RECHECK_INFIX, REPORT_FILE, manifest_rel, report_rel,
    results_rel, run_dirs,
};
