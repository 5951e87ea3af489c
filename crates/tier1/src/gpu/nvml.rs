//! The NVML inventory: reads each GPU through `nvml-wrapper` (loaded at run time). It only reads;
//! MIG settings are never changed (`set_mig_mode` is a disallowed method in `clippy.toml`).

use super::error::GpuError;
use super::inventory::Inventory;
use super::record::{Clocks, GpuRecord, MigMode};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, EccCounter, MemoryError, TemperatureSensor};
use nvml_wrapper::error::NvmlError;
use std::ffi::OsStr;

/// The library NVML loads by default.
pub(crate) const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";

/// NVML's `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLE: u32 = 1;

/// A loaded NVML.
pub struct NvmlInventory {
    nvml: Nvml,
}

impl std::fmt::Debug for NvmlInventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NvmlInventory")
    }
}

impl NvmlInventory {
    /// Load and initialise NVML from `library` (default `DEFAULT_LIBRARY`). A missing library or
    /// driver is an error value, never a panic.
    pub fn open(library: Option<&str>) -> Result<Self, GpuError> {
        let lib = library.unwrap_or(DEFAULT_LIBRARY);
        let mut builder = Nvml::builder();
        builder.lib_path(OsStr::new(lib));
        let nvml = builder.init().map_err(|e| GpuError::NvmlUnavailable {
            library: lib.to_string(),
            message: e.to_string(),
        })?;
        Ok(NvmlInventory { nvml })
    }
}

fn query(index: u32, field: &str, e: NvmlError) -> GpuError {
    GpuError::Query {
        index: index.to_string(),
        field: field.to_string(),
        message: e.to_string(),
    }
}

/// A field the GPU may not support: `NotSupported` becomes None, other errors fail.
fn optional<T>(index: u32, field: &str, r: Result<T, NvmlError>) -> Result<Option<T>, GpuError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(NvmlError::NotSupported) => Ok(None),
        Err(e) => Err(query(index, field, e)),
    }
}

fn mig(raw: u32) -> MigMode {
    if raw == MIG_ENABLE {
        MigMode::Enabled
    } else {
        MigMode::Disabled
    }
}

/// NVML's flag names in lower case (`sw_power_cap`, ...); `none` and an empty set give no entry.
fn throttle_names(reasons: nvml_wrapper::bitmasks::device::ThrottleReasons) -> Vec<String> {
    reasons
        .iter_names()
        .map(|(name, _)| name.to_ascii_lowercase())
        .filter(|n| n != "none")
        .collect()
}

impl Inventory for NvmlInventory {
    fn device_count(&self) -> Result<u32, GpuError> {
        self.nvml.device_count().map_err(|e| GpuError::Query {
            index: "*".to_string(),
            field: "device_count".to_string(),
            message: e.to_string(),
        })
    }

    fn device(&self, index: u32) -> Result<GpuRecord, GpuError> {
        let d = self
            .nvml
            .device_by_index(index)
            .map_err(|e| query(index, "handle", e))?;
        let (mig_current, mig_pending) = match optional(index, "mig_mode", d.mig_mode())? {
            Some(m) => (mig(m.current), mig(m.pending)),
            None => (MigMode::Unsupported, MigMode::Unsupported),
        };
        let ecc = optional(index, "ecc_mode", d.is_ecc_enabled())?;
        let ecc_on = ecc.as_ref().is_some_and(|e| e.currently_enabled);
        let ecc_count = |kind: MemoryError, field: &str| -> Result<Option<u64>, GpuError> {
            if !ecc_on {
                return Ok(None);
            }
            optional(index, field, d.total_ecc_errors(kind, EccCounter::Volatile))
        };
        let clock = |c: Clock, field: &str| optional(index, field, d.clock_info(c));
        let max_clock = |c: Clock, field: &str| optional(index, field, d.max_clock_info(c));
        Ok(GpuRecord {
            index,
            name: d.name().map_err(|e| query(index, "name", e))?,
            uuid: d.uuid().map_err(|e| query(index, "uuid", e))?,
            memory_total_bytes: optional(index, "memory", d.memory_info())?.map(|m| m.total),
            mig_current,
            mig_pending,
            ecc_enabled: ecc.as_ref().map(|e| e.currently_enabled),
            ecc_pending: ecc.as_ref().map(|e| e.pending_enabled),
            ecc_errors_corrected: ecc_count(MemoryError::Corrected, "ecc_errors_corrected")?,
            ecc_errors_uncorrected: ecc_count(MemoryError::Uncorrected, "ecc_errors_uncorrected")?,
            persistence_mode: optional(index, "persistence_mode", d.is_in_persistent_mode())?,
            clocks: Clocks {
                graphics_mhz: clock(Clock::Graphics, "clock_graphics")?,
                sm_mhz: clock(Clock::SM, "clock_sm")?,
                memory_mhz: clock(Clock::Memory, "clock_memory")?,
                max_sm_mhz: max_clock(Clock::SM, "max_clock_sm")?,
                max_memory_mhz: max_clock(Clock::Memory, "max_clock_memory")?,
            },
            throttle_reasons: optional(index, "throttle_reasons", d.current_throttle_reasons())?
                .map(throttle_names)
                .unwrap_or_default(),
            temperature_c: optional(index, "temperature", d.temperature(TemperatureSensor::Gpu))?,
        })
    }

    fn driver_version(&self) -> Result<Option<String>, GpuError> {
        optional(0, "driver_version", self.nvml.sys_driver_version())
    }

    fn cuda_version(&self) -> Result<Option<String>, GpuError> {
        Ok(
            optional(0, "cuda_version", self.nvml.sys_cuda_driver_version())?
                .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_an_error_value() {
        let err = NvmlInventory::open(Some("/nonexistent/libnvidia-ml.so.1")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("NVML unavailable: expected the NVIDIA driver's /nonexistent/libnvidia-ml.so.1 to load"), "{msg}");
        assert_eq!(
            crate::exit::Classify::exit(&err),
            crate::exit::Exit::Attestation
        );
    }

    #[test]
    fn throttle_names_are_lower_case_flags() {
        use nvml_wrapper::bitmasks::device::ThrottleReasons as T;
        assert_eq!(
            throttle_names(T::SW_POWER_CAP | T::HW_SLOWDOWN),
            ["sw_power_cap", "hw_slowdown"]
        );
        assert!(throttle_names(T::empty()).is_empty());
    }
}
