//! The harness result file `<run_dir>/results/benchmark_test_results.json`: raw samples, statistics,
//! verification, memory and input signature per variant, and the derived per-target verdict.
//! [`derive()`] turns a target's raw facts into its verdict and metrics; [`summarize`] turns the file
//! into `summary.json` target rows. Both are pure functions of the file (and the suite's labels), so
//! promotion can re-derive a summary and [`validate`] can refuse a file whose stored verdicts or
//! statistics do not match its own samples.

use crate::bench::estimate::{self, Estimator};
use crate::bench::stats::Stats;
use crate::history::model::{Environment, TargetSummary};
use crate::json::{ser_finite, ser_finite_opt};
use crate::suite::{Goal, Suite, Target, TargetKind, Tolerance};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the results file lives inside a run directory (evidence root `<run_id>/...`).
pub const RESULTS_REL_PATH: &str = "results/benchmark_test_results.json";
/// Format version of the results file (3: every round counts in the estimates, anchors in
/// passes, per-target settings, the clock; 2: rounds, batching, precision, the clean-round
/// estimates; version 1 files, one unbatched sample per iteration, still validate).
pub const RESULTS_SCHEMA_VERSION: u32 = 3;
/// The oldest results format still read.
pub const RESULTS_SCHEMA_MIN: u32 = 1;
/// Name of the baseline variant.
pub const BASELINE: &str = "baseline";

/// Status values written by the harness (`failed_*` counts as failed in aggregates).
pub mod status {
    /// Verified and, for a speed goal, at least `min_speedup`.
    pub const SUCCEEDED: &str = "succeeded";
    /// A variant's output or input signature did not match, or verification is missing.
    pub const FAILED_VERIFICATION: &str = "failed_verification";
    /// Speed goal with a best verified speedup below `min_speedup`.
    pub const FAILED_NO_SPEEDUP: &str = "failed_no_speedup";
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
    #[serde(serialize_with = "ser_finite")]
    pub min_speedup: f64,
    /// Warm-up executions per variant.
    pub warmup: u32,
    /// Minimum timed rounds per target (version 1: timed iterations per variant).
    pub iterations: u32,
    /// Maximum timed rounds per target.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// Shortest timed sample (ms) the batching aimed for.
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub min_sample_ms: Option<f64>,
    /// Precision asked for (± percent of each estimate at 95 % confidence).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub precision_pct: Option<f64>,
    /// Timing budget per target (s).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub budget_s: Option<f64>,
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
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub flops: Option<f64>,
    /// Bytes moved per execution (the minimum a perfect implementation must read and write).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub bytes: Option<f64>,
}

/// One input tensor of a signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorSpec {
    /// Name (`a`, `q`, `grads`...).
    pub name: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Element type (`f32`, `e2m1`, `e8m0`...).
    pub dtype: String,
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
    pub fn describe(&self) -> String {
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
    pub passed: bool,
    /// Largest `|out - ref|`.
    #[serde(serialize_with = "ser_finite")]
    pub max_abs_err: f64,
    /// Largest `|out - ref| / |ref|` over elements with `ref != 0`.
    #[serde(serialize_with = "ser_finite")]
    pub max_rel_err: f64,
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
    #[serde(serialize_with = "ser_finite")]
    pub max_abs_err: f64,
    /// Largest `|opt - base| / |base|` over elements with `base != 0`.
    #[serde(serialize_with = "ser_finite")]
    pub max_rel_err: f64,
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
    #[serde(serialize_with = "ser_finite")]
    pub precision_pct: f64,
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

/// A failure that ended a target before its pair was complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFailure {
    /// `failed_error` or `failed_timeout`.
    pub status: String,
    /// What happened.
    pub message: String,
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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_finite_opt"
    )]
    pub min_speedup: Option<f64>,
    /// Derived: status (see [`status`]).
    pub status: String,
    /// Derived: why it is not `succeeded`.
    #[serde(default)]
    pub message: Option<String>,
    /// Derived metrics.
    #[serde(default)]
    pub metrics: Metrics,
}

