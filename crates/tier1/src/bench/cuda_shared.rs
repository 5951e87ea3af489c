//! The process-wide CUDA backend over the table's targets: built once, shared by every caller (or
//! the same error). It sits above the table of targets and hands its list of CUDA sides
//! (`table::CUDA_SIDES`) down to the backend, which never reads the table itself.

use crate::bench::backend::Backend;
use crate::bench::cuda::backend::CudaBackend;
use crate::bench::table::CUDA_SIDES;

/// The CUDA backend on device 0: probe the driver, compile the kernels for the device's
/// architecture, load them. A missing driver, NVRTC or device is an `Err` naming what is missing,
/// never a panic. Built once per process: choosing the default profile and running the suite ask
/// for it in turn, and both get the same backend (or the same error).
pub fn cuda_backend() -> Result<std::sync::Arc<dyn Backend>, String> {
    static BACKEND: std::sync::OnceLock<Result<std::sync::Arc<dyn Backend>, String>> =
        std::sync::OnceLock::new();
    BACKEND
        .get_or_init(|| {
            CudaBackend::new(0, &CUDA_SIDES)
                .map(|b| std::sync::Arc::new(b) as std::sync::Arc<dyn Backend>)
                .map_err(|e| e.to_string())
        })
        .clone()
}
