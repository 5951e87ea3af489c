//! The results file's format: the file, its targets and variants with their raw facts, the
//! derived verdict fields, and the constants of the format.

use crate::bench::stats::Stats;
use crate::history::model::Environment;
use crate::json::Finite;
use crate::suite::{Goal, Target, TargetKind, Tolerance};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the results file lives inside a run directory (evidence root `<run_id>/...`).
pub(crate) const RESULTS_REL_PATH: &str = "results/benchmark_test_results.json";
/// Format version of the results file (3: every round counts in the estimates, anchors in
/// passes, per-target settings, the clock; 2: rounds, batching, precision, the clean-round
/// estimates; version 1 files, one unbatched sample per iteration, still validate).
pub const RESULTS_SCHEMA_VERSION: u32 = 3;
/// The oldest results format still read.
pub(crate) const RESULTS_SCHEMA_MIN: u32 = 1;
/// Name of the baseline variant.
pub(crate) const BASELINE: &str = "baseline";

/// Status values written by the harness (`failed_*` counts as failed in aggregates).
pub mod status {
    /// Verified and, for a speed goal, at least `min_speedup`.
    pub const SUCCEEDED: &str = "succeeded";
    /// A variant's output or input signature did not match, or verification is missing.
    pub const FAILED_VERIFICATION: &str = "failed_verification";
    /// Speed goal with a best verified speedup below `min_speedup`.
    pub(crate) const FAILED_NO_SPEEDUP: &str = "failed_no_speedup";
    /// The target panicked, errored or returned a malformed result.
    pub const FAILED_ERROR: &str = "failed_error";
    /// The target ran past the profile's `timeout_s`.
    pub const FAILED_TIMEOUT: &str = "failed_timeout";
}

/// The whole results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsFile {
    /// [`RESULTS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The run id (safe run-id pattern).
    pub run_id: String,
    /// RFC 3339 UTC time the run started (becomes `summary.generated_at`).
    pub timestamp: String,
    /// Suite identity.
    pub suite_name: String,
    /// Suite contract version.
    pub suite_version: u32,
    /// Profile whose shapes and timing knobs were used.
    pub profile: String,
    /// Backend name (`cpu`, `cuda`).
    pub backend: String,
    /// Device fingerprint of the backend.
    pub environment: Environment,
    /// Input seed of every target.
    pub seed: u64,
    /// The speed gate applied (`thresholds.min_speedup` of the suite at run time).
    pub min_speedup: Finite,
    /// Warm-up executions per variant.
    pub warmup: u32,
    /// Minimum timed rounds per target (version 1: timed iterations per variant).
    pub iterations: u32,
    /// Maximum timed rounds per target.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// Shortest timed sample (ms) the batching aimed for.
    #[serde(default)]
    pub min_sample_ms: Option<Finite>,
    /// Precision asked for (± percent of each estimate at 95 % confidence).
    #[serde(default)]
    pub precision_pct: Option<Finite>,
    /// Timing budget per target (s).
    #[serde(default)]
    pub budget_s: Option<Finite>,
    /// One entry per executed target, in suite order.
    pub targets: Vec<TargetResult>,
}

/// Which side of the pair a variant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The reference implementation every other variant is compared with.
    Baseline,
    /// A candidate.
    Optimized,
}

/// Work done by one execution of a variant (for GFLOP/s and GB/s).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Work {
    /// Floating-point operations per execution.
    #[serde(default)]
    pub flops: Option<Finite>,
    /// Bytes moved per execution (the minimum a perfect implementation must read and write).
    #[serde(default)]
    pub bytes: Option<Finite>,
}

/// Which hardware peak a built-in target's achieved rate is a fraction of (its *peak class*): the
/// rate is FLOP/s for the compute classes and bytes/s for `memory`. Set from the target's line in
/// the table of built-in targets (`bench/table.rs`); command targets have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeakClass {
    /// FP32 (non-tensor) compute, FLOP/s.
    Fp32,
    /// BF16 tensor-core compute (dense), FLOP/s.
    Bf16Tensor,
    /// Memory bandwidth, bytes/s.
    Memory,
}