/// The metrics [`derive()`] computes from the variants.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Baseline median (ms).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub baseline_time_ms: Option<f64>,
    /// Baseline p75 (ms).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub baseline_p75_ms: Option<f64>,
    /// Best `baseline median / variant median` over verified variants.
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub best_speedup: Option<f64>,
    /// Name of the variant with the best speedup.
    #[serde(default)]
    pub best_optimization: Option<String>,
    /// Baseline peak (MB, 2^20 bytes).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub baseline_memory_mb: Option<f64>,
    /// Best `(base - opt) / base * 100` over verified variants (may be negative).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub best_memory_savings_pct: Option<f64>,
    /// Largest error against the baseline over optimized variants.
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub max_abs_err: Option<f64>,
    /// Largest relative error against the baseline over optimized variants.
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub max_rel_err: Option<f64>,
    /// Intervals, spread and precision of the best pair.
    #[serde(default)]
    pub measurement: Option<crate::history::Measurement>,
}

/// A results file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// A field has a bad value.
    #[error("{what}: {message}")]
    Invalid {
        /// File, target and field (`benchmark_test_results.json: targets[block_scaling].variants[0]`).
        what: String,
        /// Expected and found.
        message: String,
    },
    /// The file was made for another suite.
    #[error("results are for suite {found}, expected {expected}")]
    SuiteMismatch {
        /// `name v<version>` of the suite given.
        expected: String,
        /// `name v<version>` in the file.
        found: String,
    },
}

impl crate::exit::Classify for ResultError {
    fn exit(&self) -> crate::exit::Exit {
        crate::exit::Exit::Invalid
    }
}

fn invalid(what: impl Into<String>, message: impl Into<String>) -> ResultError {
    ResultError::Invalid {
        what: what.into(),
        message: message.into(),
    }
}

/// Bytes to MB (2^20).
pub fn bytes_to_mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The speed-gate message of the reference harness.
pub fn no_speedup_message(best: f64, min: f64) -> String {
    // The reference's two decimals, more where they would print the two values the same
    // (1.047 against 1.05 reads 1.047x below 1.050x, never 1.05x below 1.05x).
    let (best, min) = crate::text::fmt_apart(best, min, 2);
    format!("Best speedup {best}x below required {min}x threshold for speed-goal benchmark")
}

