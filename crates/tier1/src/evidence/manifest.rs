//! `<run_id>/manifest.json`: who, what and where a run measured (commit, dirty flag, suite config
//! digest, profile, toolchain, environment fingerprint, attestation records).

use super::git::GitInfo;
use crate::history::model::Environment;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Format version of the manifest.
pub const MANIFEST_SCHEMA_VERSION: u32 = 1;

/// The manifest of one run's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The run id (a recheck's own id for recheck evidence).
    pub run_id: Option<String>,
    /// For recheck evidence: the main run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck_of: Option<String>,
    /// RFC 3339 UTC creation time.
    pub created_at: String,
    /// The checkout: commit and dirty flag.
    pub git: GitInfo,
    /// Suite identity and the digest of its parsed config.
    pub suite: SuiteRecord,
    /// The toolchain that built the harness.
    pub toolchain: Toolchain,
    /// Backend and device fingerprint.
    pub environment: Environment,
    /// Runner and GPU attestation records, as produced by `tier1-attest` / `tier1-preflight`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation: Option<Value>,
    /// Evidence-relative paths of the run's files.
    pub files: ManifestFiles,
}

/// Suite identity in a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRecord {
    /// Suite name.
    pub name: String,
    /// Suite version.
    pub version: u32,
    /// `sha256:` of the canonical JSON of the parsed suite.
    pub config_digest: String,
    /// Profile used.
    pub profile: String,
}

/// Toolchain facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Toolchain {
    /// tier1's version.
    pub tier1_version: String,
    /// `rustc` version the binaries were built with (from the build environment), if known.
    pub rustc: Option<String>,
    /// Target triple family (`x86_64-linux`).
    pub target: String,
}

impl Toolchain {
    /// The running binary's toolchain.
    pub fn current() -> Toolchain {
        Toolchain {
            tier1_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc: option_env!("TIER1_RUSTC_VERSION").map(str::to_string),
            target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        }
    }
}

/// Evidence-relative paths of a run's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFiles {
    /// `<run_id>/results/benchmark_test_results.json`.
    pub results_json: String,
    /// `<run_id>/report.md`.
    pub report_md: String,
}
