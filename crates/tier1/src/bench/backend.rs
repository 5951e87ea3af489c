//! The backend abstraction: a backend names itself, fingerprints its device and prepares a target's
//! [`Workload`] (its variants, each runnable and able to hand back its output). The CPU backend
//! (`bench::cpu`) and the CUDA backend (`bench::cuda`) implement it, the CUDA targets with the CPU
//! targets as their twins.

use crate::bench::result::{InputSignature, Work};
use crate::history::model::Environment;
use std::collections::BTreeMap;

/// Shapes of one target under one profile (parameter name to value).
pub type Shapes = BTreeMap<String, u64>;

/// A failure to prepare or run a variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend has no implementation of this target.
    #[error("backend {backend} has no implementation of target {key:?}")]
    Unsupported {
        /// Backend name.
        backend: String,
        /// Target key.
        key: String,
    },
    /// A shape parameter is missing or out of range.
    #[error("target {key:?}: shape parameter {param:?}: {message}")]
    Shape {
        /// Target key.
        key: String,
        /// Parameter name.
        param: String,
        /// Expected and found.
        message: String,
    },
    /// The device failed while running a variant.
    #[error("{0}")]
    Device(String),
}

impl crate::exit::Classify for BackendError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            BackendError::Device(_) => crate::exit::Exit::Io,
            _ => crate::exit::Exit::Invalid,
        }
    }
}

/// One runnable variant of a target. `run` is the timed work; `output` is called outside the
/// timed region for verification. A run must not keep its per-run allocations alive after it
/// returns (memory is the peak a single run allocates above its starting level).
pub trait VariantRun: Send {
    /// Execute once. `Ok(Some(ms))` is a device-measured time (CUDA events) used instead of the
    /// harness's wall clock; `Ok(None)` lets the harness time the call.
    fn run(&mut self) -> Result<Option<f64>, BackendError>;
    /// Execute `reps` times back to back (one timed sample). `Ok(Some(ms))` is the device time of
    /// the whole batch (a CUDA backend records one event pair around all the launches);
    /// `Ok(None)` lets the harness time the call. The default runs [`VariantRun::run`] `reps`
    /// times and adds up device times when every run reports one.
    fn run_batch(&mut self, reps: u32) -> Result<Option<f64>, BackendError> {
        let mut device = Some(0.0);
        for _ in 0..reps {
            let ms = self.run()?;
            device = device.zip(ms).map(|(acc, ms)| acc + ms);
        }
        Ok(device)
    }
    /// Execute once more (untimed) and return the output, flattened, for verification.
    fn output(&mut self) -> Result<Vec<f32>, BackendError>;
    /// Bytes of device memory this variant holds for a run (its scratch and output buffers, not
    /// the shared inputs), reported as its memory peak instead of the host allocator's count.
    /// `None` (the default) for host-only variants.
    fn device_peak_bytes(&self) -> Option<u64> {
        None
    }
}

/// A named variant with its input signature.
pub struct Variant {
    /// `baseline` or `optimized_<technique>`.
    pub name: String,
    /// What it consumes.
    pub signature: InputSignature,
    /// The implementation.
    pub runner: Box<dyn VariantRun>,
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

/// An f64 reference output, computed lazily (only where it is cheap).
pub(crate) type Reference = Box<dyn FnOnce() -> Vec<f64> + Send>;

/// A prepared target: baseline first, then the optimized variants.
pub struct Workload {
    /// Baseline first.
    pub variants: Vec<Variant>,
    /// Work per execution.
    pub(crate) work: Work,
    /// Repo-relative source file of the baseline.
    pub(crate) baseline_file: String,
    /// f64 reference of the output, when cheap enough to compute.
    pub(crate) reference: Option<Reference>,
}

impl std::fmt::Debug for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workload")
            .field("variants", &self.variants)
            .field("work", &self.work)
            .field("baseline_file", &self.baseline_file)
            .field("reference", &self.reference.is_some())
            .finish()
    }
}

/// A compute backend.
pub trait Backend: Send + Sync {
    /// `cpu` or `cuda`.
    fn name(&self) -> &str;
    /// Device fingerprint (`profile` left `None`; the harness fills it).
    fn fingerprint(&self) -> Environment;
    /// Prepare `key` with `shapes` and `seed`: inputs generated, buffers allocated, nothing timed.
    fn prepare(&self, key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError>;
    /// The device's clocks, temperature and throttle reasons now (`None` on the CPU backend or
    /// when they cannot be read).
    fn device_state(&self) -> Option<crate::bench::machine::GpuState> {
        None
    }
}

/// The runner: `RUNNER_NAME` when set and non-empty, else the host name.
pub(crate) fn runner_name() -> Option<String> {
    std::env::var("RUNNER_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(host_name)
}

fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Number of worker threads the optimized CPU variants use.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