/// Status, message and metrics of a target, from its raw facts only. A variant counts as verified
/// when it has a passing verification record and the baseline's input signature; any optimized
/// variant that is unverified fails the whole target (fail closed).
/// A single benchmark (`optimization_goal: time`, one variant) succeeds when its variant ran with a
/// positive time; its time and interval come from [`crate::bench::single`].
pub fn derive(
    t: &TargetResult,
    min_speedup: f64,
    estimator: Estimator,
) -> (String, Option<String>, Metrics) {
    if t.optimization_goal == Goal::Time {
        return derive_single(t, estimator);
    }
    let min_speedup = t.min_speedup.unwrap_or(min_speedup);
    let mut m = Metrics::default();
    let base = t.variants.first().filter(|v| v.role == Role::Baseline);
    if let Some(b) = base {
        m.baseline_time_ms = Some(b.stats.median_ms);
        m.baseline_p75_ms = Some(b.stats.p75_ms);
        m.baseline_memory_mb = b.memory_peak_bytes.map(bytes_to_mb);
    }
    let mut problems = Vec::new();
    let mut best: Option<(&VariantResult, estimate::PairEstimate)> = None;
    if let Some(ver) = base.and_then(|b| b.verification.as_ref())
        && !ver.passed
    {
        problems.push(format!(
            "baseline output differs from the f64 reference{}",
            ver.reference
                .as_ref()
                .map(|r| format!(" (max abs err {:.3e})", r.max_abs_err))
                .unwrap_or_default()
        ));
    }
    let optimized: Vec<&VariantResult> = t
        .variants
        .iter()
        .filter(|v| v.role == Role::Optimized)
        .collect();
    for (k, v) in optimized.iter().enumerate() {
        let Some(b) = base else { break };
        // The variant's index in the file (the baseline is index 0).
        let index = t
            .variants
            .iter()
            .position(|x| std::ptr::eq(x, *v))
            .unwrap_or(k + 1);
        if v.input_signature != b.input_signature {
            problems.push(format!(
                "input signature of {} ({}) differs from baseline ({})",
                v.name,
                v.input_signature.describe(),
                b.input_signature.describe()
            ));
            continue;
        }
        let Some(ver) = &v.verification else {
            problems.push(format!("missing verification for {}", v.name));
            continue;
        };
        m.max_abs_err = Some(m.max_abs_err.unwrap_or(0.0).max(ver.max_abs_err));
        m.max_rel_err = Some(m.max_rel_err.unwrap_or(0.0).max(ver.max_rel_err));
        if !ver.passed {
            problems.push(format!(
                "{} output differs from baseline: {} of {} elements outside tolerance (max abs err {:.3e}, max rel err {:.3e}){}",
                v.name,
                ver.mismatches,
                ver.elements,
                ver.max_abs_err,
                ver.max_rel_err,
                ver.message.as_deref().map(|s| format!("; {s}")).unwrap_or_default()
            ));
            continue;
        }
        let pair = match t.sampling.as_ref().filter(|s| s.passes.len() > 1) {
            Some(s) => {
                let counts: Vec<(u32, u32)> = s
                    .passes
                    .iter()
                    .map(|p| (p.samples_of(0), p.samples_of(index)))
                    .collect();
                estimate::pooled(estimator, &b.samples_ms, &v.samples_ms, &counts)
            }
            None => estimator.pair(&b.samples_ms, &v.samples_ms),
        };
        let speedup = match (&t.sampling, &pair) {
            (Some(_), Some(e)) => Some(e.speedup),
            // Version 1 files (no rounds): the ratio of medians they were written with.
            (None, _) => (b.stats.median_ms > 0.0 && v.stats.median_ms > 0.0)
                .then(|| b.stats.median_ms / v.stats.median_ms),
            (Some(_), None) => None,
        };
        if let Some(s) = speedup
            && m.best_speedup.is_none_or(|best| s > best)
        {
            m.best_speedup = Some(s);
            m.best_optimization = Some(v.name.clone());
            best = t.sampling.as_ref().and(pair.clone()).map(|e| (*v, e));
        }
        if let (Some(bb), Some(vb)) = (b.memory_peak_bytes, v.memory_peak_bytes)
            && bb > 0
        {
            let pct = (bb as f64 - vb as f64) / bb as f64 * 100.0;
            if m.best_memory_savings_pct.is_none_or(|best| pct > best) {
                m.best_memory_savings_pct = Some(pct);
            }
        }
    }
    if let (Some(b), Some((v, e))) = (base, best) {
        // The baseline time of the clean rounds, so best_optimized_time_ms (baseline / speedup)
        // is the optimized time of the same rounds.
        m.baseline_time_ms = Some(e.baseline_ms);
        m.measurement = Some(measurement(t, b, v, &e, &m, estimator));
    }
    if let Some(f) = &t.failure {
        return (f.status.clone(), Some(f.message.clone()), m);
    }
    if base.is_none() {
        return (
            status::FAILED_ERROR.into(),
            Some("no baseline variant was measured".into()),
            m,
        );
    }
    if optimized.is_empty() {
        problems.push(
            "no optimized variant was measured (a benchmark without one is a single benchmark: optimization_goal time, docs/suite.md)"
                .into(),
        );
    }
    if !problems.is_empty() {
        return (
            status::FAILED_VERIFICATION.into(),
            Some(problems.join("; ")),
            m,
        );
    }
    match t.optimization_goal {
        Goal::Speed => match m.best_speedup {
            Some(s) if s >= min_speedup => (status::SUCCEEDED.into(), None, m),
            Some(s) => (
                status::FAILED_NO_SPEEDUP.into(),
                Some(no_speedup_message(s, min_speedup)),
                m,
            ),
            None => (
                status::FAILED_ERROR.into(),
                Some("no positive timing to compute a speedup from".into()),
                m,
            ),
        },
        Goal::Time => derive_single(t, estimator),
        Goal::Memory => {
            if m.baseline_memory_mb.is_some_and(|b| b > 0.0) && m.best_memory_savings_pct.is_some()
            {
                (status::SUCCEEDED.into(), None, m)
            } else {
                (
                    status::FAILED_ERROR.into(),
                    Some("memory goal but no baseline memory was measured (is the counting allocator installed?)".into()),
                    m,
                )
            }
        }
    }
}

