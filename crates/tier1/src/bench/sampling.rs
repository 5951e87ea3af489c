//! Timing by rounds. Each variant is first warmed up and calibrated: executions are batched until
//! one batch lasts at least `min_sample_ms` (×10 while far below, then scaled by 1.4·target/time,
//! as Google Benchmark does), so no sample sits near the timer's resolution. Then rounds: every
//! round times each variant once, in an order shuffled by a seeded generator, so drift and
//! contention hit baseline and optimized alike and the per-round ratio cancels them. Rounds are
//! added until the caller's precision check passes (after the minimum), the time budget is spent,
//! or the maximum is reached.

use crate::bench::alloc;
use crate::bench::backend::{BackendError, VariantRun};
use crate::bench::clock::Clock;
use crate::bench::rng::Rng;
use std::time::{Duration, Instant};

/// How to sample one target.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Warm-up executions per variant.
    pub warmup: u32,
    /// Minimum rounds.
    pub min_rounds: u32,
    /// Maximum rounds.
    pub max_rounds: u32,
    /// Shortest sample (ms).
    pub min_sample_ms: f64,
    /// Timing budget: no round starts after it is spent (once the minimum is reached).
    pub budget: Duration,
    /// Seed of the round order.
    pub seed: u64,
    /// The clock a CPU sample is read from (a device time is used when the variant reports one).
    pub clock: Clock,
}

/// Largest batch a calibration may choose.
const MAX_REPETITIONS: u32 = 1 << 30;

/// What sampling produced, per variant in input order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampled {
    /// Per-execution time of each sample (batch time / repetitions), one per round.
    pub samples_ms: Vec<Vec<f64>>,
    /// Executions per sample.
    pub(crate) repetitions: Vec<u32>,
    /// Peak bytes one execution allocated above its starting level (`None` unmeasured).
    pub(crate) peaks: Vec<Option<u64>>,
    /// Rounds completed.
    pub(crate) rounds: u32,
    /// The budget ran out before the precision check passed.
    pub(crate) budget_exhausted: bool,
}

/// Time one batch of `reps` executions on `clock`: (milliseconds per execution, peak bytes of
/// the batch).
fn time_batch(
    run: &mut dyn VariantRun,
    reps: u32,
    clock: Clock,
) -> Result<(f64, usize), BackendError> {
    let start = alloc::reset_peak();
    let t0 = clock.start();
    let device_ms = run.run_batch(reps)?;
    let host = t0.elapsed_ms().ok_or_else(|| {
        BackendError::Device(format!(
            "the {} clock could not be read: {}",
            clock.as_str(),
            std::io::Error::last_os_error()
        ))
    });
    let peak = alloc::peak_bytes().saturating_sub(start);
    let total = match device_ms {
        Some(ms) => ms,
        None => host?,
    };
    if !total.is_finite() || total < 0.0 {
        return Err(BackendError::Device(format!(
            "timing sample is not a finite non-negative number of milliseconds: {total}"
        )));
    }
    Ok((total / f64::from(reps), peak))
}

/// Warm up `run` and choose its batch size; returns (repetitions, peak bytes seen).
fn calibrate(
    run: &mut dyn VariantRun,
    plan: &Plan,
    deadline: Instant,
) -> Result<(u32, usize), BackendError> {
    let mut peak = 0;
    for _ in 0..plan.warmup {
        let (_, p) = time_batch(run, 1, plan.clock)?;
        peak = peak.max(p);
        crate::bench::progress::tick();
    }
    let mut reps = 1u32;
    loop {
        let (per_exec, p) = time_batch(run, reps, plan.clock)?;
        peak = peak.max(p);
        let total = per_exec * f64::from(reps);
        if total >= plan.min_sample_ms || reps >= MAX_REPETITIONS || Instant::now() >= deadline {
            return Ok((reps, peak));
        }
        let next = if total < plan.min_sample_ms / 10.0 {
            u64::from(reps) * 10
        } else {
            (f64::from(reps) * 1.4 * plan.min_sample_ms / total.max(1e-9)).ceil() as u64
        };
        reps = next
            .max(u64::from(reps) + 1)
            .min(u64::from(MAX_REPETITIONS)) as u32;
    }
}

