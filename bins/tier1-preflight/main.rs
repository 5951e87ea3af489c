//! `tier1-preflight`: check the visible GPUs (count, exact model, MIG current and pending) through
//! NVML or a fixture, and print the environment fingerprint a canonical run records.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::gpu::fixture::FixtureInventory;
use tier1::gpu::nvml::NvmlInventory;
use tier1::gpu::preflight::{self, Policy};
use tier1::gpu::{GpuError, Inventory};
use tier1::{Exit, cli};

const TOOL: &str = "tier1-preflight";

/// Check the GPUs and print the environment fingerprint.
#[derive(Debug, Parser)]
#[command(name = TOOL, version, about)]
struct Args {
    /// Every GPU's exact name.
    #[arg(long, env = "TIER1_EXPECTED_GPU_NAME", default_value = preflight::DEFAULT_EXPECTED_GPU_NAME)]
    expected_gpu_name: String,
    /// Exactly this many GPUs (default: at least one).
    #[arg(long, env = "TIER1_EXPECTED_GPU_COUNT")]
    expected_count: Option<u32>,
    /// Read the inventory from this JSON file instead of NVML.
    #[arg(long, env = "TIER1_INVENTORY_JSON")]
    inventory_json: Option<PathBuf>,
    /// The NVML library to load (default `libnvidia-ml.so.1`).
    #[arg(long, env = "TIER1_NVML_LIBRARY")]
    nvml_library: Option<String>,
    /// Also write the fingerprint JSON to this file (written only when preflight passes).
    #[arg(long, env = "TIER1_ENVIRONMENT_JSON")]
    output: Option<PathBuf>,
    /// Runner name recorded in the fingerprint.
    #[arg(long, env = "RUNNER_NAME")]
    runner_name: Option<String>,
}

fn run(args: Args) -> Result<Exit, GpuError> {
    let inventory: Box<dyn Inventory> = match &args.inventory_json {
        Some(path) => Box::new(FixtureInventory::read(path)?),
        None => Box::new(NvmlInventory::open(args.nvml_library.as_deref())?),
    };
    let policy = Policy {
        expected_gpu_name: args.expected_gpu_name,
        expected_count: args.expected_count,
    };
    let result = preflight::preflight(
        inventory.as_ref(),
        &policy,
        args.runner_name.filter(|n| !n.is_empty()),
    );
    let fingerprint = match &result {
        Ok(fp) => fp,
        Err(GpuError::Refused { fingerprint, .. }) => fingerprint.as_ref(),
        Err(_) => return result.map(|_| Exit::Ok),
    };
    cli::print_json(fingerprint);
    if let Err(e) = tier1::gha::step_summary(&preflight::markdown(fingerprint)) {
        tracing::warn!("could not append to GITHUB_STEP_SUMMARY: {e}");
    }
    if let (Ok(fp), Some(path)) = (&result, &args.output) {
        tier1::json::write(path, fp)?;
    }
    result.map(|_| Exit::Ok)
}

fn main() -> ExitCode {
    cli::init();
    let args = match tier1::cli::parse::<Args>("tier1-preflight") {
        Ok(a) => a,
        Err(code) => return code,
    };
    cli::finish(TOOL, run(args))
}