/// Status, message and metrics of a single benchmark from its raw facts: it succeeds when its
/// one variant ran and has a positive time; a second variant (the target reports a pair under a
/// `time` goal) or a failed reference check of its output fail it.
fn derive_single(t: &TargetResult, estimator: Estimator) -> (String, Option<String>, Metrics) {
    let mut m = Metrics::default();
    let only = t.variants.first();
    if let Some(v) = only {
        m.baseline_time_ms = Some(v.stats.median_ms);
        m.baseline_p75_ms = Some(v.stats.p75_ms);
        m.baseline_memory_mb = v.memory_peak_bytes.map(bytes_to_mb);
        let passes: Option<Vec<u32>> = t
            .sampling
            .as_ref()
            .filter(|s| s.passes.len() > 1)
            .map(|s| s.passes.iter().map(|p| p.samples_of(0)).collect());
        if let Some(sampling) = t.sampling.as_ref()
            && let Some(e) =
                crate::bench::single::estimate(&v.samples_ms, estimator, passes.as_deref())
        {
            m.baseline_time_ms = Some(e.optimized_ms);
            m.measurement = Some(crate::bench::single::measurement(
                &v.samples_ms,
                v.repetitions,
                v.stats.cv,
                &e,
                crate::bench::single::Conditions {
                    precision_pct: sampling.precision_pct,
                    throttled: !sampling.throttled.is_empty(),
                    precision_required: sampling.precision_required,
                },
                estimator,
            ));
        }
    }
    let fail = |st: &str, msg: String, m: Metrics| (st.to_string(), Some(msg), m);
    if let Some(f) = &t.failure {
        return fail(&f.status, f.message.clone(), m);
    }
    let Some(v) = only else {
        return fail(status::FAILED_ERROR, "no variant was measured".into(), m);
    };
    if t.variants.len() > 1 {
        let names: Vec<&str> = t.variants.iter().map(|v| v.name.as_str()).collect();
        return fail(
            status::FAILED_ERROR,
            format!(
                "optimization_goal time (a single benchmark) measures exactly one variant, found {}: {}; give the target optimization_goal speed to compare them",
                names.len(),
                names.join(", ")
            ),
            m,
        );
    }
    if let Some(ver) = &v.verification
        && !ver.passed
    {
        return fail(
            status::FAILED_VERIFICATION,
            format!(
                "{} output differs from its reference: {} of {} elements outside tolerance (max abs err {:.3e}){}",
                v.name,
                ver.mismatches,
                ver.elements,
                ver.max_abs_err,
                ver.message
                    .as_deref()
                    .map(|s| format!("; {s}"))
                    .unwrap_or_default()
            ),
            m,
        );
    }
    if !m.baseline_time_ms.is_some_and(|x| x > 0.0) {
        return fail(
            status::FAILED_ERROR,
            "no positive timing was measured".into(),
            m,
        );
    }
    (status::SUCCEEDED.into(), None, m)
}

/// The measurement record of the best pair: intervals, spread, outliers and whether the
/// precision was reached (speed goal: both intervals within `precision_pct`; memory goal: the
/// memory was measured) without throttling.
fn measurement(
    t: &TargetResult,
    b: &VariantResult,
    v: &VariantResult,
    e: &estimate::PairEstimate,
    m: &Metrics,
    estimator: Estimator,
) -> crate::history::Measurement {
    let sampling = t.sampling.as_ref();
    let precision_pct = sampling.map_or(DEFAULT_PRECISION_PCT, |s| s.precision_pct);
    let throttled = sampling.is_some_and(|s| !s.throttled.is_empty());
    let reached = match t.optimization_goal {
        Goal::Speed | Goal::Time => e.within(precision_pct),
        Goal::Memory => {
            m.baseline_memory_mb.is_some_and(|x| x > 0.0) && m.best_memory_savings_pct.is_some()
        }
    };
    crate::history::Measurement {
        confidence: crate::history::measurement::CONFIDENCE,
        rounds: u32::try_from(e.pairs).unwrap_or(u32::MAX),
        clean_rounds: u32::try_from(e.clean).unwrap_or(u32::MAX),
        baseline_repetitions: b.repetitions,
        optimized_repetitions: v.repetitions,
        speedup_ci_low: e.speedup_ci.map(|c| c.0),
        speedup_ci_high: e.speedup_ci.map(|c| c.1),
        optimized_median_ms: e.optimized_ms,
        optimized_ci_low_ms: e.optimized_ci.map(|c| c.0),
        optimized_ci_high_ms: e.optimized_ci.map(|c| c.1),
        speedup_cv: e.ratio_cv,
        baseline_cv: b.stats.cv,
        optimized_cv: v.stats.cv,
        outliers: crate::stats::tukey_outliers(&b.samples_ms)
            + crate::stats::tukey_outliers(&v.samples_ms),
        precision_pct,
        precise: reached && !throttled,
        throttled,
        estimator: estimator.stated().map(Into::into),
        precision_required: estimator
            .stated()
            .map(|_| sampling.is_some_and(|s| s.precision_required)),
        passes: crate::bench::single::pass_values(e),
    }
}

