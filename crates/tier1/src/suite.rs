//! The suite config (`configs/benchmark_suites/tier1.yaml`): targets, goals, profiles and regression
//! thresholds, parsed strictly (unknown fields, duplicate keys or targets and bad goals are errors
//! that name the line).

pub(crate) mod classes;
mod discover;
mod format;
pub(crate) mod limits;
mod lines;
mod names;
mod parse_error;
pub(crate) mod settings;
mod validate;

pub use classes::{RunnerClass, class_prefix};
pub(crate) use discover::SuiteSource;
pub(crate) use format::{OutputFormat, VariantMap, variant_name};
pub(crate) use names::{RunNames, run_names};
use serde::{Deserialize, Serialize};
pub use settings::Clock;
pub(crate) use settings::{
    AnchorPrecision, SideBySideSetting, TargetSettings, ThresholdBook, ThresholdOverrides,
};
use std::collections::BTreeMap;
use std::path::Path;

/// The canonical suite shipped with tier1, embedded so a newcomer's first run needs no file.
pub const EMBEDDED_TIER1_YAML: &str = include_str!("../../../configs/benchmark_suites/tier1.yaml");
/// Fewest timed rounds the harness runs whatever `iterations` says: a 95 % distribution-free
/// interval of a median needs six values.
pub(crate) const MIN_ROUNDS: u32 = 6;

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

/// Regression thresholds of `compare` and the harness speed gate, and the statistical detection
/// settings (tier1 extension; see docs/regression-model.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    /// Relative speedup drop (percent) that is a regression.
    pub speedup_regression_pct: f64,
    /// Relative optimized-latency growth (percent) that is a regression.
    pub optimized_latency_regression_pct: f64,
    /// Absolute optimized-time change (ms) below which speed changes are noise.
    pub min_optimized_time_delta_ms: f64,
    /// Memory-savings drop in percentage points that is a regression.
    pub memory_savings_regression_points: f64,
    /// Relative optimized-memory growth (percent) that is a regression.
    pub optimized_memory_regression_pct: f64,
    /// Minimum best speedup for a speed-goal target to succeed (harness gate).
    pub min_speedup: f64,
    /// `statistical` (thresholds and significance) or `reference` (the reference rules alone).
    pub detection: DetectionMethod,
    /// Family-wise false-alarm level of one comparison; each of the two tests (speedup, optimized
    /// latency) of each compared target uses `alpha / (2 × compared targets)`.
    pub alpha: f64,
    /// Run-to-run noise (percent, one standard deviation) assumed before the history shows it.
    pub prior_noise_pct: f64,
    /// How many runs' worth of evidence the prior counts for.
    pub prior_runs: f64,
    /// Accepted runs (newest first) the noise estimate and the outlier check look at.
    pub history_window: u32,
    /// Promotion refuses a value more than this many robust standard deviations (1.4826 MAD)
    /// from the median of the accepted runs.
    pub anchor_outlier_mads: f64,
    /// Accepted runs needed before the outlier check applies.
    pub anchor_outlier_min_runs: u32,
    /// What the gate does with a target whose verdict is still `unknown` after its extra
    /// measurement: `pass` (the run passes, the target is listed as unknown with what it could
    /// not rule out, and the run is never an anchor) or `fail`.
    pub on_unknown: UnknownRule,
}

/// The gate's rule for a target the measurement cannot decide (`thresholds.on_unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnknownRule {
    /// Never fail a night on noise alone: the run passes, listing the unknown target.
    #[default]
    Pass,
    /// Fail the gate while any target is unknown (strict canonical runners).
    Fail,
}

impl Thresholds {
    /// The numeric settings by name, as a suite writes them (validation and limits read them
    /// from this one list).
    pub(crate) fn numbers(&self) -> [(&'static str, f64); 9] {
        let t = self;
        [
            ("speedup_regression_pct", t.speedup_regression_pct),
            (
                "optimized_latency_regression_pct",
                t.optimized_latency_regression_pct,
            ),
            ("min_optimized_time_delta_ms", t.min_optimized_time_delta_ms),
            (
                "memory_savings_regression_points",
                t.memory_savings_regression_points,
            ),
            (
                "optimized_memory_regression_pct",
                t.optimized_memory_regression_pct,
            ),
            ("min_speedup", t.min_speedup),
            ("prior_noise_pct", t.prior_noise_pct),
            ("prior_runs", t.prior_runs),
            ("anchor_outlier_mads", t.anchor_outlier_mads),
        ]
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            speedup_regression_pct: 5.0,
            optimized_latency_regression_pct: 5.0,
            min_optimized_time_delta_ms: 0.05,
            memory_savings_regression_points: 5.0,
            optimized_memory_regression_pct: 5.0,
            min_speedup: 1.05,
            detection: DetectionMethod::Statistical,
            alpha: 0.05,
            prior_noise_pct: 2.0,
            prior_runs: 8.0,
            history_window: 20,
            anchor_outlier_mads: 3.5,
            anchor_outlier_min_runs: 5,
            on_unknown: UnknownRule::Pass,
        }
    }
}

