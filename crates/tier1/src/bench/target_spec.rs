//! What the harness knows of one built-in target ([`TargetSpec`]): its suite key, its CPU workload
//! and memory estimate (`targets/<key>.rs`), its CUDA side (its plan file `cuda/plans/<key>.rs`
//! and kernel file `kernels/<key>.cu`, a `CudaSide` of the leaf `cuda/spec.rs`) and its peak
//! class. The specs are listed once, one line each, in [`crate::bench::table::TARGETS`], which
//! hands the CUDA sides down to the backend; nothing below the table imports this module.

use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::spec::CudaSide;
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
    /// Its CUDA side: plan file, kernel file and the compute capability that file needs (the
    /// table hands every target's down to the CUDA backend as one list).
    pub(crate) cuda: CudaSide,
    /// The hardware peak its achieved rate is a fraction of (written into its results as
    /// `peak_class`; `scripts/gpu-check.sh` reads it there).
    pub(crate) peak: PeakClass,
}
