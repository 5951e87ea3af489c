//! `scripts/gpu-check.sh --bin-dir DIR --no-suite`, as the nightly workflow runs it: probes the
//! driver and NVRTC with the binaries already built, never calls cargo (one toolchain), never
//! installs anything, never runs the suite; and its refusals, each with a message and exit code.
//! The driver is the scenario stand-in for nvidia-smi (tests/fixtures/workflows/bin). Also
//! `.ci/nvrtc.sh`'s refusal of a requirements file without an exact pin. Stand-ins hide the
//! machine's own driver and NVRTC where it has them, so every test runs on every machine.

use crate::support::nvrtc_wheel;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The exit codes of `scripts/gpu-check.sh` (its own, not tier1's table): every check passed, a
/// check failed (`die`), a usage error (`usage`).
const PASSED: i32 = 0;
const FAILED: i32 = 1;
const USAGE: i32 = 2;

struct Machine {
    tmp: tempfile::TempDir,
    bin_dir: PathBuf,
    nvrtc_dir: PathBuf,
    log: PathBuf,
}

fn machine() -> Machine {
    let tmp = tempfile::tempdir().unwrap();
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_tier1-run"), bin_dir.join("tier1-run")).unwrap();
    let nvrtc_dir = tmp.path().join("nvrtc");
    std::fs::create_dir_all(&nvrtc_dir).unwrap();
    std::fs::write(nvrtc_dir.join("libnvrtc.so.12"), "").unwrap();
    let log = tmp.path().join("shims.log");
    std::fs::write(&log, "").unwrap();
    Machine {
        tmp,
        bin_dir,
        nvrtc_dir,
        log,
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of links to every program on the system's `PATH` but `nvidia-smi`: as `PATH`, a
/// machine without a driver, also where there is one (the GPU machine).
fn path_without_nvidia_smi(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let system = std::env::var_os("PATH").unwrap_or_default();
    for d in std::env::split_paths(&system) {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let link = dir.join(&name);
            if name != "nvidia-smi" && std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(entry.path(), link).unwrap();
            }
        }
    }
    dir.to_path_buf()
}

/// Run the script with the stand-ins (nvidia-smi, cargo that logs) first on PATH when `driver`,
/// else without any nvidia-smi; an `ldconfig` that knows no libnvrtc.so.12 first either way (the
/// system's NVRTC, where there is one, would hide what `ld_path` offers).
fn gpu_check(m: &Machine, driver: bool, ld_path: Option<&Path>, args: &[&str]) -> Output {
    let no_nvrtc = nvrtc_wheel::path_without_system_nvrtc(&m.tmp.path().join("no-system-nvrtc"));
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&no_nvrtc).take(1).collect();
    if driver {
        dirs.push(root().join("tests/fixtures/workflows/bin"));
        dirs.extend(std::env::split_paths(&no_nvrtc).skip(1));
    } else {
        dirs.push(path_without_nvidia_smi(&m.tmp.path().join("no-driver")));
    }
    let path = std::env::join_paths(dirs).unwrap();
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/gpu-check.sh"))
        .args(args)
        .env("PATH", path)
        .env("TIER1_SHIM_LOG", &m.log)
        .env("TIER1_SHIM_PREBUILT", &m.bin_dir)
        .env("TIER1_GPU_CHECK_OUT", m.tmp.path().join("out"))
        .env(
            "TIER1_INVENTORY_JSON",
            root().join("tests/fixtures/gpu/b200_x8.json"),
        )
        .env_remove("LD_LIBRARY_PATH");
    if let Some(p) = ld_path {
        c.env("LD_LIBRARY_PATH", p);
    }
    c.output().expect("bash runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn with_built_binaries_it_probes_only_and_never_builds() {
    let m = machine();
    let bin = m.bin_dir.to_str().unwrap();
    let o = gpu_check(
        &m,
        true,
        Some(&m.nvrtc_dir),
        &["--bin-dir", bin, "--no-suite"],
    );
    assert_eq!(o.status.code(), Some(PASSED), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("GPU: NVIDIA B200, GPU-b2000000"), "{err}");
    assert!(err.contains("NVRTC: libnvrtc.so.12 found"), "{err}");
    assert!(
        err.contains("release build and CUDA tests skipped"),
        "{err}"
    );
    assert!(err.contains("passed (suite skipped: --no-suite)"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&m.log).unwrap(),
        "",
        "cargo was called"
    );
    let out = m.tmp.path().join("out");
    assert!(
        tier1::fsx::is_absent_or_empty(&out).unwrap(),
        "no suite output"
    );
}

#[test]
fn with_built_binaries_a_missing_nvrtc_is_refused_not_installed() {
    let m = machine();
    let bin = m.bin_dir.to_str().unwrap();
    let o = gpu_check(
        &m,
        true,
        Some(m.tmp.path()),
        &["--bin-dir", bin, "--no-suite"],
    );
    assert_eq!(o.status.code(), Some(FAILED), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("gpu-check: FAILED: NVRTC: libnvrtc.so.12 is neither known to ldconfig nor in LD_LIBRARY_PATH="),
        "{err}"
    );
    assert!(!err.contains("nvrtc.sh:"), "tried to install NVRTC: {err}");
}

#[test]
fn refusals_name_the_problem() {
    let m = machine();
    let o = gpu_check(&m, true, Some(&m.nvrtc_dir), &["--bogus"]);
    assert_eq!(o.status.code(), Some(USAGE));
    assert!(
        stderr(&o).contains("unknown argument '--bogus'"),
        "{}",
        stderr(&o)
    );
    let o = gpu_check(&m, true, Some(&m.nvrtc_dir), &["--bin-dir"]);
    assert_eq!(o.status.code(), Some(USAGE));
    assert!(
        stderr(&o).contains("--bin-dir needs a directory"),
        "{}",
        stderr(&o)
    );
    let empty = m.tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = gpu_check(
        &m,
        true,
        Some(&m.nvrtc_dir),
        &["--bin-dir", empty.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(FAILED));
    assert!(
        stderr(&o).contains("found no executable") && stderr(&o).contains("tier1-run"),
        "{}",
        stderr(&o)
    );
    let bin = m.bin_dir.to_str().unwrap();
    let o = gpu_check(
        &m,
        false,
        Some(&m.nvrtc_dir),
        &["--bin-dir", bin, "--no-suite"],
    );
    assert_eq!(o.status.code(), Some(FAILED));
    assert!(
        stderr(&o).contains("nvidia-smi not found"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&m.log).unwrap(), "");
}

#[test]
fn nvrtc_setup_refuses_requirements_without_an_exact_pin() {
    let t = tempfile::tempdir().unwrap();
    let ci = t.path().join(".ci");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::copy(root().join(".ci/nvrtc.sh"), ci.join("nvrtc.sh")).unwrap();
    std::fs::write(
        ci.join("nvrtc-requirements.txt"),
        "nvidia-cuda-nvrtc-cu12>=12.8,<13\n",
    )
    .unwrap();
    let venv = t.path().join("venv");
    let o = Command::new("bash")
        .arg(ci.join("nvrtc.sh"))
        .env(
            "PATH",
            nvrtc_wheel::path_without_system_nvrtc(&t.path().join("no-system-nvrtc")),
        )
        .env("TIER1_NVRTC_CACHE", &venv)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(FAILED), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("expected a line nvidia-cuda-nvrtc-cu12==<version>, found none"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    assert!(!venv.exists(), "nothing created");
}
