//! The CUDA backend: the kernel registry derived from the table of targets (`kernels`), each
//! embedded source and its parsing (`source`), their compilation to PTX (`compile`), the
//! run-time probe of the driver and NVRTC (`probe`), device-free launch plans (`plan`) and one
//! plan file per target (`plans`). Every GPU path is guarded: a missing library or device is a
//! [`CudaError`], never a panic.

pub mod backend;
pub mod compile;
pub mod error;
pub mod host;
pub mod kernels;
pub mod launch_sizes;
pub mod plan;
pub mod plans;
pub mod probe;
pub mod shared;
pub mod source;

pub use backend::CudaBackend;
pub use compile::{CompiledKernel, compile_all, compile_kernel, nvrtc_present};
pub use error::CudaError;
pub(crate) use error::guarded;
pub use kernels::{KERNELS, KernelSource, LAUNCHES, entry_points};
pub use probe::{DeviceInfo, probe_device};
pub use shared::cuda_backend;
