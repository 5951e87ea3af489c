//! The CUDA side of one built-in target: what each plan file (`cuda/plans/<key>.rs`) defines as
//! its `CUDA` ([`CudaSpec`]), and that with the target's key and embedded kernel file
//! ([`CudaSide`]), which the table of targets above `cuda/` holds in each `TargetSpec` and hands
//! down as a list. A leaf below them: the plan files name it here.

use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::Inputs;
use crate::bench::cuda::plan::Plan;
use crate::bench::cuda::source::KernelSource;

/// Builds a target's host buffers and CPU twin at the profile's shapes and seed.
pub(crate) type InputsFn = fn(&Shapes, u64) -> Result<(Inputs, Workload), BackendError>;

/// The CUDA side of a target (`cuda/plans/<key>.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CudaSpec {
    /// The device plan at the profile's shapes.
    pub(crate) plan: fn(&Shapes) -> Result<Plan, BackendError>,
    /// The input buffers in the kernels' layouts, with the CPU twin's workload over the same
    /// inputs (its work, input signature and reference are the CUDA workload's too).
    pub(crate) inputs: InputsFn,
    /// Entries the baseline (and a CUDA-graph variant) launches.
    pub(crate) baseline: &'static [&'static str],
    /// Entries the optimized variants launch.
    pub(crate) optimized: &'static [&'static str],
}

/// Everything the CUDA backend needs of one built-in target: its key, plan file and kernel file.
/// The table of targets builds one per target from its line and hands the list down (the
/// backend, the compiler and the capability check take it as an argument).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CudaSide {
    /// Suite target key (`configs/benchmark_suites/tier1.yaml`).
    pub(crate) key: &'static str,
    /// The plan, host buffers and launched entries (`cuda/plans/<key>.rs`, its `CUDA`).
    pub(crate) cuda: CudaSpec,
    /// The kernel file `kernels/<key>.cu`, embedded.
    pub(crate) kernel: KernelSource,
}
