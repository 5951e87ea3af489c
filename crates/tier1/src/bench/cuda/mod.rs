//! The CUDA backend: the kernel registry, the CUDA side of every built-in target listed once
//! (`kernels`, which the table of targets above takes it from by key), each embedded source and
//! its parsing (`source`), their compilation to PTX (`compile`), the run-time probe of the driver
//! and NVRTC (`probe`), device-free launch plans (`plan`), one plan file per target (`plans`) and
//! the CUDA side each defines (`spec`, a leaf the registry and the table hold). Every GPU path is
//! guarded: a missing library or device is a [`CudaError`], never a panic.

pub(crate) mod backend;
pub(crate) mod compile;
pub(crate) mod error;
pub(crate) mod host;
pub mod kernels;
pub(crate) mod launch_sizes;
pub(crate) mod plan;
pub(crate) mod plans;
pub(crate) mod probe;
pub(crate) mod shared;
pub(crate) mod source;
pub(crate) mod spec;

pub use compile::{compile_kernel, nvrtc_present};
pub use error::CudaError;
pub(crate) use error::guarded;
pub use kernels::{KERNELS, KernelSource, LAUNCHES, entry_points};
pub(crate) use probe::DeviceInfo;
pub use shared::cuda_backend;
