//! GPU inventory: the [`Inventory`] trait (what preflight reads about each visible GPU), its
//! per-GPU record, and the two implementations (NVML on a real machine, JSON fixtures in tests).

pub mod fixture;
pub mod nvml;
pub mod preflight;

use crate::exit::{Classify, Exit};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Failures reading the inventory or attesting it.
#[derive(Debug, Error)]
pub enum GpuError {
    /// NVML could not be loaded or initialised (no driver, no `libnvidia-ml.so.1`).
    #[error("NVML unavailable: expected the NVIDIA driver's {library} to load, found: {message}")]
    NvmlUnavailable {
        /// The library path tried.
        library: String,
        /// NVML's message.
        message: String,
    },
    /// An NVML query failed for a field preflight needs.
    #[error("GPU {index} field {field}: NVML query failed: {message}")]
    Query {
        /// GPU index (or the device count query when None).
        index: String,
        /// The field queried.
        field: String,
        /// NVML's message.
        message: String,
    },
    /// A fixture file is malformed.
    #[error(transparent)]
    Fixture(#[from] crate::json::JsonError),
    /// A fixture was asked for an index it does not have.
    #[error("GPU {index}: expected an index below the device count {count}")]
    NoSuchDevice {
        /// Index asked for.
        index: u32,
        /// Devices present.
        count: u32,
    },
    /// One or more preflight checks failed; the fingerprint records each of them.
    #[error("GPU preflight failed: {}", .failed.join("; "))]
    Refused {
        /// One message per failed check, naming GPU index, field, expected and found values.
        failed: Vec<String>,
        /// The full fingerprint (printed on stdout even on refusal).
        fingerprint: Box<preflight::Fingerprint>,
    },
}

impl Classify for GpuError {
    fn exit(&self) -> Exit {
        match self {
            GpuError::Fixture(e) => e.exit(),
            _ => Exit::Attestation,
        }
    }
}

/// MIG mode of a GPU (current or pending).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MigMode {
    /// MIG off: the whole GPU is one device.
    Disabled,
    /// MIG on: the GPU is partitioned.
    Enabled,
    /// The GPU has no MIG support (so it is whole).
    Unsupported,
}

impl MigMode {
    /// The lower-case name (`disabled`, `enabled`, `unsupported`).
    pub fn as_str(self) -> &'static str {
        match self {
            MigMode::Disabled => "disabled",
            MigMode::Enabled => "enabled",
            MigMode::Unsupported => "unsupported",
        }
    }

    /// Whether the GPU is whole under this mode.
    pub fn is_whole(self) -> bool {
        self != MigMode::Enabled
    }
}

/// Clock readings in MHz (None where the GPU does not report them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    /// Current graphics clock.
    #[serde(default)]
    pub graphics_mhz: Option<u32>,
    /// Current SM clock.
    #[serde(default)]
    pub sm_mhz: Option<u32>,
    /// Current memory clock.
    #[serde(default)]
    pub memory_mhz: Option<u32>,
    /// Maximum SM clock.
    #[serde(default)]
    pub max_sm_mhz: Option<u32>,
    /// Maximum memory clock.
    #[serde(default)]
    pub max_memory_mhz: Option<u32>,
}

/// Everything preflight records about one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRecord {
    /// NVML index (fixtures may omit it: the position is used).
    #[serde(default)]
    pub index: u32,
    /// Product name, e.g. `NVIDIA B200`.
    pub name: String,
    /// `GPU-...` UUID.
    pub uuid: String,
    /// Total framebuffer memory in bytes.
    #[serde(default)]
    pub memory_total_bytes: Option<u64>,
    /// MIG mode now.
    pub mig_current: MigMode,
    /// MIG mode after the next reset.
    pub mig_pending: MigMode,
    /// ECC enabled now (None: not supported).
    #[serde(default)]
    pub ecc_enabled: Option<bool>,
    /// ECC enabled after the next reset.
    #[serde(default)]
    pub ecc_pending: Option<bool>,
    /// Volatile corrected ECC errors since the driver loaded.
    #[serde(default)]
    pub ecc_errors_corrected: Option<u64>,
    /// Volatile uncorrected ECC errors since the driver loaded.
    #[serde(default)]
    pub ecc_errors_uncorrected: Option<u64>,
    /// Persistence mode on.
    #[serde(default)]
    pub persistence_mode: Option<bool>,
    /// Clock readings.
    #[serde(default)]
    pub clocks: Clocks,
    /// Current clock throttle reasons (NVML names, lower case; empty when none).
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
    /// Core temperature (°C), where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<u32>,
}

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
