//! The kernel registry, derived from the table of targets (`crate::bench::table::TARGETS`): every
//! embedded kernel file (`kernels/<key>.cu`), which `extern "C" __global__` entries each
//! target's launchers use, per variant, and each target's CUDA side by key (`spec`). The one
//! module of `cuda/` that reads the table: the backend and compiler go through it, the plan files
//! (below the table) never do.

use crate::bench::backend::BackendError;
use crate::bench::cuda::spec::CudaSpec;
use crate::bench::table::TARGETS;

pub use super::source::{KernelSource, entry_points};

/// Every kernel file, one per target, in table order.
pub const KERNELS: [KernelSource; TARGETS.len()] = {
    let mut out = [TARGETS[0].kernel; TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        out[i] = TARGETS[i].kernel;
        i += 1;
    }
    out
};

/// The entries each target's launchers call, per variant: `(target key, baseline entries,
/// optimized entries)`. The launchers look kernels up by these names only, so a kernel missing
/// here is dead code (the registry test refuses it) and a name here without a kernel fails the
/// module load.
pub const LAUNCHES: [(&str, &[&str], &[&str]); TARGETS.len()] = {
    let mut out: [(&str, &[&str], &[&str]); TARGETS.len()] = [("", &[], &[]); TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        let t = &TARGETS[i];
        out[i] = (t.key, t.cuda.baseline, t.cuda.optimized);
        i += 1;
    }
    out
};

/// The CUDA side of built-in target `key` with its kernel file, or
/// [`BackendError::Unsupported`] naming `cuda`.
pub(crate) fn spec(key: &str) -> Result<(&'static CudaSpec, &'static KernelSource), BackendError> {
    crate::bench::table::supported("cuda", key).map(|t| (&t.cuda, &t.kernel))
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
}
