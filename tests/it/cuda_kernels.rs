//! The CUDA kernels without a GPU: every `kernels/*.cu` compiles with NVRTC for sm_90 and sm_100a
//! with an empty log, and the launch registry matches the kernels' entry points one to one.

use crate::support::skip;
use std::collections::BTreeSet;
use std::path::Path;
use tier1::bench::cuda::{self, CudaError, entry_points};
use tier1::bench::{KERNELS, LAUNCHES, launched_entries};

const ARCHES: [&str; 2] = ["sm_90", "sm_100a"];

/// NVRTC present: run. Absent: a visible skip, or a failure under TIER1_NVRTC_REQUIRED=1.
fn nvrtc_or_skip(test: &str) -> bool {
    let missing = (!cuda::nvrtc_present()).then(|| {
        format!(
            "libnvrtc.so.12 cannot be loaded (LD_LIBRARY_PATH={:?})",
            std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
        )
    });
    skip::unless_missing(test, skip::NVRTC, missing)
}

#[test]
fn every_kernel_compiles_for_sm90_and_sm100a_without_warnings() {
    if !nvrtc_or_skip("every_kernel_compiles_for_sm90_and_sm100a_without_warnings") {
        return;
    }
    for arch in ARCHES {
        for k in KERNELS {
            let compiled = cuda::compile_kernel(&k, arch)
                .unwrap_or_else(|e| panic!("kernels/{} for {arch}: {e}", k.file));
            for entry in entry_points(k.source) {
                assert!(
                    compiled.ptx.contains(&format!(".entry {entry}(")),
                    "kernels/{} for {arch}: PTX lacks .entry {entry}",
                    k.file
                );
            }
        }
    }
}

#[test]
fn a_warning_fails_the_compile_check() {
    if !nvrtc_or_skip("a_warning_fails_the_compile_check") {
        return;
    }
    let bad = cuda::KernelSource {
        file: "warning_probe.cu",
        target_key: "none",
        min_capability: (7, 0),
        source: "extern \"C\" __global__ void warn_probe(float* x) { int unused; x[0] = 1.0f; }\n",
    };
    match cuda::compile_kernel(&bad, "sm_90") {
        Err(CudaError::Compile {
            status, log, file, ..
        }) => {
            assert_eq!(status, "warnings");
            assert_eq!(file, "warning_probe.cu");
            assert!(log.contains("unused"), "log names the variable: {log}");
        }
        other => panic!("expected a compile failure on a warning, found {other:?}"),
    }
    let broken = cuda::KernelSource {
        source: "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared; }\n",
        ..bad
    };
    match cuda::compile_kernel(&broken, "sm_100a") {
        Err(CudaError::Compile {
            status, log, arch, ..
        }) => {
            assert_ne!(status, "warnings");
            assert_eq!(arch, "sm_100a");
            assert!(
                log.contains("undeclared"),
                "log names the identifier: {log}"
            );
        }
        other => panic!("expected a compile error, found {other:?}"),
    }
}

#[test]
fn kernel_directory_matches_the_embedded_table() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("kernels/ is readable") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_some_and(|e| e == "cu") {
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).expect("kernel file is UTF-8");
            let k = KERNELS
                .iter()
                .find(|k| k.file == name)
                .unwrap_or_else(|| panic!("kernels/{name} is not in bench::KERNELS"));
            assert_eq!(
                k.source, text,
                "kernels/{name} differs from the embedded copy"
            );
            on_disk.insert(name);
        }
    }
    let table: BTreeSet<String> = KERNELS.iter().map(|k| k.file.to_string()).collect();
    assert_eq!(on_disk, table, "kernels/*.cu versus KERNELS");
}

