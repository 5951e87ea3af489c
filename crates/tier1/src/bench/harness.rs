//! The harness: per target, verification first (outside timing), then baseline timing, then each
//! optimized variant (warm-up `max(5, profile.warmup)`, `profile.iterations` timed samples, peak
//! memory per run); a panic or a run past `profile.timeout_s` fails that target only.

use crate::bench::alloc;
use crate::bench::backend::{Backend, BackendError, Shapes, Workload};
use crate::bench::result::{
    self, ResultsFile, Role, TargetFailure, TargetResult, VariantResult, VariantVerification,
    status,
};
use crate::bench::stats::Stats;
use crate::bench::verify;
use crate::suite::{BackendKind, Suite, Target, TargetKind};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Serializes measurements inside one process (memory counters and cores are process-wide).
pub static MEASURE_LOCK: Mutex<()> = Mutex::new(());

/// Test hook: called with the target key and its prepared workload before verification, so a test
/// can replace, wrap or add variants.
pub type Hook = Arc<dyn Fn(&str, &mut Workload) + Send + Sync>;

/// What to run and how.
#[derive(Clone)]
pub struct HarnessOptions {
    /// Profile name (shapes and timing knobs).
    pub profile: String,
    /// Run id recorded in the results.
    pub run_id: String,
    /// RFC 3339 start time recorded in the results.
    pub timestamp: String,
    /// Input seed (verification uses 42).
    pub seed: u64,
    /// Only these target keys (all when empty), in suite order.
    pub only: Vec<String>,
    /// Override of the profile's per-target timeout.
    pub timeout: Option<Duration>,
    /// Test hook, see [`Hook`].
    pub hook: Option<Hook>,
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
        }
    }
}

/// A suite run that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The profile is not in the suite.
    #[error("profile {profile:?} is not in suite {suite} (profiles: {known})")]
    UnknownProfile {
        /// Asked for.
        profile: String,
        /// Suite name.
        suite: String,
        /// Known profiles.
        known: String,
    },
    /// The profile is for another backend.
    #[error("profile {profile:?} is for the {expected} backend, found backend {found}")]
    BackendMismatch {
        /// Profile name.
        profile: String,
        /// The profile's backend.
        expected: String,
        /// The backend given.
        found: String,
    },
    /// `only` names a key that is not in the suite.
    #[error("target {0:?} is not in the suite")]
    UnknownTarget(String),
    /// The run id is not safe.
    #[error("run id {0:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    BadRunId(String),
    /// The results file could not be written.
    #[error("{path}: {message}")]
    Write {
        /// File.
        path: String,
        /// Cause.
        message: String,
    },
    /// The destination already holds a results file.
    #[error("{0}: already exists; refusing to overwrite")]
    Exists(String),
}

impl crate::exit::Classify for HarnessError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            HarnessError::Write { .. } => crate::exit::Exit::Io,
            HarnessError::Exists(_) => crate::exit::Exit::Conflict,
            _ => crate::exit::Exit::Invalid,
        }
    }
}

/// Run the suite's targets on `backend` and return the finalized results.
pub fn run_suite(
    suite: &Suite,
    backend: Arc<dyn Backend>,
    opts: &HarnessOptions,
) -> Result<ResultsFile, HarnessError> {
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
    let _guard = MEASURE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let timing = Timing {
        warmup: profile.warmup.max(5),
        iterations: profile.iterations.max(1),
        timeout: opts
            .timeout
            .unwrap_or(Duration::from_secs(profile.timeout_s)),
    };
    let mut environment = backend.fingerprint();
    environment.profile = Some(opts.profile.clone());
    let mut targets = Vec::new();
    for t in &suite.targets {
        if !opts.only.is_empty() && !opts.only.contains(&t.key) {
            continue;
        }
        let shapes = t.shapes.get(&opts.profile).cloned().unwrap_or_default();
        tracing::info!(target = %t.key, profile = %opts.profile, "running");
        let mut r = match t.kind {
            TargetKind::Builtin => run_builtin(t, &shapes, &backend, opts, timing),
            TargetKind::Command => crate::bench::command::run(t, &shapes, opts, timing),
        };
        r.finalize(suite.thresholds.min_speedup);
        tracing::info!(target = %t.key, status = %r.status, speedup = ?r.metrics.best_speedup, "done");
        targets.push(r);
    }
    Ok(ResultsFile {
        schema_version: result::RESULTS_SCHEMA_VERSION,
        run_id: opts.run_id.clone(),
        timestamp: opts.timestamp.clone(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: opts.profile.clone(),
        backend: backend.name().into(),
        environment,
        seed: opts.seed,
        min_speedup: suite.thresholds.min_speedup,
        warmup: timing.warmup,
        iterations: timing.iterations,
        targets,
    })
}

/// Write `results` to `<run_dir>/results/benchmark_test_results.json`, refusing to overwrite.
pub fn write_results(run_dir: &Path, results: &ResultsFile) -> Result<PathBuf, HarnessError> {
    let path = run_dir.join(result::RESULTS_REL_PATH);
    if path.exists() {
        return Err(HarnessError::Exists(path.display().to_string()));
    }
    let write_err = |message: String| HarnessError::Write {
        path: path.display().to_string(),
        message,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| write_err(e.to_string()))?;
    }
    crate::json::write(&path, results).map_err(|e| write_err(e.to_string()))?;
    Ok(path)
}

