//! The evidence package of a run: layout under the evidence root (`artifacts/runs/<run_id>/`),
//! the manifest, binding the identity to the checkout, deterministic packing, and verifying the
//! uploaded artifact's digest and effective retention.

pub mod bind;
pub(crate) mod error;
pub(crate) mod git;
pub(crate) mod layout;
pub(crate) mod manifest;
pub mod pack;
pub(crate) mod packable;
pub(crate) mod refs;
pub(crate) mod retention;
pub mod verify;

pub(crate) use error::EvidenceError;
pub(crate) use layout::{
    MANIFEST_FILE, REPORT_FILE, manifest_rel, report_rel, results_rel, run_dirs,
};
