//! The CUDA side of one built-in target ([`CudaSpec`]): what each plan file
//! (`cuda/plans/<key>.rs`) defines as its `CUDA`, the kernel registry (`kernels`) lists and the
//! table of targets above `cuda/` holds. A leaf below them: the plan files name it here.

use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::host::Inputs;
use crate::bench::cuda::plan::Plan;

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
