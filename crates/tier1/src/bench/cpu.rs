//! The Rust CPU backend: every built-in target (`bench::targets`), multithreaded with
//! `std::thread::scope`, fingerprinted by the CPU model and the runner's name.

use crate::bench::backend::{Backend, BackendError, Shapes, Workload, runner_name};
use crate::history::model::Environment;

/// The Rust CPU backend: every built-in target, multithreaded with `std::thread::scope`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &str {
        "cpu"
    }

    fn fingerprint(&self) -> Environment {
        Environment {
            backend: "cpu".into(),
            device_names: vec![cpu_model()],
            device_uuids: Vec::new(),
            driver_version: None,
            cuda_version: None,
            runner: runner_name(),
            profile: None,
            clock: None,
            runner_class: None,
        }
    }

    fn prepare(&self, key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
        crate::bench::table::cpu_workload(key, shapes, seed)
    }
}

/// `<model name> x<logical cores>` from `/proc/cpuinfo`, or the architecture when unknown.
pub(crate) fn cpu_model() -> String {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    format!("{model} x{threads}")
}
