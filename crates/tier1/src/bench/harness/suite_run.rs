//! The suite run: the request checked, the measurement lock taken (and the suite pinned to one
//! CPU where the profile says so), every selected target measured in every pass (built-in targets
//! by [`super::builtin`], command targets by `crate::bench::command`), then each one's passes
//! merged and finalized into the results file.

use super::HarnessError;
use super::builtin::run_builtin;
use crate::bench::backend::Backend;
use crate::bench::limits;
use crate::bench::options::HarnessOptions;
use crate::bench::options::PassSeconds;
use crate::bench::options::Timing;
use crate::bench::result::{self, ResultsFile, TargetResult};
use crate::suite::{BackendKind, Suite, Target, TargetKind};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Serializes measurements inside one process (memory counters and cores are process-wide).
pub(crate) static MEASURE_LOCK: Mutex<()> = Mutex::new(());

/// Run the suite's targets on `backend` and return the finalized results.
pub fn run_suite(
    suite: &Suite,
    backend: Arc<dyn Backend>,
    opts: &HarnessOptions,
) -> Result<ResultsFile, HarnessError> {
    run_suite_timed(suite, backend, opts).map(|(results, _)| results)
}

/// [`run_suite`], with the wall-clock seconds each target took in each pass (suite order): the
/// request checked, the measurement lock taken (and the suite pinned to one CPU where the profile
/// says so), every selected target measured in every pass, then each one's passes merged and
/// finalized into the results file.
pub(crate) fn run_suite_timed(
    suite: &Suite,
    backend: Arc<dyn Backend>,
    opts: &HarnessOptions,
) -> Result<(ResultsFile, Vec<PassSeconds>), HarnessError> {
    let profile = checked_profile(suite, backend.as_ref(), opts)?;
    let _guard = MEASURE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Pin before the fingerprint: it records the cores the measurement used.
    let _pinned = profile.pin_cpu.then(pin).flatten();
    let mut base = Timing::of_profile(suite, profile, opts.timeout, opts.seed);
    if opts.pass_as_given {
        base = base.as_given(profile);
    }
    let environment = environment(backend.as_ref(), profile, opts);
    let selected: Vec<&Target> = suite
        .targets
        .iter()
        .filter(|t| opts.only.is_empty() || opts.only.contains(&t.key))
        .collect();
    let run = Run {
        suite,
        profile,
        backend: &backend,
        opts,
        base,
    };
    let (measured, seconds) = run.measure_passes(&selected)?;
    let targets = finalize_targets(suite, &selected, measured);
    Ok((results_file(&run, environment, targets), seconds))
}

/// The profile `opts` names, once the request is one the harness can run: a known profile whose
/// backend is `backend`, a safe run id, and only targets the suite has.
fn checked_profile<'s>(
    suite: &'s Suite,
    backend: &dyn Backend,
    opts: &HarnessOptions,
) -> Result<&'s crate::suite::Profile, HarnessError> {
    let profile = suite
        .profile(&opts.profile)
        .ok_or_else(|| HarnessError::UnknownProfile {
            profile: opts.profile.clone(),
            suite: suite.suite_name.clone(),
            known: suite
                .profiles
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let kind = match profile.backend {
        BackendKind::Cpu => "cpu",
        BackendKind::Cuda => "cuda",
    };
    if kind != backend.name() {
        return Err(HarnessError::BackendMismatch {
            profile: opts.profile.clone(),
            expected: kind.into(),
            found: backend.name().into(),
        });
    }
    if !crate::fsx::is_safe_run_id(&opts.run_id) {
        return Err(HarnessError::BadRunId(opts.run_id.clone()));
    }
    if let Some(k) = opts.only.iter().find(|k| suite.target(k).is_none()) {
        return Err(HarnessError::UnknownTarget(k.clone()));
    }
    Ok(profile)
}

/// The suite pinned to one CPU until the value drops (`None`, with a warning, when it cannot be).
fn pin() -> Option<crate::bench::affinity::Pinned> {
    match crate::bench::affinity::pin_to_one_cpu() {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "could not pin the suite to one CPU; measuring unpinned");
            None
        }
    }
}

/// The backend's fingerprint with the profile's name and (other than wall) clock.
fn environment(
    backend: &dyn Backend,
    profile: &crate::suite::Profile,
    opts: &HarnessOptions,
) -> crate::history::model::Environment {
    let mut environment = backend.fingerprint();
    environment.profile = Some(opts.profile.clone());
    if profile.clock != crate::bench::clock::Clock::Wall {
        environment.clock = Some(profile.clock.as_str().into());
    }
    environment
}

/// What every pass of one run shares.
struct Run<'a> {
    suite: &'a Suite,
    profile: &'a crate::suite::Profile,
    backend: &'a Arc<dyn Backend>,
    opts: &'a HarnessOptions,
    base: Timing,
}