/// One input tensor of a signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorSpec {
    /// Name (`a`, `q`, `grads`...).
    pub(crate) name: String,
    /// Shape.
    pub(crate) shape: Vec<u64>,
    /// Element type (`f32`, `e2m1`, `e8m0`...).
    pub(crate) dtype: String,
}

/// What a variant consumes: tensors (shapes, dtypes) and the seed. Must be identical across a pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSignature {
    /// Input seed.
    pub seed: u64,
    /// Inputs in a fixed order.
    pub inputs: Vec<TensorSpec>,
}

impl InputSignature {
    /// One line for messages: `seed=42 a:e2m1[64,128] ...`.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("seed={}", self.seed);
        for t in &self.inputs {
            let dims: Vec<String> = t.shape.iter().map(u64::to_string).collect();
            s.push_str(&format!(" {}:{}[{}]", t.name, t.dtype, dims.join(",")));
        }
        s
    }
}

/// An output comparison against an f64 reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceCheck {
    /// Within tolerance everywhere.
    pub(crate) passed: bool,
    /// Largest `|out - ref|`.
    pub(crate) max_abs_err: Finite,
    /// Largest `|out - ref| / |ref|` over elements with `ref != 0`.
    pub(crate) max_rel_err: Finite,
}

/// Verification of one optimized variant (run outside the timed region).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantVerification {
    /// Output within tolerance of the baseline (and of the f64 reference when there is one).
    pub passed: bool,
    /// Elements compared.
    pub elements: u64,
    /// Elements outside `atol + rtol * |baseline|` (or not finite).
    pub mismatches: u64,
    /// Largest `|opt - base|`.
    pub max_abs_err: Finite,
    /// Largest `|opt - base| / |base|` over elements with `base != 0`.
    pub max_rel_err: Finite,
    /// Comparison with the f64 reference, where computing one is cheap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceCheck>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One variant's measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantResult {
    /// `baseline` or `optimized_<technique>`.
    pub name: String,
    /// Baseline or optimized.
    pub role: Role,
    /// What it consumed.
    pub input_signature: InputSignature,
    /// Raw timed samples in milliseconds per execution, one per round, in round order (sample
    /// `i` of every variant of a target was taken in round `i`).
    pub samples_ms: Vec<f64>,
    /// Executions batched into each sample (the sample is the batch time divided by this).
    #[serde(default = "one")]
    pub repetitions: u32,
    /// Statistics of `samples_ms`.
    pub stats: Stats,
    /// Peak heap bytes a single timed execution allocated above its starting level (max over
    /// executions); `None` when the counting allocator is not installed.
    #[serde(default)]
    pub memory_peak_bytes: Option<u64>,
    /// Verification record (optimized variants; `None` for the baseline).
    #[serde(default)]
    pub verification: Option<VariantVerification>,
}

fn one() -> u32 {
    1
}

/// How a target was sampled (raw facts; the precision verdict is derived from the samples).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Timed rounds completed.
    pub rounds: u32,
    /// Processes the samples came from (command targets run one per invocation; built-in: 1).
    pub processes: u32,
    /// Precision asked for (± percent at 95 % confidence).
    pub precision_pct: Finite,
    /// Seed of the shuffled round order.
    pub order_seed: u64,
    /// The time budget ended sampling before the precision was reached.
    pub budget_exhausted: bool,
    /// The target was measured a second time because the device throttled during the first.
    #[serde(default)]
    pub remeasured: bool,
    /// Throttle reasons still seen during the kept measurement (empty: not throttled).
    #[serde(default)]
    pub throttled: Vec<String>,
    /// Machine state before and after each measurement (the last is the kept one).
    #[serde(default)]
    pub machine: Vec<crate::bench::machine::MachineWindow>,
    /// The clock CPU samples were read from (absent: wall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::bench::clock::Clock>,
    /// The profile requires an anchor to reach `precision_pct` (`anchor_precision: required`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub precision_required: bool,
    /// The passes of an anchor's measurement, in order (empty: one pass); the variants'
    /// samples are the passes' samples one after the other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<crate::bench::pass_record::PassRecord>,
}

