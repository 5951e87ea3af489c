//! The table of built-in targets: one [`TargetSpec`] per suite key, the single place that maps a
//! key to its CPU workload, memory estimate, CUDA side (plan and kernel file) and peak class.
//! Everything that used to match keys as strings (the CPU backend, the memory check, the results'
//! peak class) looks the key up here; the CUDA backend gets the CUDA sides from here as one list
//! ([`CUDA_SIDES`], handed down by `crate::bench::cuda_backend`), and the kernel registry's
//! [`KERNELS`] and [`LAUNCHES`] are derived from it. Nothing in `cuda/` reads this table.
//!
//! Adding a target: write its own files, `targets/<key>.rs` (`Params`, `inputs`, `workload`,
//! `footprint`), `kernels/<key>.cu` and `cuda/plans/<key>.rs` (`CUDA`: plan, host buffers,
//! launched entries), each declared in its folder (`pub(crate) mod <key>;` in `targets/mod.rs`
//! and `cuda/plans.rs`); add one line, `target!(<key>, (major, minor), <peak class>)`, to
//! [`TARGETS`], and the target to the suite file, both in suite order. The line names only the
//! key, the compute capability and the peak class: every file is found by the key.

use crate::bench::backend::{BackendError, Shapes, Workload};
use crate::bench::cuda::plans;
use crate::bench::cuda::source::KernelSource;
use crate::bench::cuda::spec::CudaSide;
use crate::bench::result::PeakClass;
pub(crate) use crate::bench::target_spec::TargetSpec;
use crate::bench::targets;
use crate::bench::targets::params::ShapeParams;

/// The spec of target `$key` from its own files: `targets::$key` (`Params`, `workload`,
/// `footprint`), `cuda::plans::$key::CUDA` and `kernels/$key.cu`, embedded, which needs compute
/// capability `$cap` (`(major, minor)`); its fraction of peak is measured against
/// `PeakClass::$peak`.
macro_rules! target {
    ($key:ident, $cap:expr, $peak:ident) => {
        TargetSpec {
            key: stringify!($key),
            #[cfg(test)]
            params: |shapes| targets::$key::Params::from_shapes(shapes).map(drop),
            workload: targets::$key::workload,
            footprint: |shapes| {
                targets::$key::Params::from_shapes(shapes).map(|p| targets::$key::footprint(&p))
            },
            cuda: CudaSide {
                key: stringify!($key),
                cuda: plans::$key::CUDA,
                kernel: KernelSource {
                    file: concat!(stringify!($key), ".cu"),
                    target_key: stringify!($key),
                    min_capability: $cap,
                    source: include_str!(concat!("../../../../kernels/", stringify!($key), ".cu")),
                },
            },
            peak: PeakClass::$peak,
        }
    };
}

/// The built-in targets, in suite order (`mma.sync` m16n8k16 with bf16 operands needs sm_80).
/// Peak classes: `block_scaling` multiplies bf16 on tensor cores (the BF16 tensor peak);
/// `kv_standard` counts bytes only (memory bandwidth); the others against FP32 compute.
pub(crate) const TARGETS: &[TargetSpec] = &[
    target!(block_scaling, (8, 0), Bf16Tensor),
    target!(flashattention4_alibi, (7, 0), Fp32),
    target!(persistent_decode, (7, 0), Fp32),
    target!(kv_standard, (7, 0), Memory),
    target!(gradient_fusion, (7, 0), Fp32),
    target!(llama_3_1_8b, (7, 0), Fp32),
];

/// The CUDA side of every built-in target, in table order: the list the table hands down to the
/// CUDA backend (`crate::bench::cuda_backend`), which never reads the table itself.
pub(crate) const CUDA_SIDES: [CudaSide; TARGETS.len()] = {
    let mut out = [TARGETS[0].cuda; TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        out[i] = TARGETS[i].cuda;
        i += 1;
    }
    out
};

/// Every kernel file, one per target, in table order.
pub const KERNELS: [KernelSource; TARGETS.len()] = {
    let mut out = [CUDA_SIDES[0].kernel; TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        out[i] = CUDA_SIDES[i].kernel;
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
        let c = &CUDA_SIDES[i];
        out[i] = (c.key, c.cuda.baseline, c.cuda.optimized);
        i += 1;
    }
    out
};

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

/// Keys of the built-in targets, in suite order (the tests walk them).
#[cfg(test)]
pub(crate) const BUILTIN_KEYS: [&str; TARGETS.len()] = {
    let mut out = [""; TARGETS.len()];
    let mut i = 0;
    while i < TARGETS.len() {
        out[i] = TARGETS[i].key;
        i += 1;
    }
    out
};

/// The keys of the built-in targets, in table order (tests and tools count and walk them here,
/// never a list of their own).
pub fn builtin_keys() -> impl Iterator<Item = &'static str> {
    TARGETS.iter().map(|t| t.key)
}