/// Warm-up, iterations and timeout of one target.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Warm-up executions per variant.
    pub warmup: u32,
    /// Timed executions per variant.
    pub iterations: u32,
    /// Wall-clock limit of the whole target.
    pub timeout: Duration,
}

/// An empty target result for `t` (raw facts to be filled in).
pub fn empty_result(t: &Target, shapes: &Shapes) -> TargetResult {
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
        status: String::new(),
        message: None,
        metrics: Default::default(),
    }
}

enum Msg {
    Prepared(crate::bench::result::Work, String),
    Variant(Box<VariantResult>),
    Failed(String),
    Done,
}

fn run_builtin(
    t: &Target,
    shapes: &Shapes,
    backend: &Arc<dyn Backend>,
    opts: &HarnessOptions,
    timing: Timing,
) -> TargetResult {
    let mut r = empty_result(t, shapes);
    let (tx, rx) = mpsc::channel();
    let (backend, key, shapes2, seed, tol, hook) = (
        Arc::clone(backend),
        t.key.clone(),
        shapes.clone(),
        opts.seed,
        t.tolerance,
        opts.hook.clone(),
    );
    let spawned = std::thread::Builder::new()
        .name(format!("tier1-bench-{}", t.key))
        .spawn(move || {
            let body = std::panic::AssertUnwindSafe(|| {
                measure(&*backend, &key, &shapes2, seed, tol, hook, timing, &tx)
            });
            let msg = match std::panic::catch_unwind(body) {
                Ok(Ok(())) => Msg::Done,
                Ok(Err(e)) => Msg::Failed(e.to_string()),
                Err(p) => Msg::Failed(format!("panicked: {}", panic_text(&p))),
            };
            let _ = tx.send(msg);
        });
    if let Err(e) = spawned {
        r.failure = Some(TargetFailure {
            status: status::FAILED_ERROR.into(),
            message: format!("could not start the benchmark thread: {e}"),
        });
        return r;
    }
    let deadline = Instant::now() + timing.timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Prepared(work, file)) => {
                r.work = work;
                r.baseline_file = Some(file);
            }
            Ok(Msg::Variant(v)) => r.variants.push(*v),
            Ok(Msg::Done) => break,
            Ok(Msg::Failed(message)) => {
                r.failure = Some(TargetFailure {
                    status: status::FAILED_ERROR.into(),
                    message,
                });
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                r.failure = Some(TargetFailure {
                    status: status::FAILED_TIMEOUT.into(),
                    message: format!(
                        "target {} did not finish within {} s",
                        t.key,
                        timing.timeout.as_secs_f64()
                    ),
                });
                break;
            }
            Err(RecvTimeoutError::Disconnected) => {
                r.failure = Some(TargetFailure {
                    status: status::FAILED_ERROR.into(),
                    message: "benchmark thread ended without a result".into(),
                });
                break;
            }
        }
    }
    r
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

