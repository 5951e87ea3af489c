//! Run profiles (`profiles:`): [`Profile`], the backend it is meant for, its defaults and the
//! fewest rounds any profile runs.

use super::settings::{self, AnchorPrecision, Clock, SideBySideSetting};
use serde::{Deserialize, Serialize};

/// Fewest timed rounds the harness runs whatever `iterations` says: a 95 % distribution-free
/// interval of a median needs six values.
pub(crate) const MIN_ROUNDS: u32 = 6;

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