/// How changes are decided (`thresholds.detection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectionMethod {
    /// The reference thresholds AND a significance test that accounts for run-to-run noise.
    #[default]
    Statistical,
    /// Exactly the reference rules (parity).
    Reference,
}

impl DetectionMethod {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DetectionMethod::Statistical => "statistical",
            DetectionMethod::Reference => "reference",
        }
    }
}

/// Which backend a profile is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BackendKind {
    /// The Rust CPU implementations.
    Cpu,
    /// NVRTC kernels through cudarc.
    Cuda,
}

/// A run profile: shapes are per target (`Target::shapes[profile]`), sampling knobs here
/// (docs/harness.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What the profile is for.
    #[serde(default)]
    pub(crate) description: String,
    /// The backend this profile runs on; `cuda` profiles refuse the CPU backend.
    pub(crate) backend: BackendKind,
    /// Warm-up executions per variant (at least 5).
    #[serde(default = "default_warmup")]
    pub(crate) warmup: u32,
    /// Minimum timed rounds (each round times every variant once, in a shuffled order); at least
    /// [`MIN_ROUNDS`] are run whatever this says.
    #[serde(default = "default_iterations")]
    pub(crate) iterations: u32,
    /// Most timed rounds.
    #[serde(default = "default_max_rounds")]
    pub(crate) max_rounds: u32,
    /// Shortest timed sample (ms): executions are batched until one batch lasts this long.
    #[serde(default = "default_min_sample_ms")]
    pub(crate) min_sample_ms: f64,
    /// Stop adding rounds once the 95 % intervals of the speedup and of the optimized time are
    /// within ± this percent of their estimates; unset: derived from the thresholds
    /// ([`settings::derived_precision_pct`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) precision_pct: Option<f64>,
    /// Seconds of timing after which a target stops adding rounds even when imprecise.
    #[serde(default = "default_budget_s")]
    pub(crate) budget_s: f64,
    /// Run the whole suite pinned to one CPU (the highest the process may use): the measuring
    /// threads and command targets inherit it, so a busy neighbour core and cross-CPU wake-ups
    /// stay out of the timings (CPU profiles on small shared machines).
    #[serde(default)]
    pub(crate) pin_cpu: bool,
    /// Per-target wall-clock limit in seconds.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_s: u64,
    /// Independent passes a run that may become the anchor (a bootstrap, an accept dispatch's
    /// candidate) measures every target in, pooled into one estimate with the passes that
    /// disagree with the others left out (docs/harness.md "The anchor").
    #[serde(default = "default_anchor_passes")]
    pub(crate) anchor_passes: u32,
    /// `measured` (default): an anchor carries the precision the machine reached; `required`:
    /// an anchor that did not reach it is refused.
    #[serde(default)]
    pub(crate) anchor_precision: AnchorPrecision,
    /// The clock CPU samples are read from: `wall` (default) or `cpu`, the process's CPU time,
    /// which preemption by other processes does not inflate (pinned CPU profiles on shared
    /// machines; docs/harness.md). Device times are used whatever it says.
    #[serde(default)]
    pub(crate) clock: Clock,
    /// `auto` or `off`: the suite's `side_by_side` for this profile (docs/suite.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) side_by_side: Option<SideBySideSetting>,
}

fn default_warmup() -> u32 {
    5
}
fn default_iterations() -> u32 {
    10
}
fn default_max_rounds() -> u32 {
    1000
}
fn default_min_sample_ms() -> f64 {
    1.0
}
fn default_anchor_passes() -> u32 {
    settings::DEFAULT_ANCHOR_PASSES
}
fn default_budget_s() -> f64 {
    30.0
}
fn default_timeout() -> u64 {
    600
}

/// What a target optimizes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// Lower time: speedup and optimized latency are checked.
    Speed,
    /// Lower memory: savings points and optimized memory are checked.
    Memory,
    /// A single benchmark: one variant, judged on its absolute time (no speedup, no pair).
    Time,
}