impl Sampling {
    /// How busy the machine was during the kept measurement (its last window), when it was
    /// overloaded (`crate::history::overload::Overload::overloaded`); `None` otherwise or when the
    /// windows do not record the cores (older results).
    pub(crate) fn overloaded(&self) -> Option<crate::history::overload::Overload> {
        self.machine
            .last()
            .and_then(crate::bench::machine::MachineWindow::overload)
            .filter(crate::history::overload::Overload::overloaded)
    }
}

/// A failure that ended a target before its pair was complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFailure {
    /// `failed_error` or `failed_timeout`.
    pub(crate) status: String,
    /// What happened.
    pub(crate) message: String,
}

/// One target's raw facts and derived verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetResult {
    /// Suite key.
    pub key: String,
    /// Reference target string.
    pub target: String,
    /// Built-in or command.
    pub kind: TargetKind,
    /// Speed or memory.
    pub optimization_goal: Goal,
    /// Shapes used (from the profile).
    pub shapes: BTreeMap<String, u64>,
    /// Verification tolerance applied.
    pub tolerance: Tolerance,
    /// Work per execution.
    #[serde(default)]
    pub work: Work,
    /// The hardware peak the achieved rate is measured against (built-in targets; absent for
    /// command targets and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_class: Option<PeakClass>,
    /// Repo-relative source of the baseline implementation.
    #[serde(default)]
    pub baseline_file: Option<String>,
    /// Evidence files of this target, relative to the run directory; keys end in `_rep`, `_trace`
    /// or `_json`.
    #[serde(default)]
    pub artifacts: BTreeMap<String, String>,
    /// Set when the target panicked, errored or timed out.
    #[serde(default)]
    pub failure: Option<TargetFailure>,
    /// Completed variants, baseline first.
    pub variants: Vec<VariantResult>,
    /// How the samples were taken (absent in version 1 files).
    #[serde(default)]
    pub sampling: Option<Sampling>,
    /// The target's own `min_speedup` when it differs from the file's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_speedup: Option<Finite>,
    /// Derived: status (see [`status`]).
    pub status: String,
    /// Derived: why it is not `succeeded`.
    #[serde(default)]
    pub message: Option<String>,
    /// Derived metrics.
    #[serde(default)]
    pub metrics: Metrics,
}

/// The metrics [`derive()`](super::derived::derive) computes from the variants.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Baseline median (ms).
    #[serde(default)]
    pub baseline_time_ms: Option<Finite>,
    /// Baseline p75 (ms).
    #[serde(default)]
    pub(crate) baseline_p75_ms: Option<Finite>,
    /// Best `baseline median / variant median` over verified variants.
    #[serde(default)]
    pub best_speedup: Option<Finite>,
    /// Name of the variant with the best speedup.
    #[serde(default)]
    pub best_optimization: Option<String>,
    /// Baseline peak (MB, 2^20 bytes).
    #[serde(default)]
    pub(crate) baseline_memory_mb: Option<Finite>,
    /// Best `(base - opt) / base * 100` over verified variants (may be negative).
    #[serde(default)]
    pub best_memory_savings_pct: Option<Finite>,
    /// Largest error against the baseline over optimized variants.
    #[serde(default)]
    pub(crate) max_abs_err: Option<Finite>,
    /// Largest relative error against the baseline over optimized variants.
    #[serde(default)]
    pub(crate) max_rel_err: Option<Finite>,
    /// Intervals, spread and precision of the best pair.
    #[serde(default)]
    pub measurement: Option<crate::history::Measurement>,
}

/// Precision assumed for results that do not record one (version 1 files).
pub(crate) const DEFAULT_PRECISION_PCT: f64 = 1.0;

/// An empty target result for `t` (raw facts to be filled in).
pub(crate) fn empty_result(t: &Target, shapes: &BTreeMap<String, u64>) -> TargetResult {
    TargetResult {
        key: t.key.clone(),
        target: t.target.clone(),
        kind: t.kind,
        optimization_goal: t.optimization_goal,
        shapes: shapes.clone(),
        tolerance: t.tolerance,
        work: Default::default(),
        peak_class: None,
        baseline_file: None,
        artifacts: Default::default(),
        failure: None,
        variants: Vec::new(),
        sampling: None,
        min_speedup: None,
        status: String::new(),
        message: None,
        metrics: Default::default(),
    }
}
