//! The benchmark harness and its targets: timing, statistics, memory counting, verification, the
//! backend trait with the CPU backend, command targets and the results file (`result`).

pub mod affinity;
pub mod alloc;
pub mod backend;
pub mod clock;
pub mod command;
pub mod cpu;
pub mod cuda;
pub mod deadline;
pub mod emit;
pub mod estimate;
pub mod finite;
pub mod footprint;
pub mod harness;
pub mod import;
pub mod invocation;
pub mod machine;
pub mod options;
pub mod pass_record;
pub mod passes;
pub mod progress;
pub mod result;
pub mod rng;
pub mod sampling;
pub mod single;
pub mod stats;
pub mod targets;
pub mod verify;

pub use backend::Backend;
pub use cpu::CpuBackend;
pub use harness::{HarnessOptions, run_suite, write_results};
pub use result::{ResultsFile, summarize};

#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: alloc::CountingAlloc = alloc::CountingAlloc::new();

/// The CUDA backend on device 0: probe the driver, compile the kernels for the device's
/// architecture, load them. A missing driver, NVRTC or device is an `Err` naming what is missing,
/// never a panic. Built once per process: choosing the default profile and running the suite ask
/// for it in turn, and both get the same backend (or the same error).
pub fn cuda_backend() -> Result<std::sync::Arc<dyn Backend>, String> {
    static BACKEND: std::sync::OnceLock<Result<std::sync::Arc<dyn Backend>, String>> =
        std::sync::OnceLock::new();
    BACKEND
        .get_or_init(|| {
            cuda::CudaBackend::new(0)
                .map(|b| std::sync::Arc::new(b) as std::sync::Arc<dyn Backend>)
                .map_err(|e| e.to_string())
        })
        .clone()
}
