//! The kernel registry: the CUDA side of every built-in target, listed once here in suite order
//! (`CUDA_TARGETS`: its plan file `cuda/plans/<key>.rs`, its embedded kernel file
//! `kernels/<key>.cu` and the compute capability that file needs), every kernel file
//! ([`KERNELS`]), which `extern "C" __global__` entries each target's launchers use, per variant
//! ([`LAUNCHES`]), and each target's CUDA side by key (`spec`). The table of targets above lists
//! the same keys in the same order (its tests check each target against both); nothing in `cuda/`
//! reads the table.

use crate::bench::backend::BackendError;
use crate::bench::cuda::plans;
use crate::bench::cuda::spec::CudaSpec;

pub use super::source::{KernelSource, entry_points};

/// The CUDA side of one built-in target: its key, plan file and kernel file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CudaTarget {
    /// Suite target key (`configs/benchmark_suites/tier1.yaml`).
    pub(crate) key: &'static str,
    /// The plan, host buffers and launched entries (`cuda/plans/<key>.rs`, its `CUDA`).
    pub(crate) cuda: CudaSpec,
    /// The kernel file `kernels/<key>.cu`, embedded.
    pub(crate) kernel: KernelSource,
}

/// The CUDA side of target `$key` from its own files: `cuda::plans::$key::CUDA` and
/// `kernels/$key.cu`, embedded, which needs compute capability `$cap` (`(major, minor)`).
macro_rules! cuda_target {
    ($key:ident, $cap:expr) => {
        CudaTarget {
            key: stringify!($key),
            cuda: plans::$key::CUDA,
            kernel: KernelSource {
                file: concat!(stringify!($key), ".cu"),
                target_key: stringify!($key),
                min_capability: $cap,
                source: include_str!(concat!("../../../../../kernels/", stringify!($key), ".cu")),
            },
        }
    };
}

/// The CUDA side of the built-in targets, in suite order, the order of the table of targets (its
/// tests check both; `mma.sync` m16n8k16 with bf16 operands needs sm_80).
pub(crate) const CUDA_TARGETS: &[CudaTarget] = &[
    cuda_target!(block_scaling, (8, 0)),
    cuda_target!(flashattention4_alibi, (7, 0)),
    cuda_target!(persistent_decode, (7, 0)),
    cuda_target!(kv_standard, (7, 0)),
    cuda_target!(gradient_fusion, (7, 0)),
    cuda_target!(llama_3_1_8b, (7, 0)),
];

/// Every kernel file, one per target, in table order.
pub const KERNELS: [KernelSource; CUDA_TARGETS.len()] = {
    let mut out = [CUDA_TARGETS[0].kernel; CUDA_TARGETS.len()];
    let mut i = 0;
    while i < CUDA_TARGETS.len() {
        out[i] = CUDA_TARGETS[i].kernel;
        i += 1;
    }
    out
};

/// The entries each target's launchers call, per variant: `(target key, baseline entries,
/// optimized entries)`. The launchers look kernels up by these names only, so a kernel missing
/// here is dead code (the registry test refuses it) and a name here without a kernel fails the
/// module load.
pub const LAUNCHES: [(&str, &[&str], &[&str]); CUDA_TARGETS.len()] = {
    let mut out: [(&str, &[&str], &[&str]); CUDA_TARGETS.len()] =
        [("", &[], &[]); CUDA_TARGETS.len()];
    let mut i = 0;
    while i < CUDA_TARGETS.len() {
        let t = &CUDA_TARGETS[i];
        out[i] = (t.key, t.cuda.baseline, t.cuda.optimized);
        i += 1;
    }
    out
};

/// The CUDA side of built-in target `key` with its kernel file, or
/// [`BackendError::Unsupported`] naming `cuda`.
pub(crate) fn spec(key: &str) -> Result<(&'static CudaSpec, &'static KernelSource), BackendError> {
    CUDA_TARGETS
        .iter()
        .find(|t| t.key == key)
        .map(|t| (&t.cuda, &t.kernel))
        .ok_or_else(|| BackendError::Unsupported {
            backend: "cuda".into(),
            key: key.into(),
        })
}

/// Launch-registry entries of `target_key` (baseline then optimized, deduplicated).
pub fn launched_entries(target_key: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (key, base, opt) in LAUNCHES {
        if key == target_key {
            for name in base.iter().chain(opt.iter()) {
                if !out.contains(name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launched_entries_deduplicates_shared_kernels() {
        let llama = launched_entries("llama_3_1_8b");
        assert_eq!(llama.iter().filter(|n| **n == "llama_rmsnorm").count(), 1);
        assert!(launched_entries("no_such_target").is_empty());
    }

    #[test]
    fn every_target_is_found_by_its_key_and_an_unknown_key_is_unsupported() {
        for t in CUDA_TARGETS {
            assert_eq!(spec(t.key).map(|s| s.1.file).ok(), Some(t.kernel.file));
        }
        assert!(matches!(
            spec("nope"),
            Err(BackendError::Unsupported { backend, key }) if backend == "cuda" && key == "nope"
        ));
    }
}
