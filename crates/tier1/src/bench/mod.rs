//! The benchmark harness and its targets: timing, statistics, memory counting, verification, the
//! backend trait with the CPU backend, the table of built-in targets (`table`), command targets
//! and the results file (`result`).

pub(crate) mod affinity;
pub mod alloc;
pub mod backend;
pub mod clock;
pub mod command;
pub(crate) mod cpu;
pub mod cuda;
pub(crate) mod cuda_shared;
pub(crate) mod deadline;
pub mod emit;
pub mod estimate;
pub(crate) mod finite;
pub(crate) mod footprint;
pub mod harness;
pub(crate) mod import;
pub(crate) mod invocation;
pub(crate) mod limits;
pub mod load;
pub(crate) mod machine;
pub(crate) mod options;
pub(crate) mod pass_record;
pub(crate) mod passes;
pub(crate) mod progress;
pub mod result;
pub mod rng;
pub mod sampling;
pub(crate) mod single;
pub mod stats;
pub(crate) mod table;
pub(crate) mod target_spec;
pub mod targets;
pub mod verify;

pub use cpu::CpuBackend;
pub use cuda_shared::cuda_backend;
pub use harness::{HarnessOptions, run_suite, write_results};
pub use table::{KERNELS, LAUNCHES, builtin_keys, cpu_workload, launched_entries};
