//! `<run_id>/manifest.json`: who, what and where a run measured (commit, dirty flag, suite config
//! digest, profile, toolchain, environment fingerprint, attestation records).

use super::git::GitInfo;
use crate::history::model::Environment;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Format version of the manifest.
pub(crate) const MANIFEST_SCHEMA_VERSION: u32 = 1;

/// The manifest of one run's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// [`MANIFEST_SCHEMA_VERSION`].
    pub(crate) schema_version: u32,
    /// The run id (a recheck's own id for recheck evidence).
    pub(crate) run_id: Option<String>,
    /// For recheck evidence: the main run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recheck_of: Option<String>,
    /// RFC 3339 UTC creation time.
    pub(crate) created_at: String,
    /// The checkout: commit and dirty flag.
    pub(crate) git: GitInfo,
    /// Suite identity and the digest of its parsed config.
    pub(crate) suite: SuiteRecord,
    /// The toolchain that built the harness.
    pub(crate) toolchain: Toolchain,
    /// Backend and device fingerprint.
    pub(crate) environment: Environment,
    /// Runner and GPU attestation records, as produced by `tier1-attest` / `tier1-preflight`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) attestation: Option<Value>,
    /// Evidence-relative paths of the run's files.
    pub(crate) files: ManifestFiles,
    /// The runner class measured on (docs/sharding.md); absent: the unnamed class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) runner_class: Option<String>,
    /// A shard's identity (its own manifest, `<run_id>/shards/<K>/manifest.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<ManifestShard>,
    /// A combined run's shards (its manifest, `<run_id>/manifest.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shards: Option<crate::history::shards::ShardsRecord>,
}

/// Which shard of which plan a shard's manifest is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ManifestShard {
    /// 1-based shard number.
    pub(crate) shard: u32,
    /// The plan's shard count.
    pub(crate) shards: u32,
    /// The plan's digest.
    pub(crate) plan_digest: crate::digest::Digest,
    /// The target keys measured.
    pub(crate) targets: Vec<String>,
}

/// Suite identity in a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SuiteRecord {
    /// Suite name.
    pub(crate) name: String,
    /// Suite version.
    pub(crate) version: u32,
    /// `sha256:` of the canonical JSON of the parsed suite.
    pub(crate) config_digest: String,
    /// Profile used.
    pub(crate) profile: String,
}

/// Toolchain facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Toolchain {
    /// tier1's version.
    pub(crate) tier1_version: String,
    /// `rustc` version the binaries were built with (from the build environment), if known.
    pub(crate) rustc: Option<String>,
    /// Target triple family (`x86_64-linux`).
    pub(crate) target: String,
}

impl Toolchain {
    /// The running binary's toolchain.
    pub(crate) fn current() -> Toolchain {
        Toolchain {
            tier1_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc: option_env!("TIER1_RUSTC_VERSION").map(str::to_string),
            target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        }
    }
}

/// Evidence-relative paths of a run's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ManifestFiles {
    /// `<run_id>/results/benchmark_test_results.json`.
    pub(crate) results_json: String,
    /// `<run_id>/report.md`.
    pub(crate) report_md: String,
}