#[allow(clippy::too_many_arguments)]
fn measure(
    backend: &dyn Backend,
    key: &str,
    shapes: &Shapes,
    seed: u64,
    tol: crate::suite::Tolerance,
    hook: Option<Hook>,
    timing: Timing,
    tx: &mpsc::Sender<Msg>,
) -> Result<(), BackendError> {
    let mut w = backend.prepare(key, shapes, seed)?;
    if let Some(h) = &hook {
        h(key, &mut w);
    }
    let _ = tx.send(Msg::Prepared(w.work, w.baseline_file.clone()));
    if w.variants.is_empty() {
        return Err(BackendError::Device(format!("target {key}: no variants")));
    }
    // Verification first, outside the timed region.
    let base_out = w.variants[0].runner.output()?;
    let reference = w.reference.take().map(|f| f());
    let mut records: Vec<Option<VariantVerification>> = Vec::with_capacity(w.variants.len());
    records.push(
        reference
            .as_deref()
            .map(|r| verify::baseline_record(&base_out, r, tol)),
    );
    for v in w.variants.iter_mut().skip(1) {
        let out = v.runner.output()?;
        records.push(Some(verify::compare(
            &out,
            &base_out,
            reference.as_deref(),
            tol,
        )));
    }
    drop(base_out);
    drop(reference);
    // Then timing: baseline, then each optimized variant.
    for (i, (v, verification)) in w.variants.iter_mut().zip(records).enumerate() {
        let _bar = crate::bench::progress::variant(
            key,
            &v.name,
            u64::from(timing.warmup + timing.iterations),
        );
        let (samples, peak) = time_variant(v.runner.as_mut(), timing)?;
        let stats = Stats::of(&samples).ok_or_else(|| {
            BackendError::Device(format!("variant {}: non-finite timing sample", v.name))
        })?;
        let _ = tx.send(Msg::Variant(Box::new(VariantResult {
            name: v.name.clone(),
            role: if i == 0 {
                Role::Baseline
            } else {
                Role::Optimized
            },
            input_signature: v.signature.clone(),
            samples_ms: samples,
            stats,
            memory_peak_bytes: peak,
            verification,
        })));
    }
    Ok(())
}

/// Warm up, then time `iterations` runs; returns samples (ms) and the peak bytes one run allocated
/// above its starting level (`None` without the counting allocator). A variant that reports
/// [`VariantRun::device_peak_bytes`](crate::bench::backend::VariantRun::device_peak_bytes) has
/// that figure recorded instead (device memory is what a GPU variant trades).
pub fn time_variant(
    run: &mut dyn crate::bench::backend::VariantRun,
    timing: Timing,
) -> Result<(Vec<f64>, Option<u64>), BackendError> {
    for _ in 0..timing.warmup {
        run.run()?;
        crate::bench::progress::tick();
    }
    let mut samples = Vec::with_capacity(timing.iterations as usize);
    let mut peak = 0usize;
    for _ in 0..timing.iterations {
        let start = alloc::reset_peak();
        let t0 = Instant::now();
        let device_ms = run.run()?;
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        peak = peak.max(alloc::peak_bytes().saturating_sub(start));
        samples.push(device_ms.unwrap_or(wall));
        crate::bench::progress::tick();
    }
    if let Some(device) = run.device_peak_bytes() {
        return Ok((samples, Some(device)));
    }
    Ok((samples, alloc::is_installed().then_some(peak as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::backend::VariantRun;

    /// A variant that reports device-measured time and device bytes, or allocates on the host.
    struct Fake {
        device_bytes: Option<u64>,
        host_bytes: usize,
    }

    impl VariantRun for Fake {
        fn run(&mut self) -> Result<Option<f64>, BackendError> {
            let v = vec![1u8; self.host_bytes];
            std::hint::black_box(&v);
            Ok(self.device_bytes.map(|_| 1.5))
        }
        fn output(&mut self) -> Result<Vec<f32>, BackendError> {
            Ok(Vec::new())
        }
        fn device_peak_bytes(&self) -> Option<u64> {
            self.device_bytes
        }
    }

    fn timing() -> Timing {
        Timing {
            warmup: 1,
            iterations: 3,
            timeout: Duration::from_secs(60),
        }
    }

    #[test]
    fn device_bytes_replace_the_host_allocator_count() {
        let mut dev = Fake {
            device_bytes: Some(4096),
            host_bytes: 1 << 20,
        };
        let (samples, peak) = time_variant(&mut dev, timing()).expect("fake device run");
        assert_eq!(samples, vec![1.5; 3]);
        assert_eq!(peak, Some(4096));
        let mut host = Fake {
            device_bytes: None,
            host_bytes: 1 << 20,
        };
        let (_, peak) = time_variant(&mut host, timing()).expect("host run");
        assert!(peak.is_some_and(|p| p >= 1 << 20), "host peak {peak:?}");
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