impl Run<'_> {
    /// Every selected target's result in every pass (per target, in pass order) and the seconds
    /// each took; a cancellation or a run past the samples limit ends it.
    fn measure_passes(
        &self,
        selected: &[&Target],
    ) -> Result<(Vec<Vec<TargetResult>>, Vec<PassSeconds>), HarnessError> {
        let passes = self.opts.passes.max(1);
        let mut measured: Vec<Vec<TargetResult>> = vec![Vec::new(); selected.len()];
        let mut seconds: Vec<PassSeconds> = selected
            .iter()
            .map(|t| PassSeconds {
                key: t.key.clone(),
                passes: Vec::new(),
            })
            .collect();
        for pass in 0..passes {
            for (j, t) in selected.iter().enumerate() {
                let started = Instant::now();
                let r = self.measure(t, pass, passes);
                if let Some(c) = crate::process::requested() {
                    return Err(HarnessError::Cancelled(c, t.key.clone()));
                }
                measured[j].push(r);
                check_samples(&measured, t, pass, passes)?;
                seconds[j].passes.push(started.elapsed().as_secs_f64());
            }
        }
        Ok((measured, seconds))
    }

    /// Target `t` measured once, in pass `pass` (0-based) of `passes`.
    fn measure(&self, t: &Target, pass: u32, passes: u32) -> TargetResult {
        let opts = self.opts;
        let shapes = t.shapes.get(&opts.profile).cloned().unwrap_or_default();
        if passes > 1 {
            tracing::debug!(target = %t.key, profile = %opts.profile, pass = pass + 1, passes, "running");
        } else {
            tracing::debug!(target = %t.key, profile = %opts.profile, "running");
        }
        let timing = target_timing(self.suite, self.profile, t, self.base, pass);
        match t.kind {
            TargetKind::Builtin => run_builtin(t, &shapes, self.backend, opts, timing),
            TargetKind::Command => crate::bench::command::run(t, &shapes, opts, timing),
        }
    }
}

/// Refuses a run whose results so far (after target `t` in pass `pass`) hold more samples than
/// a results file may.
fn check_samples(
    measured: &[Vec<TargetResult>],
    t: &Target,
    pass: u32,
    passes: u32,
) -> Result<(), HarnessError> {
    let samples: usize = measured.iter().flatten().map(samples_of).sum();
    if samples <= limits::MAX_RUN_SAMPLES {
        return Ok(());
    }
    let what = if passes > 1 {
        format!("the run (after target {}, pass {})", t.key, pass + 1)
    } else {
        format!("the run (after target {})", t.key)
    };
    Err(HarnessError::TooLarge(limits::too_many_samples(
        &what, samples,
    )))
}

/// Each selected target's passes merged into one result, with its own `min_speedup` where it
/// differs from the suite's, finalized (and failed where a value cannot be recorded).
fn finalize_targets(
    suite: &Suite,
    selected: &[&Target],
    measured: Vec<Vec<TargetResult>>,
) -> Vec<TargetResult> {
    let mut targets = Vec::with_capacity(selected.len());
    for (t, rs) in selected.iter().zip(measured) {
        let mut rs = rs.into_iter();
        let Some(first) = rs.next() else { continue };
        let mut r = crate::bench::passes::merge(first, rs.collect());
        let min_speedup = suite.thresholds_for(&t.target).min_speedup;
        if min_speedup != suite.thresholds.min_speedup {
            r.min_speedup = Some(min_speedup.into());
        }
        r.finalize(suite.thresholds.min_speedup);
        if crate::bench::finite::fail_unrecordable(&mut r) {
            r.finalize(suite.thresholds.min_speedup);
        }
        tracing::debug!(target = %t.key, status = %r.status, speedup = ?r.metrics.best_speedup, "done");
        targets.push(r);
    }
    targets
}

