//! GPU inventory: the [`Inventory`] trait (what preflight reads about each visible GPU), its
//! per-GPU record, and the two implementations (NVML on a real machine, JSON fixtures in tests).

pub(crate) mod error;
pub(crate) mod fingerprint;
pub mod fixture;
pub(crate) mod inventory;
pub mod nvml;
pub mod preflight;
pub(crate) mod record;

pub use error::GpuError;
pub use inventory::Inventory;
#[cfg(test)]
pub(crate) use record::{Clocks, GpuRecord, MigMode};
