//! What preflight produces: one [`Check`] per policy rule and the environment [`Fingerprint`] a
//! canonical run records (the GPUs' full records and every check).

use super::record::GpuRecord;
use crate::history::model::Environment;
use serde::{Deserialize, Serialize};

/// One preflight check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Check {
    /// GPU index (None for the device count).
    pub(crate) gpu: Option<u32>,
    /// The field checked (`count`, `name`, `mig_current`, `mig_pending`).
    pub(crate) field: String,
    /// Whether it passed.
    pub(crate) passed: bool,
    /// What the policy requires.
    pub(crate) expected: String,
    /// What was found.
    pub(crate) found: String,
}

impl Check {
    /// `GPU <i> field <f>: expected <e>, found <x>`.
    pub(crate) fn message(&self) -> String {
        let who = match self.gpu {
            Some(i) => format!("GPU {i} field {}", self.field),
            None => format!("field {}", self.field),
        };
        format!("{who}: expected {}, found {}", self.expected, self.found)
    }
}

/// The preflight output: an [`Environment`] (its fields at top level, so the file reads as one)
/// plus every GPU's full record and every check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Format version.
    pub(crate) schema_version: u32,
    /// Backend, device names and UUIDs, driver and CUDA versions, runner.
    #[serde(flatten)]
    pub(crate) environment: Environment,
    /// Number of visible GPUs.
    pub(crate) gpu_count: u32,
    /// The full per-GPU records, in index order.
    pub(crate) gpus: Vec<GpuRecord>,
    /// Every check, in evaluation order.
    pub(crate) checks: Vec<Check>,
    /// True when every check passed.
    pub(crate) passed: bool,
}
