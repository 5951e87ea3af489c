//! GPU inventory: the [`Inventory`] trait (what preflight reads about each visible GPU), its
//! per-GPU record, and the two implementations (NVML on a real machine, JSON fixtures in tests).

pub mod error;
pub mod fingerprint;
pub mod fixture;
pub mod inventory;
pub mod nvml;
pub mod preflight;
pub mod record;

pub use error::GpuError;
pub use inventory::Inventory;
pub use record::{Clocks, GpuRecord, MigMode};