/// The spec of built-in target `key`, if any.
pub(crate) fn spec(key: &str) -> Option<&'static TargetSpec> {
    TARGETS.iter().find(|t| t.key == key)
}

/// The spec of built-in target `key`, or [`BackendError::Unsupported`] naming `backend`.
pub(crate) fn supported(backend: &str, key: &str) -> Result<&'static TargetSpec, BackendError> {
    spec(key).ok_or_else(|| BackendError::Unsupported {
        backend: backend.into(),
        key: key.into(),
    })
}

/// The CPU workload of built-in target `key`.
pub fn cpu_workload(key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    (supported("cpu", key)?.workload)(shapes, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::cuda::kernels::{entry_points, find};
    use crate::bench::cuda::plan::{Owner, Plan};
    use crate::bench::cuda::spec::CudaSpec;
    use crate::suite::{Suite, TargetKind};
    use std::collections::BTreeSet;

    fn shapes(key: &str, profile: &str) -> Shapes {
        let suite = Suite::embedded();
        let t = suite.target(key).expect("suite target");
        t.shapes.get(profile).cloned().expect("profile shapes")
    }

    /// Everything one spec must hold, at `shapes`: its CUDA side under the same key, its kernel
    /// named after its key, the launched entries declared in it, a valid plan whose launches match
    /// the kernel's signatures, host data for every input buffer, a CPU workload with the CUDA
    /// twin's variants, an estimate.
    fn check_spec(t: &TargetSpec, shapes: &Shapes) {
        let key = t.key;
        assert_eq!(t.cuda.key, key);
        let (cuda, kernel) = (&t.cuda.cuda, &t.cuda.kernel);
        assert_eq!(kernel.target_key, key);
        assert_eq!(kernel.file, format!("{key}.cu"));
        let entries = entry_points(kernel.source);
        for e in cuda.baseline.iter().chain(cuda.optimized) {
            assert!(
                entries.iter().any(|n| n == e),
                "{key}: {e} not in {}",
                kernel.file
            );
        }
        let plan = (cuda.plan)(shapes).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(plan.key, key);
        assert_eq!(plan.validate(), Vec::<String>::new(), "{key}");
        assert_eq!(
            plan.check_signatures(std::iter::once(kernel)),
            Vec::<String>::new(),
            "{key}"
        );
        let (data, twin) = (cuda.inputs)(shapes, 42).expect("host inputs");
        for b in plan.buffers.iter().filter(|b| b.owner == Owner::Input) {
            let d = data.iter().find(|(n, _)| *n == b.name).expect("host data");
            assert_eq!(d.1.bytes() as u64, b.bytes, "{key} {}", b.name);
        }
        let cpu = (t.workload)(shapes, 42).expect("cpu workload");
        let names = |w: &Workload| {
            w.variants
                .iter()
                .map(|v| v.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&cpu), names(&twin), "{key}");
        assert!((t.footprint)(shapes).unwrap() > 0.0, "{key}");
    }

    #[test]
    fn every_builtin_suite_key_has_exactly_one_spec_in_suite_order() {
        let suite = Suite::embedded();
        let builtin: Vec<&str> = suite
            .targets
            .iter()
            .filter(|t| t.kind == TargetKind::Builtin)
            .map(|t| t.key.as_str())
            .collect();
        assert_eq!(builtin, BUILTIN_KEYS.to_vec());
        for key in &builtin {
            assert_eq!(TARGETS.iter().filter(|t| t.key == *key).count(), 1, "{key}");
        }
        let files: BTreeSet<&str> = KERNELS.iter().map(|k| k.file).collect();
        assert_eq!(files.len(), TARGETS.len(), "one kernel file per target");
        assert_eq!(LAUNCHES.len(), TARGETS.len(), "one CUDA side per target");
        assert!(LAUNCHES.iter().zip(TARGETS).all(|(l, t)| l.0 == t.key));
        assert!(CUDA_SIDES.iter().zip(TARGETS).all(|(c, t)| c.key == t.key));
    }

    #[test]
    fn every_spec_holds_at_every_profile_and_its_kernel_file_is_on_disk() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        for t in TARGETS {
            let c = &t.cuda;
            let on_disk = std::fs::read_to_string(dir.join(c.kernel.file)).expect("kernel file");
            assert_eq!(on_disk, c.kernel.source, "{}", c.kernel.file);
            for profile in ["minimal", "cpu", "smoke"] {
                let s = shapes(t.key, profile);
                assert!((t.params)(&s).is_ok(), "{} {profile}", t.key);
                assert!((c.cuda.plan)(&s).is_ok(), "{} {profile}", t.key);
                assert!((t.footprint)(&s).unwrap() > 0.0, "{} {profile}", t.key);
            }
            check_spec(t, &shapes(t.key, "smoke"));
        }
    }

    #[test]
    fn lookups_go_through_the_table_and_unknown_keys_stay_unsupported() {
        let s = shapes("kv_standard", "smoke");
        let t = spec("kv_standard").expect("spec");
        let mut bad = s.clone();
        bad.insert("steps".into(), 65);
        match (t.params)(&bad) {
            Err(BackendError::Shape {
                key,
                param,
                message,
            }) => {
                assert_eq!((key.as_str(), param.as_str()), ("kv_standard", "steps"));
                assert_eq!(message, "expected at most 64, found 65");
            }
            other => panic!("a shape error expected, found {other:?}"),
        }
        bad.remove("heads");
        assert!(
            matches!((t.params)(&bad), Err(BackendError::Shape { param, message, .. })
                if param == "heads" && message == "missing from the profile's shapes")
        );
        assert_eq!(
            crate::bench::footprint::estimate("kv_standard", &s).map(Result::unwrap),
            Some((t.footprint)(&s).unwrap())
        );
        assert!(spec("nope").is_none());
        assert!(crate::bench::footprint::estimate("nope", &s).is_none());
        assert!(
            matches!((t.footprint)(&bad), Err(BackendError::Shape { param, .. }) if param == "heads")
        );
        let Err(e) = cpu_workload("nope", &s, 1) else {
            panic!("an unknown key is unsupported")
        };
        assert!(
            matches!(&e, BackendError::Unsupported { backend, key } if backend == "cpu" && key == "nope"),
            "{e}"
        );
        let Err(e) = supported("cuda", "nope") else {
            panic!("an unknown key is unsupported")
        };
        assert!(matches!(&e, BackendError::Unsupported { backend, .. } if backend == "cuda"));
    }

    /// Every target has a peak class its work can be measured against (FLOPs for the compute
    /// classes, bytes for memory), and the classes are those `scripts/gpu-check.sh` used before it
    /// read them from the results: BF16 tensor for `block_scaling`, memory for `kv_standard`
    /// (bytes only), FP32 for the others.
    #[test]
    fn every_target_has_a_peak_class_its_work_can_measure() {
        for t in TARGETS {
            let work = (t.workload)(&shapes(t.key, "smoke"), 42)
                .expect("workload")
                .work;
            let measured = match t.peak {
                PeakClass::Memory => work.bytes,
                PeakClass::Fp32 | PeakClass::Bf16Tensor => work.flops,
            };
            assert!(
                measured.is_some(),
                "{}: {:?} without its work",
                t.key,
                t.peak
            );
            let expected = match t.key {
                "block_scaling" => PeakClass::Bf16Tensor,
                _ if work.flops.is_none() => PeakClass::Memory,
                _ => PeakClass::Fp32,
            };
            assert_eq!(t.peak, expected, "{}", t.key);
        }
    }

    /// A seventh target needs nothing but its spec (its CUDA side inside): here one defined in this
    /// test (over the `gradient_fusion` code, under its own key and kernel file name) passes every
    /// check.
    #[test]
    fn a_seventh_target_is_one_spec() {
        fn plan(shapes: &Shapes) -> Result<Plan, BackendError> {
            let mut p = (plans::gradient_fusion::CUDA.plan)(shapes)?;
            p.key = "seventh";
            Ok(p)
        }
        let base = spec("gradient_fusion").expect("spec");
        let seventh = TargetSpec {
            key: "seventh",
            cuda: CudaSide {
                key: "seventh",
                cuda: CudaSpec {
                    plan,
                    ..base.cuda.cuda
                },
                kernel: KernelSource {
                    file: "seventh.cu",
                    target_key: "seventh",
                    ..base.cuda.kernel
                },
            },
            ..*base
        };
        check_spec(&seventh, &shapes("gradient_fusion", "smoke"));
    }

    #[test]
    fn launched_entries_deduplicates_shared_kernels() {
        let llama = launched_entries("llama_3_1_8b");
        assert_eq!(llama.iter().filter(|n| **n == "llama_rmsnorm").count(), 1);
        assert!(launched_entries("no_such_target").is_empty());
    }

    /// The CUDA backend finds every target's CUDA side by its key in the list the table hands
    /// down, and an unknown key is unsupported by `cuda`.
    #[test]
    fn every_target_is_found_by_its_key_in_the_cuda_sides_and_an_unknown_key_is_unsupported() {
        for t in TARGETS {
            let c = find(&CUDA_SIDES, t.key).expect("CUDA side");
            assert_eq!((c.key, c.kernel.file), (t.key, t.cuda.kernel.file));
        }
        assert!(matches!(
            find(&CUDA_SIDES, "nope"),
            Err(BackendError::Unsupported { backend, key }) if backend == "cuda" && key == "nope"
        ));
    }
}