/// Sample `runs` by rounds; `precise(samples)` is asked after each round from the minimum on.
pub fn sample(
    runs: &mut [&mut (dyn VariantRun + 'static)],
    plan: &Plan,
    mut precise: impl FnMut(&[Vec<f64>]) -> bool,
) -> Result<Sampled, BackendError> {
    let started = Instant::now();
    let deadline = crate::bench::deadline::deadline(started, plan.budget);
    let n = runs.len();
    let mut out = Sampled {
        samples_ms: vec![Vec::new(); n],
        repetitions: Vec::with_capacity(n),
        peaks: vec![None; n],
        ..Sampled::default()
    };
    let mut peaks = vec![0usize; n];
    // Calibration may use at most a quarter of the budget per variant.
    let calibration_budget = plan.budget / (4 * n.max(1) as u32);
    for (i, run) in runs.iter_mut().enumerate() {
        let until = crate::bench::deadline::deadline(Instant::now(), calibration_budget);
        let (reps, p) = calibrate(&mut **run, plan, until)?;
        out.repetitions.push(reps);
        peaks[i] = p;
    }
    let mut rng = Rng::new(plan.seed, 0x726f_756e_6473);
    let mut order: Vec<usize> = (0..n).collect();
    let min_rounds = plan.min_rounds.max(1);
    loop {
        shuffle(&mut order, &mut rng);
        for &i in &order {
            let (ms, p) = time_batch(&mut *runs[i], out.repetitions[i], plan.clock)?;
            out.samples_ms[i].push(ms);
            peaks[i] = peaks[i].max(p);
        }
        out.rounds += 1;
        crate::bench::progress::tick();
        // A cancellation request stops sampling at once; the harness then discards the suite.
        if out.rounds >= plan.max_rounds || crate::process::requested().is_some() {
            break;
        }
        if out.rounds >= min_rounds {
            if precise(&out.samples_ms) {
                break;
            }
            if Instant::now() >= deadline {
                out.budget_exhausted = true;
                break;
            }
        }
    }
    for (i, run) in runs.iter().enumerate() {
        out.peaks[i] = match run.device_peak_bytes() {
            Some(device) => Some(device),
            None => alloc::is_installed().then_some(peaks[i] as u64),
        };
    }
    Ok(out)
}

/// Fisher-Yates with the harness's generator.
fn shuffle(order: &mut [usize], rng: &mut Rng) {
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant whose executions take `ms` of device time each and allocate `bytes`.
    struct Fake {
        ms: f64,
        bytes: usize,
        calls: u64,
        device_bytes: Option<u64>,
    }

    impl VariantRun for Fake {
        fn run(&mut self) -> Result<Option<f64>, BackendError> {
            self.calls += 1;
            let v = vec![1u8; self.bytes];
            std::hint::black_box(&v);
            Ok(Some(self.ms))
        }
        fn output(&mut self) -> Result<Vec<f32>, BackendError> {
            Ok(Vec::new())
        }
        fn device_peak_bytes(&self) -> Option<u64> {
            self.device_bytes
        }
    }

    fn plan() -> Plan {
        Plan {
            warmup: 5,
            min_rounds: 6,
            max_rounds: 40,
            min_sample_ms: 1.0,
            budget: Duration::from_secs(60),
            seed: 42,
            clock: Clock::Wall,
        }
    }

    fn fake(ms: f64) -> Fake {
        Fake {
            ms,
            bytes: 0,
            calls: 0,
            device_bytes: None,
        }
    }

    #[test]
    fn short_executions_are_batched_to_the_minimum_sample() {
        let (mut a, mut b) = (fake(0.01), fake(2.0));
        let s = sample(&mut [&mut a, &mut b], &plan(), |_| true).unwrap();
        // 0.01 ms: 1 -> 10 -> 100 executions (1.0 ms); 2 ms needs no batching.
        assert_eq!(s.repetitions, [100, 1]);
        assert_eq!(s.rounds, 6, "stops at the minimum once precise");
        assert!(
            s.samples_ms[0].iter().all(|x| (x - 0.01).abs() < 1e-12),
            "{:?}",
            s.samples_ms
        );
        assert_eq!(s.samples_ms[1], vec![2.0; 6]);
        assert_eq!(a.calls, 5 + 1 + 10 + 100 + 6 * 100);
    }

    #[test]
    fn rounds_continue_until_precise_or_the_maximum() {
        let (mut a, mut b) = (fake(1.0), fake(1.0));
        let mut asked = 0;
        let s = sample(&mut [&mut a, &mut b], &plan(), |samples| {
            asked += 1;
            samples[0].len() >= 9
        })
        .unwrap();
        assert_eq!((s.rounds, asked, s.budget_exhausted), (9, 4, false));
        let s = sample(&mut [&mut fake(1.0)], &plan(), |_| false).unwrap();
        assert_eq!((s.rounds, s.budget_exhausted), (40, false));
    }

    #[test]
    fn the_budget_ends_an_imprecise_target() {
        let p = Plan {
            budget: Duration::ZERO,
            ..plan()
        };
        let s = sample(&mut [&mut fake(1.0)], &p, |_| false).unwrap();
        assert_eq!((s.rounds, s.budget_exhausted), (6, true));
    }

    #[test]
    fn memory_is_the_peak_of_one_execution() {
        let mut host = Fake {
            bytes: 1 << 20,
            ..fake(1.0)
        };
        let mut dev = Fake {
            device_bytes: Some(4096),
            ..fake(1.0)
        };
        let s = sample(&mut [&mut host, &mut dev], &plan(), |_| true).unwrap();
        // At least the 1 MiB one execution allocates (other tests of this binary may allocate
        // at the same time, so no upper bound).
        assert!(s.peaks[0].is_some_and(|p| p >= 1 << 20), "{:?}", s.peaks);
        assert_eq!(s.peaks[1], Some(4096));
    }

    #[test]
    fn the_order_is_shuffled_and_seeded() {
        let mut rng = Rng::new(42, 0x726f_756e_6473);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..20 {
            let mut o = vec![0, 1, 2];
            shuffle(&mut o, &mut rng);
            seen.insert(o);
        }
        assert!(seen.len() >= 4, "{seen:?}");
    }
}
