//! One command target measured: invoked again in a new process while its pooled samples are not
//! precise (as asv does), until precise, out of budget or [`MAX_PROCESSES`] invocations; each
//! invocation's stdout read as tier1's document or through the tool's importer (`read`).

use super::invoke::execute;
use super::output::CommandOutput;
use super::read::read;
use crate::bench::backend::Shapes;
use crate::bench::estimate::precise_now;
use crate::bench::machine::{MachineState, MachineWindow};
use crate::bench::options::{HarnessOptions, Timing};
use crate::bench::result::{Sampling, TargetFailure, TargetResult, empty_result, status};
use crate::bench::single;
use crate::suite::{Goal, Target};
use std::time::Instant;

/// Most invocations of one command target per measurement.
pub(crate) const MAX_PROCESSES: u32 = 10;

/// Run a command target; every failure is recorded on the result, never raised.
pub(crate) fn run(
    t: &Target,
    shapes: &Shapes,
    opts: &HarnessOptions,
    timing: Timing,
) -> TargetResult {
    let mut r = empty_result(t, shapes);
    let fail = |r: &mut TargetResult, st: &str, message: String| {
        r.failure = Some(TargetFailure {
            status: st.into(),
            message,
        });
    };
    let started = Instant::now();
    let deadline = crate::bench::deadline::deadline(started, timing.timeout);
    let mut pooled: Option<CommandOutput> = None;
    let mut sampling = Sampling {
        rounds: 0,
        processes: 0,
        precision_pct: timing.precision_pct.into(),
        order_seed: timing.seed,
        budget_exhausted: false,
        remeasured: false,
        throttled: Vec::new(),
        machine: Vec::new(),
        clock: None,
        precision_required: timing.precision_required,
        passes: Vec::new(),
    };
    loop {
        let before = MachineState::cpu_now();
        let out = execute(t, shapes, opts, timing, deadline, sampling.processes, None).and_then(
            |(stdout, inv)| {
                read(t, opts.seed, timing, stdout, &inv).map_err(|m| (status::FAILED_ERROR, m))
            },
        );
        sampling.machine.push(MachineWindow {
            before,
            after: MachineState::cpu_now(),
        });
        sampling.processes += 1;
        let out = match out {
            Ok(out) => out,
            Err((st, msg)) => {
                fail(&mut r, st, msg);
                break;
            }
        };
        let merged = match pooled.take() {
            None => Ok(out),
            Some(p) => p.pool(out, &t.key),
        };
        let p = match merged {
            Ok(p) => pooled.insert(p),
            Err(msg) => {
                fail(&mut r, status::FAILED_ERROR, msg);
                break;
            }
        };
        let samples: Vec<Vec<f64>> = p.variants.iter().map(|v| v.samples_ms.clone()).collect();
        let verified: Vec<bool> = p
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| i > 0 && v.verification.as_ref().is_some_and(|x| x.passed))
            .collect();
        sampling.rounds = u32::try_from(samples[0].len()).unwrap_or(u32::MAX);
        let precise = match t.optimization_goal {
            Goal::Time => single::precise_now(&samples[0], timing.precision_pct),
            Goal::Speed | Goal::Memory => precise_now(&samples, &verified, timing.precision_pct),
        };
        if precise {
            break;
        }
        let pooled_samples: usize = samples.iter().map(Vec::len).sum();
        if pooled_samples > crate::bench::limits::MAX_RUN_SAMPLES {
            // More than a run may record: the harness refuses the run; never invoke again.
            break;
        }
        if sampling.processes >= MAX_PROCESSES || started.elapsed() >= timing.budget {
            sampling.budget_exhausted = true;
            break;
        }
        tracing::debug!(target = %t.key, processes = sampling.processes, "not yet precise; running the command again");
    }
    if let Some(mut out) = pooled {
        r.work = out.work;
        r.baseline_file = out.baseline_file.take();
        r.variants = out.into_results();
    }
    r.sampling = Some(sampling);
    r
}
