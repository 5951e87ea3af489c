//! What the harness knows of one built-in target ([`TargetSpec`]): its suite key, its CPU workload
//! and memory estimate (`targets/<key>.rs`) and its peak class. Its CUDA side (plan, host buffers
//! and kernel file) is the kernel registry's (`crate::bench::cuda::kernels::CUDA_TARGETS`). The
//! specs are listed once, in [`crate::bench::table::TARGETS`]; nothing below the table imports
//! this module.

use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::result::PeakClass;

/// One built-in target: every backend and check looks its key up here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TargetSpec {
    /// Suite target key (`configs/benchmark_suites/tier1.yaml`).
    pub(crate) key: &'static str,
    /// Reads and checks the target's `Params` from the profile's shapes (serde,
    /// `crate::bench::targets::params::read`); the error names the field and what was expected.
    /// The workloads read them the same way; the table's tests check every profile with it.
    #[cfg(test)]
    pub(crate) params: fn(&Shapes) -> Result<(), BackendError>,
    /// The CPU workload at the profile's shapes and seed (reads and checks the shapes).
    pub(crate) workload: fn(&Shapes, u64) -> Result<Workload, BackendError>,
    /// Upper estimate, in bytes, of what the CPU workload allocates for the shapes, computed
    /// from the target's typed `Params` (read and checked as the workload reads them: a missing
    /// or out-of-range shape is the same error, never an estimate of 0).
    pub(crate) footprint: fn(&Shapes) -> Result<f64, BackendError>,
    /// The hardware peak its achieved rate is a fraction of (written into its results as
    /// `peak_class`; `scripts/gpu-check.sh` reads it there).
    pub(crate) peak: PeakClass,
}
