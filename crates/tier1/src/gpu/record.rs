//! What preflight records about one GPU ([`GpuRecord`]): identity, memory, MIG and ECC state,
//! persistence, clocks, throttle reasons and temperature.

use serde::{Deserialize, Serialize};

/// MIG mode of a GPU (current or pending).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MigMode {
    /// MIG off: the whole GPU is one device.
    Disabled,
    /// MIG on: the GPU is partitioned.
    Enabled,
    /// The GPU has no MIG support (so it is whole).
    Unsupported,
}

impl MigMode {
    /// The lower-case name (`disabled`, `enabled`, `unsupported`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MigMode::Disabled => "disabled",
            MigMode::Enabled => "enabled",
            MigMode::Unsupported => "unsupported",
        }
    }

    /// Whether the GPU is whole under this mode.
    pub(crate) fn is_whole(self) -> bool {
        self != MigMode::Enabled
    }
}

/// Clock readings in MHz (None where the GPU does not report them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Clocks {
    /// Current graphics clock.
    #[serde(default)]
    pub(crate) graphics_mhz: Option<u32>,
    /// Current SM clock.
    #[serde(default)]
    pub(crate) sm_mhz: Option<u32>,
    /// Current memory clock.
    #[serde(default)]
    pub(crate) memory_mhz: Option<u32>,
    /// Maximum SM clock.
    #[serde(default)]
    pub(crate) max_sm_mhz: Option<u32>,
    /// Maximum memory clock.
    #[serde(default)]
    pub(crate) max_memory_mhz: Option<u32>,
}

/// Everything preflight records about one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRecord {
    /// NVML index (fixtures may omit it: the position is used).
    #[serde(default)]
    pub(crate) index: u32,
    /// Product name, e.g. `NVIDIA B200`.
    pub(crate) name: String,
    /// `GPU-...` UUID.
    pub(crate) uuid: String,
    /// Total framebuffer memory in bytes.
    #[serde(default)]
    pub(crate) memory_total_bytes: Option<u64>,
    /// MIG mode now.
    pub(crate) mig_current: MigMode,
    /// MIG mode after the next reset.
    pub(crate) mig_pending: MigMode,
    /// ECC enabled now (None: not supported).
    #[serde(default)]
    pub(crate) ecc_enabled: Option<bool>,
    /// ECC enabled after the next reset.
    #[serde(default)]
    pub(crate) ecc_pending: Option<bool>,
    /// Volatile corrected ECC errors since the driver loaded.
    #[serde(default)]
    pub(crate) ecc_errors_corrected: Option<u64>,
    /// Volatile uncorrected ECC errors since the driver loaded.
    #[serde(default)]
    pub(crate) ecc_errors_uncorrected: Option<u64>,
    /// Persistence mode on.
    #[serde(default)]
    pub(crate) persistence_mode: Option<bool>,
    /// Clock readings.
    #[serde(default)]
    pub(crate) clocks: Clocks,
    /// Current clock throttle reasons (NVML names, lower case; empty when none).
    #[serde(default)]
    pub(crate) throttle_reasons: Vec<String>,
    /// Core temperature (°C), where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) temperature_c: Option<u32>,
}
