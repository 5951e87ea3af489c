//! The CUDA backend: the CUDA side of one built-in target (`spec`: its key, plan file and kernel
//! file, a leaf the plan files and the table of targets above `cuda/` name), the kernel registry
//! over the list of CUDA sides the table hands down (`kernels`), each embedded source and its
//! parsing (`source`), their compilation to PTX (`compile`), the run-time probe of the driver and
//! NVRTC (`probe`), device-free launch plans (`plan`), one plan file per target (`plans`) and the
//! backend over a device and a list of CUDA sides (`backend`). Nothing in `cuda/` reads the table:
//! the list comes in as an argument (`crate::bench::cuda_backend` passes the table's). Every GPU
//! path is guarded: a missing library or device is a [`CudaError`], never a panic.

pub(crate) mod backend;
pub(crate) mod compile;
pub(crate) mod error;
pub(crate) mod host;
pub mod kernels;
pub(crate) mod launch_sizes;
pub(crate) mod plan;
pub(crate) mod plans;
pub(crate) mod probe;
pub(crate) mod source;
pub(crate) mod spec;

pub use compile::{compile_kernel, nvrtc_present};
pub use error::CudaError;
pub(crate) use error::guarded;
pub use kernels::{KernelSource, entry_points};
pub(crate) use probe::DeviceInfo;