impl Goal {
    /// Normalise a stored goal string (`performance` and empty mean speed).
    pub(crate) fn from_stored(s: Option<&str>) -> Goal {
        match s.map(str::trim) {
            Some("memory") => Goal::Memory,
            Some("time") => Goal::Time,
            _ => Goal::Speed,
        }
    }
    /// The stored form.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Goal::Speed => "speed",
            Goal::Memory => "memory",
            Goal::Time => "time",
        }
    }
}

/// How a target is executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// Implemented inside tier1 (CPU twin, and CUDA kernels where built).
    #[default]
    Builtin,
    /// An external command that prints the documented result JSON.
    Command,
}

/// Verification tolerance: `|opt - base| <= atol + rtol * |base|` elementwise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// Relative tolerance.
    pub(crate) rtol: f64,
    /// Absolute tolerance.
    pub(crate) atol: f64,
}

/// One suite target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Stable short key (`block_scaling`).
    pub key: String,
    /// Reference target string `chapter:example` (`labs/block_scaling:block_scaling`).
    pub target: String,
    /// Category (`gemm`, `attention`, ...).
    pub(crate) category: String,
    /// Why it is in the suite.
    #[serde(default)]
    pub(crate) rationale: String,
    /// Speed or memory.
    #[serde(default = "default_goal")]
    pub optimization_goal: Goal,
    /// Verification tolerance.
    pub tolerance: Tolerance,
    /// Built-in or external command.
    #[serde(default)]
    pub kind: TargetKind,
    /// For `kind: command`: argv of the command (no shell).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) command: Vec<String>,
    /// For `kind: command`: how its output is read (tier1's document or a tool's, [`format`]).
    #[serde(default, skip_serializing_if = "OutputFormat::is_tier1")]
    pub(crate) format: OutputFormat,
    /// With a tool's `format`: which of its benchmarks are the baseline and the optimized ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) variants: Option<VariantMap>,
    /// Shapes per profile name: parameter name to integer value.
    #[serde(default)]
    pub shapes: BTreeMap<String, BTreeMap<String, u64>>,
    /// This target's precision (± percent), over the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) precision_pct: Option<f64>,
    /// This target's timing budget per pass (seconds), over the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) budget_s: Option<f64>,
    /// This target's shortest sample (ms), over the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) min_sample_ms: Option<f64>,
    /// This target's thresholds (floor included), over the suite's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thresholds: Option<ThresholdOverrides>,
}

fn default_goal() -> Goal {
    Goal::Speed
}

/// A suite file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML is malformed or has unknown fields or bad values.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser message, with line and column.
        message: String,
    },
    /// The YAML parses but violates a suite rule.
    #[error("{path}: line {line}: {message}")]
    Rule {
        /// The file.
        path: String,
        /// 1-based line of the offending item (0 when unknown).
        line: usize,
        /// What is wrong, with expected and found values.
        message: String,
    },
    /// No suite file can be chosen (see [`Suite::discover`]).
    #[error("suite: {message}")]
    Choice {
        /// Which files were considered and what to pass.
        message: String,
    },
}

