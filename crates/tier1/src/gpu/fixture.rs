//! A GPU inventory read from JSON (`--inventory-json`): the same records NVML would give, for tests
//! and for replaying a machine's inventory.

use super::error::GpuError;
use super::inventory::Inventory;
use super::record::GpuRecord;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The fixture file: driver facts and one record per GPU, in index order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureInventory {
    /// Driver version.
    #[serde(default)]
    pub(crate) driver_version: Option<String>,
    /// CUDA version the driver supports.
    #[serde(default)]
    pub(crate) cuda_version: Option<String>,
    /// The GPUs; a record's index is its position.
    pub(crate) devices: Vec<GpuRecord>,
}

impl FixtureInventory {
    /// Read a fixture file.
    pub fn read(path: &Path) -> Result<Self, GpuError> {
        Ok(crate::json::read(path)?)
    }
}

impl Inventory for FixtureInventory {
    fn device_count(&self) -> Result<u32, GpuError> {
        Ok(u32::try_from(self.devices.len()).unwrap_or(u32::MAX))
    }

    fn device(&self, index: u32) -> Result<GpuRecord, GpuError> {
        let count = self.device_count()?;
        let mut rec = self
            .devices
            .get(index as usize)
            .cloned()
            .ok_or(GpuError::NoSuchDevice { index, count })?;
        rec.index = index;
        Ok(rec)
    }

    fn driver_version(&self) -> Result<Option<String>, GpuError> {
        Ok(self.driver_version.clone())
    }

    fn cuda_version(&self) -> Result<Option<String>, GpuError> {
        Ok(self.cuda_version.clone())
    }
}
