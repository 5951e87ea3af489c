//! One suite target (`targets:`): [`Target`], what it optimizes for ([`Goal`]), how it runs
//! ([`TargetKind`]) and its verification [`Tolerance`].

use super::{OutputFormat, ThresholdOverrides, VariantMap};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// For `kind: command`: how its output is read (tier1's document or a tool's,
    /// [`format`](super::format)).
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