impl crate::exit::Classify for SuiteError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            SuiteError::Io { source, .. } => crate::exit::of_io(source),
            _ => crate::exit::Exit::Invalid,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_suite_has_its_built_in_targets_once_each() {
        // Which targets, in which order, is the table's (`bench::table`'s tests compare the
        // embedded suite with it); here: built-in targets, each key once.
        let s = Suite::embedded();
        let keys: std::collections::BTreeSet<_> =
            s.targets.iter().map(|t| t.key.as_str()).collect();
        assert_eq!(keys.len(), s.targets.len());
        assert!(!keys.is_empty());
        assert!(s.targets.iter().all(|t| t.kind == TargetKind::Builtin));
        assert_eq!(
            s.target("kv_standard").unwrap().optimization_goal,
            Goal::Memory
        );
        assert!(s.profile("minimal").is_some() && s.profile("cpu").is_some());
        assert_eq!(s.thresholds, Thresholds::default());
    }

    fn with(replace: &str, by: &str) -> Result<Suite, SuiteError> {
        assert!(
            EMBEDDED_TIER1_YAML.contains(replace),
            "fixture text {replace:?} missing"
        );
        Suite::parse(&EMBEDDED_TIER1_YAML.replacen(replace, by, 1), "t.yaml")
    }

    #[test]
    fn unknown_field_is_an_error_with_a_line() {
        let e = with("suite_name: tier1", "suite_name: tier1\nsuite_nmae: x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("suite_nmae") && e.contains("line"), "{e}");
    }

    #[test]
    fn duplicate_target_and_bad_goal_are_errors() {
        let e = with("key: kv_standard", "key: block_scaling")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("duplicate target key \"block_scaling\"") && e.contains("line"),
            "{e}"
        );
        let e = with("optimization_goal: memory", "optimization_goal: throughput")
            .unwrap_err()
            .to_string();
        assert!(e.contains("throughput"), "{e}");
    }

    /// The 1-based line of the first line containing `needle` after the first containing `after`.
    fn line_after(text: &str, after: &str, needle: &str) -> usize {
        let start = text.lines().position(|l| l.contains(after)).unwrap();
        start
            + 1
            + text
                .lines()
                .skip(start)
                .position(|l| l.contains(needle))
                .unwrap()
    }

    #[test]
    fn rule_errors_point_at_the_item_they_are_about() {
        let text = EMBEDDED_TIER1_YAML;
        let kv = text.find("key: kv_standard").unwrap();
        let tol = kv + text[kv..].find("tolerance: {").unwrap();
        let bad = format!(
            "{}tolerance: {{ rtol: -1.0, atol: 0.0 }}{}",
            &text[..tol],
            &text[tol + text[tol..].find('\n').unwrap()..]
        );
        let e = Suite::parse(&bad, "t.yaml").unwrap_err().to_string();
        let want = line_after(text, "key: kv_standard", "tolerance:");
        assert!(e.contains(&format!("line {want}:")), "{e}");
        assert!(e.contains("targets.3.tolerance"), "{e}");
    }

    #[test]
    fn a_zero_timeout_is_refused_at_its_line() {
        let e = with("timeout_s: 600", "timeout_s: 0")
            .unwrap_err()
            .to_string();
        let want = EMBEDDED_TIER1_YAML
            .lines()
            .position(|l| l.contains("timeout_s: 600"))
            .unwrap()
            + 1;
        assert!(
            e.contains(&format!("line {want}:"))
                && e.contains("timeout_s must be at least 1, found 0"),
            "{e}"
        );
    }

    #[test]
    fn parser_errors_name_the_file_and_line_in_our_words() {
        let e = with("version: 1", "version: 1\nversion: 2")
            .unwrap_err()
            .to_string();
        let first = EMBEDDED_TIER1_YAML
            .lines()
            .position(|l| l.starts_with("version: 1"))
            .unwrap()
            + 1;
        assert!(
            e.contains(&format!(
                "line {}: duplicate key \"version\" (first at line {first})",
                first + 1
            )),
            "{e}"
        );
        assert!(
            !e.contains("DuplicateKeyPolicy") && !e.contains("Options"),
            "{e}"
        );
        let e = with("    warmup: 5", "    warmup: five")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.yaml: line "), "{e}");
        assert!(
            !e.contains('\n') && !e.contains("<input>"),
            "one line, no snippet: {e}"
        );
        assert!(e.contains("expected a whole number"), "{e}");
    }

    #[test]
    fn a_single_benchmark_must_be_a_command() {
        let e = with("optimization_goal: memory", "optimization_goal: time")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("targets.3.optimization_goal")
                && e.contains("needs kind: command, found kind: builtin"),
            "{e}"
        );
        assert_eq!(Goal::from_stored(Some("time")), Goal::Time);
        assert_eq!(Goal::Time.as_str(), "time");
    }

    #[test]
    fn the_build_step_is_an_argv_that_leaves_the_digest_alone_when_absent() {
        let s = with(
            "suite_name: tier1",
            "suite_name: tier1\nbuild: [make, -C, bench]",
        )
        .unwrap();
        assert_eq!(s.build, ["make", "-C", "bench"]);
        assert_ne!(s.config_digest(), Suite::embedded().config_digest());
        assert!(Suite::embedded().build.is_empty());
        let line = EMBEDDED_TIER1_YAML
            .lines()
            .position(|l| l.starts_with("suite_name: tier1"))
            .unwrap()
            + 2;
        let e = with("suite_name: tier1", "suite_name: tier1\nbuild: ['']")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "line {line}: build: expected an argv whose first element names the program"
            )),
            "{e}"
        );
        let e = with("suite_name: tier1", "suite_name: tier1\nbuild: make")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("t.yaml: line {line}")), "{e}");
    }

    #[test]
    fn duplicate_mapping_key_is_an_error() {
        let e = with("version: 1", "version: 1\nversion: 2")
            .unwrap_err()
            .to_string();
        assert!(e.to_lowercase().contains("duplicate"), "{e}");
    }
}