/// Precision assumed for results that do not record one (version 1 files).
pub const DEFAULT_PRECISION_PCT: f64 = 1.0;

impl TargetResult {
    /// Fill `status`, `message` and `metrics` from the raw facts ([`derive()`]).
    pub fn finalize(&mut self, min_speedup: f64) {
        let (s, msg, m) = derive(
            self,
            min_speedup,
            Estimator::for_schema(RESULTS_SCHEMA_VERSION),
        );
        self.status = s;
        self.message = msg;
        self.metrics = m;
    }
}

/// Check the file: schema, names, finite samples, statistics equal to a recomputation from the
/// samples, and stored verdicts equal to [`derive()`]. A file that fails is not a usable result.
pub fn validate(r: &ResultsFile) -> Result<(), ResultError> {
    let file = "benchmark_test_results.json";
    if !(RESULTS_SCHEMA_MIN..=RESULTS_SCHEMA_VERSION).contains(&r.schema_version) {
        return Err(invalid(
            format!("{file}: schema_version"),
            format!(
                "expected {RESULTS_SCHEMA_MIN} to {RESULTS_SCHEMA_VERSION}, found {}",
                r.schema_version
            ),
        ));
    }
    if !crate::fsx::is_safe_run_id(&r.run_id) {
        return Err(invalid(
            format!("{file}: run_id"),
            format!("{:?} is not a safe run id", r.run_id),
        ));
    }
    if chrono::DateTime::parse_from_rfc3339(&r.timestamp).is_err() {
        return Err(invalid(
            format!("{file}: timestamp"),
            format!("expected RFC 3339, found {:?}", r.timestamp),
        ));
    }
    if !r.min_speedup.is_finite() || r.min_speedup < 0.0 {
        return Err(invalid(
            format!("{file}: min_speedup"),
            format!("expected a finite number >= 0, found {}", r.min_speedup),
        ));
    }
    let mut keys = std::collections::BTreeSet::new();
    for t in &r.targets {
        let what = format!("{file}: targets[{}]", t.key);
        if !keys.insert(t.key.as_str()) {
            return Err(invalid(what, "duplicate target key"));
        }
        for (k, p) in &t.artifacts {
            if !is_artifact_key(k) || crate::fsx::safe_relative_parts(p).is_none() {
                return Err(invalid(
                    format!("{what}.artifacts.{k}"),
                    format!(
                        "expected a key ending in _rep/_trace/_json and a safe relative path, found {p:?}"
                    ),
                ));
            }
        }
        for (i, v) in t.variants.iter().enumerate() {
            let vw = format!("{what}.variants[{i}] ({})", v.name);
            let expect_role = if i == 0 {
                Role::Baseline
            } else {
                Role::Optimized
            };
            if v.role != expect_role {
                return Err(invalid(
                    vw,
                    format!("expected role {expect_role:?}, found {:?}", v.role),
                ));
            }
            if v.repetitions == 0 {
                return Err(invalid(
                    format!("{vw}.repetitions"),
                    "expected at least 1 execution per sample, found 0",
                ));
            }
            match Stats::of(&v.samples_ms) {
                None => {
                    return Err(invalid(
                        format!("{vw}.samples_ms"),
                        "expected at least one finite, non-negative sample",
                    ));
                }
                Some(s) if s != v.stats => {
                    return Err(invalid(
                        format!("{vw}.stats"),
                        "stored statistics differ from those of samples_ms",
                    ));
                }
                Some(_) => {}
            }
        }
        let (s, msg, m) = derive(t, r.min_speedup, Estimator::for_schema(r.schema_version));
        if s != t.status || msg != t.message || m != t.metrics {
            let (field, stored, derived) = if s != t.status {
                ("status", format!("{:?}", t.status), format!("{s:?}"))
            } else if msg != t.message {
                ("message", format!("{:?}", t.message), format!("{msg:?}"))
            } else {
                let json = |x: &Metrics| serde_json::to_string(x).unwrap_or_default();
                ("metrics", json(&t.metrics), json(&m))
            };
            return Err(invalid(
                format!("{what}.{field}"),
                format!(
                    "the stored {field} differs from the one derived from its samples: stored {stored}, derived {derived}"
                ),
            ));
        }
    }
    Ok(())
}

