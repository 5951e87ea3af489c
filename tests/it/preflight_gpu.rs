//! `tier1-preflight` end to end on inventory fixtures: 8x B200 accepted with its fingerprint and step
//! summary; each bad inventory refused naming GPU index and field; missing NVML refused cleanly.

use crate::support::exit_code::{Exit, exit_code};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_tier1-preflight");
const ATTESTATION: i32 = 7;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gpu")
        .join(name)
}

fn preflight(fixture_name: &str, out_dir: &Path, extra: &[&str]) -> Output {
    crate::support::command::scrubbed(BIN)
        .env_clear()
        .env("RUNNER_NAME", "b200-node-01")
        .env("GITHUB_STEP_SUMMARY", out_dir.join("summary.md"))
        .arg("--inventory-json")
        .arg(fixture(fixture_name))
        .arg("--output")
        .arg(out_dir.join("environment.json"))
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn accepts_eight_b200_with_mig_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let out = preflight("b200_x8.json", dir.path(), &["--expected-count", "8"]);
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        stderr(&out)
    );
    let fp: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fp["backend"], "cuda");
    assert_eq!(fp["gpu_count"], 8);
    assert_eq!(fp["driver_version"], "580.95.05");
    assert_eq!(fp["cuda_version"], "13.0");
    assert_eq!(fp["runner"], "b200-node-01");
    assert_eq!(fp["device_names"].as_array().unwrap().len(), 8);
    assert!(
        fp["device_names"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n == "NVIDIA B200")
    );
    assert_eq!(fp["device_uuids"][7], fp["gpus"][7]["uuid"]);
    assert_eq!(fp["gpus"][3]["index"], 3);
    assert_eq!(fp["checks"].as_array().unwrap().len(), 1 + 8 * 3);
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("environment.json")).unwrap())
            .unwrap();
    assert_eq!(written, fp);
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary
            .starts_with("## Tier-1 GPU Preflight\n\nPassed (8 GPUs, driver 580.95.05, CUDA 13.0)"),
        "{summary}"
    );
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.contains("| NVIDIA B200 | GPU-"))
            .count(),
        8
    );
}

/// Each bad inventory, the options, and the exact failure lines it must produce (and only those).
const REFUSALS: &[(&str, &[&str], &[&str])] = &[
    (
        "h200_x8.json",
        &[],
        &[
            "GPU 0 field name: expected \"NVIDIA B200\", found \"NVIDIA H200\"",
            "GPU 7 field name: expected \"NVIDIA B200\", found \"NVIDIA H200\"",
        ],
    ),
    (
        "mig_enabled.json",
        &[],
        &[
            "GPU 3 field mig_current: expected disabled, found enabled",
            "GPU 3 field mig_pending: expected disabled, found enabled",
        ],
    ),
    (
        "mig_pending.json",
        &[],
        &["GPU 5 field mig_pending: expected disabled, found enabled"],
    ),
    (
        "mixed_models.json",
        &[],
        &["GPU 7 field name: expected \"NVIDIA B200\", found \"NVIDIA H200\""],
    ),
    (
        "zero_devices.json",
        &[],
        &["field count: expected at least 1 GPU, found 0"],
    ),
    (
        "b200_x8.json",
        &["--expected-count", "4"],
        &["field count: expected exactly 4 GPUs, found 8"],
    ),
];

#[test]
fn refuses_each_bad_inventory_naming_index_and_field() {
    for (name, extra, expected) in REFUSALS {
        let dir = tempfile::tempdir().unwrap();
        let out = preflight(name, dir.path(), extra);
        assert_eq!(
            out.status.code(),
            Some(ATTESTATION),
            "{name}: {}",
            stderr(&out)
        );
        let err = stderr(&out);
        let line = err
            .lines()
            .find(|l| l.starts_with("tier1-preflight: error: GPU preflight failed: "))
            .unwrap_or_else(|| panic!("{name}: {err}"));
        let failures: Vec<&str> = line
            .trim_start_matches("tier1-preflight: error: GPU preflight failed: ")
            .split("; ")
            .collect();
        for want in *expected {
            assert!(
                failures.contains(want),
                "{name}: want {want:?} in {failures:?}"
            );
        }
        if *name != "h200_x8.json" {
            assert_eq!(failures.len(), expected.len(), "{name}: {failures:?}");
        } else {
            assert_eq!(failures.len(), 8, "{name}: {failures:?}");
        }
        assert!(
            !dir.path().join("environment.json").exists(),
            "{name}: fingerprint file written on refusal"
        );
        let fp: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(fp["passed"], false, "{name}");
        let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
        assert!(
            summary.contains("**Failed**") && summary.contains(expected[0]),
            "{name}: {summary}"
        );
    }
}

#[test]
fn expected_name_comes_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::command::scrubbed(BIN)
        .env_clear()
        .env("TIER1_EXPECTED_GPU_NAME", "NVIDIA H200")
        .arg("--inventory-json")
        .arg(fixture("h200_x8.json"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_nvml_is_a_clean_attestation_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("environment.json");
    let out = crate::support::command::scrubbed(BIN)
        .env_clear()
        .args([
            "--nvml-library",
            "/nonexistent/libnvidia-ml.so.1",
            "--output",
        ])
        .arg(&dest)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(ATTESTATION), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("tier1-preflight: error: NVML unavailable: expected the NVIDIA driver's /nonexistent/libnvidia-ml.so.1 to load, found: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
    assert!(!dest.exists());
}

#[test]
fn malformed_inventory_is_invalid_input() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("inventory.json");
    std::fs::write(&bad, br#"{"devices": [{"name": "NVIDIA B200", "uuid": "GPU-1", "mig_current": "maybe", "mig_pending": "disabled"}]}"#).unwrap();
    let out = crate::support::command::scrubbed(BIN)
        .env_clear()
        .arg("--inventory-json")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(exit_code(Exit::Invalid)));
    assert!(
        stderr(&out).contains("inventory.json: invalid JSON"),
        "{}",
        stderr(&out)
    );
}
