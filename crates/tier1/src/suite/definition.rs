//! The suite definition itself: [`Suite`], the embedded canonical suite, and loading and parsing
//! a suite file.

use super::{
    Profile, RunnerClass, SideBySideSetting, SuiteError, Target, Thresholds, limits, lines,
    parse_error, validate,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The canonical suite shipped with tier1, embedded so a newcomer's first run needs no file.
pub const EMBEDDED_TIER1_YAML: &str =
    include_str!("../../../../configs/benchmark_suites/tier1.yaml");

/// A parsed, validated suite definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Suite identity (`tier1`).
    pub suite_name: String,
    /// Suite contract version; a change means old anchors are not comparable.
    pub version: u32,
    /// Human description.
    #[serde(default)]
    pub(crate) description: String,
    /// Where the history package lives, relative to the repository root.
    #[serde(default = "default_history_root")]
    pub(crate) history_root: String,
    /// Profile used when none is asked for and a GPU is usable.
    #[serde(default = "default_profile")]
    pub(crate) default_profile: String,
    /// Reference field kept for compatibility (`both`, `json`, `markdown`).
    #[serde(default = "default_output_format")]
    pub(crate) default_output_format: String,
    /// The workflow file whose runs hold the history (`benchmarks.yml`): local runs record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) workflow: Option<String>,
    /// The artifact prefix of the project's workflow (`acme`): local runs name artifacts with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) artifact_prefix: Option<String>,
    /// Regression thresholds (extension; defaults are the reference's).
    #[serde(default)]
    pub thresholds: Thresholds,
    /// Named run profiles (extension).
    #[serde(default)]
    pub(crate) profiles: BTreeMap<String, Profile>,
    /// The targets, in canonical order.
    pub targets: Vec<Target>,
    /// Build step of the command targets (argv, no shell), run once in each checkout a
    /// side-by-side comparison or a bisection builds (docs/suite.md); empty: nothing to build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) build: Vec<String>,
    /// `auto` (default) or `off`: whether a night confirms its suspected targets side by side
    /// with the anchor's own code (a profile's own setting wins; docs/suite.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) side_by_side: Option<SideBySideSetting>,
    /// Shards a night is split over (docs/sharding.md); absent: 1 (a runner class may set its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shards: Option<u32>,
    /// The runner classes the suite is measured on, by name (docs/sharding.md): each keeps its own
    /// history and anchor.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) runner_classes: BTreeMap<String, RunnerClass>,
}

fn default_history_root() -> String {
    "artifacts/history/tier1".into()
}
fn default_profile() -> String {
    "minimal".into()
}
fn default_output_format() -> String {
    "both".into()
}

impl Suite {
    /// The embedded canonical suite.
    pub fn embedded() -> Suite {
        Suite::parse(EMBEDDED_TIER1_YAML, "<embedded tier1.yaml>").expect("embedded suite is valid")
    }

    /// Load and validate a suite file (read with a size limit, UTF-8 only: `limits::read_text`).
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = limits::read_text(path)?;
        Suite::parse(&text, &path.display().to_string())
    }

    /// Parse and validate YAML text; `origin` names the source in errors. Every error names the
    /// line of the item it is about (see `lines::Lines`) in tier1's words.
    pub fn parse(text: &str, origin: &str) -> Result<Suite, SuiteError> {
        let lines = lines::Lines::scan(text).map_err(|d| SuiteError::Parse {
            path: origin.to_string(),
            message: format!(
                "line {}: duplicate key {:?} (first at line {}): a key may appear once per mapping",
                d.line,
                d.path.rsplit('.').next().unwrap_or(&d.path),
                d.first
            ),
        })?;
        let suite: Suite = serde_saphyr::from_str(text).map_err(|e| SuiteError::Parse {
            path: origin.to_string(),
            message: parse_error::message(&e, text),
        })?;
        validate::suite(&suite, &lines, origin)?;
        Ok(suite)
    }

    /// The target with `key`.
    pub fn target(&self, key: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.key == key)
    }

    /// The named profile.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// SHA-256 of the canonical JSON of this suite (recorded in manifests).
    pub(crate) fn config_digest(&self) -> crate::digest::Digest {
        let v = serde_json::to_value(self).expect("suite serializes");
        crate::digest::Digest::of_bytes(crate::json::canonical(&v).as_bytes())
    }
}
