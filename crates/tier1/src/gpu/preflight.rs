//! GPU preflight: reads an [`Inventory`], checks count, exact model and MIG (current and pending),
//! and produces the environment `Fingerprint` a canonical run records, plus its Markdown table.

use super::error::GpuError;
pub(crate) use super::fingerprint::{Check, Fingerprint};
use super::inventory::Inventory;
use crate::history::model::Environment;

/// The GPU model a canonical run requires unless told otherwise.
pub const DEFAULT_EXPECTED_GPU_NAME: &str = "NVIDIA B200";

/// Version of the fingerprint file format.
pub(crate) const FINGERPRINT_SCHEMA_VERSION: u32 = 1;

/// What the GPUs must be.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Every GPU's exact name.
    pub expected_gpu_name: String,
    /// Exactly this many GPUs (None: at least one).
    pub expected_count: Option<u32>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            expected_gpu_name: DEFAULT_EXPECTED_GPU_NAME.to_string(),
            expected_count: None,
        }
    }
}

fn check(gpu: Option<u32>, field: &str, passed: bool, expected: String, found: String) -> Check {
    Check {
        gpu,
        field: field.to_string(),
        passed,
        expected,
        found,
    }
}

/// Read the inventory and check it. `runner` is recorded in the environment (e.g. `RUNNER_NAME`).
pub fn preflight(
    inventory: &dyn Inventory,
    policy: &Policy,
    runner: Option<String>,
) -> Result<Fingerprint, GpuError> {
    let count = inventory.device_count()?;
    let gpus = (0..count)
        .map(|i| inventory.device(i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut checks = vec![match policy.expected_count {
        Some(n) => check(
            None,
            "count",
            count == n,
            format!("exactly {n} GPUs"),
            count.to_string(),
        ),
        None => check(
            None,
            "count",
            count >= 1,
            "at least 1 GPU".to_string(),
            count.to_string(),
        ),
    }];
    let whole = "disabled".to_string();
    for g in &gpus {
        checks.push(check(
            Some(g.index),
            "name",
            g.name == policy.expected_gpu_name,
            format!("{:?}", policy.expected_gpu_name),
            format!("{:?}", g.name),
        ));
        checks.push(check(
            Some(g.index),
            "mig_current",
            g.mig_current.is_whole(),
            whole.clone(),
            g.mig_current.as_str().to_string(),
        ));
        checks.push(check(
            Some(g.index),
            "mig_pending",
            g.mig_pending.is_whole(),
            whole.clone(),
            g.mig_pending.as_str().to_string(),
        ));
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed)
        .map(Check::message)
        .collect();
    let fingerprint = Fingerprint {
        schema_version: FINGERPRINT_SCHEMA_VERSION,
        environment: Environment {
            backend: "cuda".to_string(),
            device_names: gpus.iter().map(|g| g.name.clone()).collect(),
            device_uuids: gpus.iter().map(|g| g.uuid.clone()).collect(),
            driver_version: inventory.driver_version()?,
            cuda_version: inventory.cuda_version()?,
            runner,
            profile: None,
            clock: None,
            runner_class: None,
        },
        gpu_count: count,
        gpus,
        passed: failed.is_empty(),
        checks,
    };
    if failed.is_empty() {
        Ok(fingerprint)
    } else {
        Err(GpuError::Refused {
            failed,
            fingerprint: Box::new(fingerprint),
        })
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "n/a".to_string(), T::to_string)
}

fn on_off(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "on",
        Some(false) => "off",
        None => "n/a",
    }
}

/// The Markdown step-summary section: one row per GPU, then the failed checks (if any).
pub fn markdown(fp: &Fingerprint) -> String {
    let env = &fp.environment;
    let mut s = format!(
        "## Tier-1 GPU Preflight\n\n{} ({} GPUs, driver {}, CUDA {})\n\n",
        if fp.passed { "Passed" } else { "**Failed**" },
        fp.gpu_count,
        opt(&env.driver_version),
        opt(&env.cuda_version),
    );
    s.push_str("| index | name | uuid | memory (MiB) | MIG current | MIG pending | ECC | ECC errors (corr/uncorr) | persistence | SM clock (MHz) | throttle |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for g in &fp.gpus {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {}/{} | {} | {}/{} | {} |\n",
            g.index,
            g.name,
            g.uuid,
            opt(&g.memory_total_bytes.map(|b| b / (1024 * 1024))),
            g.mig_current.as_str(),
            g.mig_pending.as_str(),
            on_off(g.ecc_enabled),
            opt(&g.ecc_errors_corrected),
            opt(&g.ecc_errors_uncorrected),
            on_off(g.persistence_mode),
            opt(&g.clocks.sm_mhz),
            opt(&g.clocks.max_sm_mhz),
            if g.throttle_reasons.is_empty() {
                "none".to_string()
            } else {
                g.throttle_reasons.join(", ")
            },
        ));
    }
    let failed: Vec<String> = fp
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(Check::message)
        .collect();
    if !failed.is_empty() {
        s.push_str("\nFailed checks:\n\n");
        for f in failed {
            s.push_str(&format!("- {f}\n"));
        }
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fixture::FixtureInventory;
    use crate::gpu::{Clocks, GpuRecord, MigMode};

    fn gpu(name: &str, current: MigMode, pending: MigMode) -> GpuRecord {
        GpuRecord {
            index: 0,
            name: name.to_string(),
            uuid: format!("GPU-{name}"),
            memory_total_bytes: Some(192 * 1024 * 1024 * 1024),
            mig_current: current,
            mig_pending: pending,
            ecc_enabled: Some(true),
            ecc_pending: Some(true),
            ecc_errors_corrected: Some(0),
            ecc_errors_uncorrected: Some(0),
            persistence_mode: Some(true),
            clocks: Clocks::default(),
            throttle_reasons: vec![],
            temperature_c: None,
        }
    }

    fn inv(devices: Vec<GpuRecord>) -> FixtureInventory {
        FixtureInventory {
            driver_version: Some("580.95.05".into()),
            cuda_version: Some("13.0".into()),
            devices,
        }
    }

    #[test]
    fn fingerprint_reads_back_as_an_environment() {
        let d = MigMode::Disabled;
        let fp = preflight(
            &inv(vec![
                gpu("NVIDIA B200", d, d),
                gpu("NVIDIA B200", d, MigMode::Unsupported),
            ]),
            &Policy::default(),
            Some("r1".into()),
        )
        .unwrap();
        let v = serde_json::to_value(&fp).unwrap();
        let env: Environment = serde_json::from_value(v).unwrap();
        assert_eq!(env, fp.environment);
        assert_eq!(env.device_names.len(), 2);
        assert_eq!(fp.gpus[1].index, 1);
        assert!(
            markdown(&fp).contains(
                "| 1 | NVIDIA B200 | GPU-NVIDIA B200 | 196608 | disabled | unsupported |"
            )
        );
    }

    #[test]
    fn refusal_names_index_and_field() {
        let d = MigMode::Disabled;
        let e = MigMode::Enabled;
        let err = preflight(
            &inv(vec![gpu("NVIDIA B200", d, d), gpu("NVIDIA B200", d, e)]),
            &Policy {
                expected_count: Some(4),
                ..Policy::default()
            },
            None,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("field count: expected exactly 4 GPUs, found 2"),
            "{msg}"
        );
        assert!(
            msg.contains("GPU 1 field mig_pending: expected disabled, found enabled"),
            "{msg}"
        );
        assert!(!msg.contains("GPU 0"), "{msg}");
    }
}
