//! The [`Inventory`] trait: what preflight reads about the visible GPUs and the driver.

use super::error::GpuError;
use super::record::GpuRecord;

/// What preflight reads: the visible GPUs and the driver.
pub trait Inventory {
    /// Number of visible GPUs.
    fn device_count(&self) -> Result<u32, GpuError>;
    /// The record of GPU `index` (`0..device_count()`).
    fn device(&self, index: u32) -> Result<GpuRecord, GpuError>;
    /// The driver version, e.g. `580.95.05`.
    fn driver_version(&self) -> Result<Option<String>, GpuError>;
    /// The CUDA version the driver supports, e.g. `13.0`.
    fn cuda_version(&self) -> Result<Option<String>, GpuError>;
}
