//! Failures reading the GPU inventory or attesting it ([`GpuError`], with its exit code).

use crate::exit::{Classify, Exit};
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
        fingerprint: Box<super::fingerprint::Fingerprint>,
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
