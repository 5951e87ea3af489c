//! One built-in target measured on its own thread: prepared by the backend, verified outside
//! timing, sampled by rounds (with the machine's state around them and one re-measurement when
//! the device throttled), within `timeout_s`; a panic or a run past it fails that target only.

use crate::bench::backend::{Backend, BackendError, Shapes, VariantRun, Workload};
use crate::bench::estimate;
use crate::bench::machine::{MachineState, MachineWindow};
use crate::bench::options::{HarnessOptions, Hook, Timing};
use crate::bench::result::{
    self, Role, Sampling, TargetFailure, TargetResult, VariantResult, VariantVerification, status,
};
use crate::bench::sampling;
use crate::bench::stats::Stats;
use crate::bench::verify;
use crate::suite::Target;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

/// What the measuring thread reports to the thread waiting on it.
enum Msg {
    Prepared(crate::bench::result::Work, String),
    Measured(Vec<VariantResult>, Box<Sampling>),
    Failed(String),
    Done,
}

/// Built-in target `t` measured on its own thread within `timing.timeout`: its result, failed
/// (never a panic) where the thread fails, panics or runs past the timeout.
pub(super) fn run_builtin(
    t: &Target,
    shapes: &Shapes,
    backend: &Arc<dyn Backend>,
    opts: &HarnessOptions,
    timing: Timing,
) -> TargetResult {
    let mut r = result::empty_result(t, shapes);
    r.peak_class = crate::bench::table::spec(&t.key).map(|s| s.peak);
    let (tx, rx) = mpsc::channel();
    let job = Job {
        backend: Arc::clone(backend),
        key: t.key.clone(),
        shapes: shapes.clone(),
        seed: opts.seed,
        tolerance: t.tolerance,
        hook: opts.hook.clone(),
        timing,
    };
    let spawned = std::thread::Builder::new()
        .name(format!("tier1-bench-{}", t.key))
        .spawn(move || {
            let body = std::panic::AssertUnwindSafe(|| measure(&job, &tx));
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
    let deadline = crate::bench::deadline::deadline(Instant::now(), timing.timeout);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Prepared(work, file)) => {
                r.work = work;
                r.baseline_file = Some(file);
            }
            Ok(Msg::Measured(variants, sampling)) => {
                r.variants = variants;
                r.sampling = Some(*sampling);
            }
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

/// The text of a panic's payload.
fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Everything the measuring thread needs.
struct Job {
    backend: Arc<dyn Backend>,
    key: String,
    shapes: Shapes,
    seed: u64,
    tolerance: crate::suite::Tolerance,
    hook: Option<Hook>,
    timing: Timing,
}

/// The measuring thread's body: the workload prepared, verified, sampled (once more where the
/// device throttled), each step reported on `tx`.
fn measure(job: &Job, tx: &mpsc::Sender<Msg>) -> Result<(), BackendError> {
    let key = job.key.as_str();
    crate::bench::footprint::check(key, &job.shapes, crate::bench::footprint::available())?;
    let mut w = job.backend.prepare(key, &job.shapes, job.seed)?;
    if let Some(h) = &job.hook {
        h(key, &mut w);
    }
    let _ = tx.send(Msg::Prepared(w.work, w.baseline_file.clone()));
    if w.variants.is_empty() {
        return Err(BackendError::Device(format!("target {key}: no variants")));
    }
    let records = verify_variants(&mut w, job.tolerance)?;
    let verified: Vec<bool> = records
        .iter()
        .enumerate()
        .map(|(i, r)| i > 0 && r.as_ref().is_some_and(|r| r.passed))
        .collect();
    let _bar = crate::bench::progress::target(
        key,
        u64::from(job.timing.warmup) * w.variants.len() as u64 + u64::from(job.timing.iterations),
    );
    let mut windows = Vec::new();
    let mut remeasured = false;
    let (sampled, throttled) = loop {
        let before = machine_now(&*job.backend);
        let mut runs: Vec<&mut (dyn VariantRun + 'static)> =
            w.variants.iter_mut().map(|v| v.runner.as_mut()).collect();
        let precision = job.timing.precision_pct;
        let sampled = sampling::sample(&mut runs, &job.timing.plan(), |samples| {
            estimate::precise_now(samples, &verified, precision)
        })?;
        let window = MachineWindow {
            before,
            after: machine_now(&*job.backend),
        };
        let throttled: Vec<String> = window.throttling().iter().map(|s| s.to_string()).collect();
        windows.push(window);
        if throttled.is_empty() || remeasured {
            break (sampled, throttled);
        }
        tracing::warn!(target = %key, reasons = ?throttled, "the device throttled; measuring the target once more");
        remeasured = true;
    };
    let mut variants = Vec::with_capacity(w.variants.len());
    for (i, (v, verification)) in w.variants.iter().zip(records).enumerate() {
        let samples = sampled.samples_ms[i].clone();
        let stats = Stats::of(&samples).ok_or_else(|| {
            BackendError::Device(format!("variant {}: non-finite timing sample", v.name))
        })?;
        variants.push(VariantResult {
            name: v.name.clone(),
            role: if i == 0 {
                Role::Baseline
            } else {
                Role::Optimized
            },
            input_signature: v.signature.clone(),
            samples_ms: samples,
            repetitions: sampled.repetitions[i],
            stats,
            memory_peak_bytes: sampled.peaks[i],
            verification,
        });
    }
    let sampling = Sampling {
        rounds: sampled.rounds,
        processes: 1,
        precision_pct: job.timing.precision_pct.into(),
        order_seed: job.timing.seed,
        budget_exhausted: sampled.budget_exhausted,
        remeasured,
        throttled,
        machine: windows,
        clock: Some(job.timing.clock),
        precision_required: job.timing.precision_required,
        passes: Vec::new(),
    };
    let _ = tx.send(Msg::Measured(variants, Box::new(sampling)));
    Ok(())
}

/// Verification, outside the timed region: the baseline against the f64 reference (where there
/// is one), each optimized variant against the baseline.
fn verify_variants(
    w: &mut Workload,
    tol: crate::suite::Tolerance,
) -> Result<Vec<Option<VariantVerification>>, BackendError> {
    let base_out = w.variants[0].runner.output()?;
    let reference = w.reference.take().map(|f| f());
    let mut records = Vec::with_capacity(w.variants.len());
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
    Ok(records)
}

/// The machine now: CPU load and clock, and the device's state where the backend has one.
fn machine_now(backend: &dyn Backend) -> MachineState {
    MachineState {
        gpu: backend.device_state(),
        ..MachineState::cpu_now()
    }
}