/// The results file of `run` over `targets`.
fn results_file(
    run: &Run<'_>,
    environment: crate::history::model::Environment,
    targets: Vec<TargetResult>,
) -> ResultsFile {
    let (suite, opts, timing) = (run.suite, run.opts, run.base);
    ResultsFile {
        schema_version: result::RESULTS_SCHEMA_VERSION,
        run_id: opts.run_id.clone(),
        timestamp: opts.timestamp.clone(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: opts.profile.clone(),
        backend: run.backend.name().into(),
        environment,
        seed: opts.seed,
        min_speedup: suite.thresholds.min_speedup.into(),
        warmup: timing.warmup,
        iterations: timing.iterations,
        max_rounds: Some(timing.max_rounds),
        min_sample_ms: Some(timing.min_sample_ms.into()),
        precision_pct: Some(timing.precision_pct.into()),
        budget_s: Some(timing.budget.as_secs_f64().into()),
        targets,
    }
}

/// Samples a target's result holds (every variant).
fn samples_of(r: &TargetResult) -> usize {
    r.variants.iter().map(|v| v.samples_ms.len()).sum()
}

/// One target's timing in one pass: its own settings over the profile's, and an order seed of
/// its own (pass 1 keeps the seed a one-pass run uses).
fn target_timing(
    suite: &Suite,
    profile: &crate::suite::Profile,
    t: &Target,
    base: Timing,
    pass: u32,
) -> Timing {
    let s = suite.settings_for(profile, t);
    Timing {
        min_sample_ms: s.min_sample_ms,
        precision_pct: s.precision_pct,
        budget: crate::bench::deadline::seconds(s.budget_s),
        seed: order_seed(
            base.seed ^ u64::from(pass).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            &t.key,
        ),
        ..base
    }
}

/// The round-order seed of a target: the run's seed mixed with the key (FNV-1a), so targets do
/// not share one order sequence and a rerun with the same seed repeats it.
pub(crate) fn order_seed(seed: u64, key: &str) -> u64 {
    key.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::backend::{BackendError, Shapes, Workload};

    /// The CPU backend, reporting a GPU that throttles for the first `throttled_reads` state reads.
    struct Throttling {
        throttled_reads: u32,
        reads: std::sync::atomic::AtomicU32,
    }

    impl Backend for Throttling {
        fn name(&self) -> &str {
            "cpu"
        }
        fn fingerprint(&self) -> crate::history::model::Environment {
            crate::bench::CpuBackend.fingerprint()
        }
        fn prepare(&self, key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
            crate::bench::CpuBackend.prepare(key, shapes, seed)
        }
        fn device_state(&self) -> Option<crate::bench::machine::GpuState> {
            let n = self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some(crate::bench::machine::GpuState {
                throttle_reasons: if n < self.throttled_reads {
                    vec!["sw_power_cap".into(), "gpu_idle".into()]
                } else {
                    vec!["gpu_idle".into()]
                },
                ..Default::default()
            })
        }
    }

    fn throttled_run(throttled_reads: u32) -> TargetResult {
        let backend = Arc::new(Throttling {
            throttled_reads,
            reads: std::sync::atomic::AtomicU32::new(0),
        });
        let mut opts = HarnessOptions::new("smoke", "throttle");
        opts.only = vec!["gradient_fusion".into()];
        let mut r = run_suite(&Suite::embedded(), backend, &opts).expect("runs");
        r.targets.remove(0)
    }

    #[test]
    fn a_throttled_target_is_measured_again_then_recorded_as_throttled() {
        // Throttled before the first measurement only: measured again, and the second counts.
        let t = throttled_run(1);
        let s = t.sampling.as_ref().expect("sampled");
        assert!(s.remeasured && s.throttled.is_empty(), "{s:?}");
        assert_eq!(s.machine.len(), 2);
        let m = t.metrics.measurement.as_ref().expect("measured");
        assert!(!m.throttled);
        // Throttled throughout: measured twice, then recorded as throttled, never precise.
        let t = throttled_run(u32::MAX);
        let s = t.sampling.as_ref().expect("sampled");
        assert!(s.remeasured, "{s:?}");
        assert_eq!(s.throttled, ["sw_power_cap"]);
        assert_eq!(s.machine[1].before.throttling(), ["sw_power_cap"]);
        let m = t.metrics.measurement.as_ref().expect("measured");
        assert!(m.throttled && !m.precise, "{m:?}");
        assert_eq!(
            m.imprecision(t.metrics.best_speedup).as_deref(),
            Some("was taken while the device throttled")
        );
        // Not throttled at all: one measurement.
        let t = throttled_run(0);
        let s = t.sampling.as_ref().expect("sampled");
        assert!(!s.remeasured && s.throttled.is_empty() && s.machine.len() == 1);
    }

    #[test]
    fn order_seeds_differ_by_key_and_repeat_by_seed() {
        assert_ne!(order_seed(42, "a"), order_seed(42, "b"));
        assert_eq!(order_seed(42, "a"), order_seed(42, "a"));
        assert_ne!(order_seed(42, "a"), order_seed(43, "a"));
    }

    #[test]
    fn the_minimal_profile_refuses_the_cpu_backend() {
        let suite = Suite::embedded();
        let err = run_suite(
            &suite,
            Arc::new(crate::bench::CpuBackend),
            &HarnessOptions::new("minimal", "r1"),
        )
        .expect_err("minimal is a cuda profile");
        assert!(matches!(err, HarnessError::BackendMismatch { .. }));
        assert_eq!(
            err.to_string(),
            "profile \"minimal\" is for the cuda backend, found backend cpu"
        );
        assert_eq!(
            crate::exit::Classify::exit(&err),
            crate::exit::Exit::Invalid
        );
    }
}