fn is_artifact_key(k: &str) -> bool {
    k.ends_with("_rep") || k.ends_with("_trace") || k.ends_with("_json")
}

/// `summary.json` target rows, in suite order: the reference row rules (`best_optimized_time_ms =
/// baseline / best_speedup`, `best_optimized_memory_mb = baseline * (1 - savings / 100)`,
/// `artifacts` rewritten to `<run_id>/...`, `missing` rows for suite targets without a result).
/// The file is validated first. Aggregates are left to the caller.
pub fn summarize(r: &ResultsFile, suite: &Suite) -> Result<Vec<TargetSummary>, ResultError> {
    if r.suite_name != suite.suite_name || r.suite_version != suite.version {
        return Err(ResultError::SuiteMismatch {
            expected: format!("{} v{}", suite.suite_name, suite.version),
            found: format!("{} v{}", r.suite_name, r.suite_version),
        });
    }
    validate(r)?;
    let mut rows = Vec::with_capacity(suite.targets.len());
    for st in &suite.targets {
        let Some(t) = r.targets.iter().find(|t| t.target == st.target) else {
            rows.push(TargetSummary {
                key: st.key.clone(),
                target: st.target.clone(),
                category: st.category.clone(),
                rationale: st.rationale.clone(),
                status: "missing".into(),
                baseline_time_ms: None,
                best_speedup: None,
                best_optimized_time_ms: None,
                best_optimization: None,
                optimization_goal: None,
                baseline_memory_mb: None,
                best_memory_savings_pct: None,
                best_optimized_memory_mb: None,
                baseline_p75_ms: None,
                baseline_file: None,
                artifacts: BTreeMap::new(),
                verification_tolerance: None,
                measurement: None,
                extra: Default::default(),
            });
            continue;
        };
        let m = &t.metrics;
        let best_optimized_time_ms = match (m.baseline_time_ms, m.best_speedup) {
            (Some(b), Some(s)) if b > 0.0 && s > 0.0 => Some(b / s),
            _ => None,
        };
        let best_optimized_memory_mb = match (m.baseline_memory_mb, m.best_memory_savings_pct) {
            (Some(b), Some(p)) if b > 0.0 => Some(b * (1.0 - p / 100.0)),
            _ => None,
        };
        let mut extra = serde_json::Map::new();
        if let Some(msg) = &t.message {
            extra.insert("message".into(), serde_json::Value::String(msg.clone()));
        }
        rows.push(TargetSummary {
            key: st.key.clone(),
            target: st.target.clone(),
            category: st.category.clone(),
            rationale: st.rationale.clone(),
            status: t.status.clone(),
            baseline_time_ms: m.baseline_time_ms,
            best_speedup: m.best_speedup,
            best_optimized_time_ms,
            best_optimization: m.best_optimization.clone(),
            optimization_goal: Some(t.optimization_goal.as_str().into()),
            baseline_memory_mb: m.baseline_memory_mb,
            best_memory_savings_pct: m.best_memory_savings_pct,
            best_optimized_memory_mb,
            baseline_p75_ms: m.baseline_p75_ms,
            baseline_file: t
                .baseline_file
                .as_deref()
                .filter(|p| crate::fsx::safe_relative_parts(p).is_some())
                .map(str::to_string),
            artifacts: t
                .artifacts
                .iter()
                .map(|(k, p)| (k.clone(), format!("{}/{p}", r.run_id)))
                .collect(),
            verification_tolerance: Some(t.tolerance),
            measurement: m.measurement.clone(),
            extra,
        });
    }
    Ok(rows)
}

/// An empty target result for `t` (raw facts to be filled in).
pub fn empty_result(t: &Target, shapes: &BTreeMap<String, u64>) -> TargetResult {
    TargetResult {
        key: t.key.clone(),
        target: t.target.clone(),
        kind: t.kind,
        optimization_goal: t.optimization_goal,
        shapes: shapes.clone(),
        tolerance: t.tolerance,
        work: Default::default(),
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

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