#[test]
fn every_entry_point_is_launched_and_every_launch_exists() {
    for k in KERNELS {
        let declared: BTreeSet<String> = entry_points(k.source).into_iter().collect();
        let launched: BTreeSet<String> = launched_entries(k.target_key)
            .into_iter()
            .map(String::from)
            .collect();
        let unlaunched: Vec<_> = declared.difference(&launched).collect();
        let missing: Vec<_> = launched.difference(&declared).collect();
        assert!(
            unlaunched.is_empty(),
            "kernels/{}: entries no launcher of {} uses: {unlaunched:?}",
            k.file,
            k.target_key
        );
        assert!(
            missing.is_empty(),
            "target {}: launchers name kernels kernels/{} lacks: {missing:?}",
            k.target_key,
            k.file
        );
    }
    let names: Vec<String> = KERNELS
        .iter()
        .flat_map(|k| entry_points(k.source))
        .collect();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(
        names.len(),
        unique.len(),
        "an entry name is declared twice: {names:?}"
    );
}

#[test]
fn every_cuda_target_is_a_suite_target_with_both_variants() {
    let suite = tier1::suite::Suite::embedded();
    let suite_keys: BTreeSet<&str> = suite.targets.iter().map(|t| t.key.as_str()).collect();
    let kernel_keys: BTreeSet<&str> = KERNELS.iter().map(|k| k.target_key).collect();
    let launch_keys: BTreeSet<&str> = LAUNCHES.iter().map(|(k, _, _)| *k).collect();
    assert_eq!(kernel_keys, suite_keys, "kernel files versus suite targets");
    assert_eq!(
        launch_keys, suite_keys,
        "launch registry versus suite targets"
    );
    for (key, base, opt) in LAUNCHES {
        assert!(
            !base.is_empty() && !opt.is_empty(),
            "{key}: a variant launches nothing"
        );
        assert_ne!(
            base, opt,
            "{key}: baseline and optimized launch the same kernels"
        );
    }
}

#[test]
fn cuda_backend_is_a_clean_error_without_a_device() {
    let outcome = std::panic::catch_unwind(tier1::bench::cuda_backend);
    let Ok(result) = outcome else {
        panic!("cuda_backend() panicked");
    };
    match result {
        Err(message) => {
            assert!(!message.is_empty());
            eprintln!("cuda_backend() here: {message}");
        }
        Ok(b) => assert_eq!(
            b.name(),
            "cuda",
            "a device is present: the backend names itself"
        ),
    }
}

/// Device test, on a machine with a GPU: `cargo test --test it cuda_kernels:: -- --include-ignored`
/// (scripts/gpu-check.sh runs it so). Every target at its `smoke` shapes: each CUDA variant's
/// output against the CPU twin's baseline output at the same seed, within the target's tolerance;
/// device memory reported for every variant. Without a GPU it is reported as ignored, never as
/// passed.
#[test]
#[ignore = "device test: needs a GPU; run with --include-ignored on a GPU machine (scripts/gpu-check.sh)"]
fn device_every_target_matches_its_cpu_twin_at_smoke_shapes() {
    let backend = tier1::bench::cuda_backend()
        .unwrap_or_else(|e| panic!("the device test needs a CUDA backend: {e}"));
    let suite = tier1::suite::Suite::embedded();
    for t in &suite.targets {
        let Some(shapes) = t.shapes.get("smoke") else {
            continue;
        };
        let mut gpu = backend
            .prepare(&t.key, shapes, 42)
            .unwrap_or_else(|e| panic!("{}: prepare: {e}", t.key));
        let mut cpu = tier1::bench::cpu_workload(&t.key, shapes, 42).expect("cpu twin");
        let want = cpu.variants[0].runner.output().expect("cpu baseline");
        for v in gpu.variants.iter_mut() {
            let got = v
                .runner
                .output()
                .unwrap_or_else(|e| panic!("{} {}: {e}", t.key, v.name));
            let check = tier1::bench::verify::compare(&got, &want, None, t.tolerance);
            assert!(
                check.passed,
                "{} {} vs CPU baseline: {check:?}",
                t.key, v.name
            );
            let ms = v.runner.run().expect("timed run").expect("device time");
            assert!(ms.is_finite() && ms >= 0.0);
            assert!(v.runner.device_peak_bytes().is_some_and(|b| b > 0));
        }
    }
}
