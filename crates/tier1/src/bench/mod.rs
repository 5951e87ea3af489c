//! The benchmark harness and its targets: timing, statistics, memory counting, verification, the
//! backend trait with the CPU backend, the table of built-in targets (`table`), command targets
//! and the results file (`result`).

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
pub mod table;
pub mod target_spec;
pub mod targets;
pub mod verify;

pub use backend::Backend;
pub use cpu::CpuBackend;
pub use cuda::cuda_backend;
pub use harness::{HarnessOptions, run_suite, write_results};
pub use result::{ResultsFile, summarize};
