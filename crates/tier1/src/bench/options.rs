//! What a suite run is given ([`HarnessOptions`], with its test [`Hook`]) and what each target is
//! measured with ([`Timing`], from the profile): shared by the harness and the command targets.

use crate::bench::backend::Workload;
use crate::bench::sampling::Plan;
use std::sync::Arc;
use std::time::Duration;

/// Test hook: called with the target key and its prepared workload before verification, so a test
/// can replace, wrap or add variants.
pub type Hook = Arc<dyn Fn(&str, &mut Workload) + Send + Sync>;

/// What to run and how.
#[derive(Clone)]
pub struct HarnessOptions {
    /// Profile name (shapes and timing knobs).
    pub(crate) profile: String,
    /// Run id recorded in the results.
    pub(crate) run_id: String,
    /// RFC 3339 start time recorded in the results.
    pub(crate) timestamp: String,
    /// Input seed (verification uses 42).
    pub(crate) seed: u64,
    /// Only these target keys (all when empty), in suite order.
    pub only: Vec<String>,
    /// Override of the profile's per-target timeout.
    pub timeout: Option<Duration>,
    /// Test hook, see [`Hook`].
    pub hook: Option<Hook>,
    /// Passes every target is measured in (1 for a night; the profile's `anchor_passes` for a
    /// run that may become the anchor): pooled per target ([`crate::bench::passes`]).
    pub(crate) passes: u32,
    /// The profile's `warmup` and `iterations` are one short pass sized by its caller
    /// (`tier1-run --emit-target`), taken as given: not raised to a measurement's minimums and
    /// never extended adaptively.
    pub(crate) pass_as_given: bool,
}

impl std::fmt::Debug for HarnessOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessOptions")
            .field("profile", &self.profile)
            .field("run_id", &self.run_id)
            .field("seed", &self.seed)
            .field("only", &self.only)
            .field("timeout", &self.timeout)
            .field("hook", &self.hook.is_some())
            .field("passes", &self.passes)
            .field("pass_as_given", &self.pass_as_given)
            .finish()
    }
}

impl HarnessOptions {
    /// Options for `profile` with run id `run_id`, timestamp now, seed 42, every target.
    pub fn new(profile: &str, run_id: &str) -> HarnessOptions {
        HarnessOptions {
            profile: profile.into(),
            run_id: run_id.into(),
            timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            seed: crate::bench::rng::SEED,
            only: Vec::new(),
            timeout: None,
            hook: None,
            passes: 1,
            pass_as_given: false,
        }
    }
}

/// The wall-clock seconds one target took in each pass of a suite run (its first measurement,
/// then an anchor's further passes): where a night's time goes (`crate::run::timings`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PassSeconds {
    /// Target key.
    pub(crate) key: String,
    /// Seconds per pass, in order.
    pub(crate) passes: Vec<f64>,
}

/// Sampling knobs and limits of one target (from the profile).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Warm-up executions per variant.
    pub(crate) warmup: u32,
    /// Minimum timed rounds.
    pub(crate) iterations: u32,
    /// Maximum timed rounds.
    pub(crate) max_rounds: u32,
    /// Shortest sample (ms).
    pub(crate) min_sample_ms: f64,
    /// Precision asked for (± percent at 95 % confidence).
    pub(crate) precision_pct: f64,
    /// Timing budget (soft: no round starts after it once the minimum is reached).
    pub(crate) budget: Duration,
    /// Wall-clock limit of the whole target (hard: the target fails).
    pub(crate) timeout: Duration,
    /// Seed of the round order.
    pub(crate) seed: u64,
    /// The clock CPU samples are read from.
    pub(crate) clock: crate::bench::clock::Clock,
    /// The profile requires an anchor to reach the precision (recorded on the result).
    pub(crate) precision_required: bool,
}

impl Timing {
    /// The timing of `profile`'s targets (of `suite`), before any target's own settings: at
    /// least 5 warm-up executions and [`crate::suite::MIN_ROUNDS`] rounds, the profile's
    /// precision or the one derived from the suite's thresholds, `timeout` instead of the
    /// profile's when given.
    pub(crate) fn of_profile(
        suite: &crate::suite::Suite,
        profile: &crate::suite::Profile,
        timeout: Option<Duration>,
        seed: u64,
    ) -> Timing {
        let iterations = profile.iterations.max(crate::suite::MIN_ROUNDS);
        Timing {
            warmup: profile.warmup.max(5),
            iterations,
            max_rounds: profile.max_rounds.max(iterations),
            min_sample_ms: profile.min_sample_ms,
            precision_pct: suite.precision_for(profile, None).0,
            budget: crate::bench::deadline::seconds(profile.budget_s),
            timeout: timeout.unwrap_or(Duration::from_secs(profile.timeout_s)),
            seed,
            clock: profile.clock,
            precision_required: profile.anchor_precision == crate::suite::AnchorPrecision::Required,
        }
    }

    /// The one short pass of `profile` its caller asked for: its `warmup` and `iterations` (at
    /// least 1) exactly, no adaptive rounds after them.
    pub(crate) fn as_given(self, profile: &crate::suite::Profile) -> Timing {
        let iterations = profile.iterations.max(1);
        Timing {
            warmup: profile.warmup,
            iterations,
            max_rounds: iterations,
            ..self
        }
    }

    /// The sampling plan of one measurement.
    pub(crate) fn plan(&self) -> Plan {
        Plan {
            warmup: self.warmup,
            min_rounds: self.iterations,
            max_rounds: self.max_rounds,
            min_sample_ms: self.min_sample_ms,
            budget: self.budget,
            seed: self.seed,
            clock: self.clock,
        }
    }
}
