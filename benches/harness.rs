//! `cargo bench --bench harness`: the harness's timing overhead per iteration, this CPU's measured
//! peak FLOP/s and copy bandwidth, then the suite's `cpu` profile (or `TIER1_BENCH_PROFILE`) with
//! each target's baseline and optimized medians, speedup, and GFLOP/s or GB/s against the peaks.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tier1::bench::backend::{BackendError, VariantRun, threads};
use tier1::bench::sampling::{self, Plan};
use tier1::bench::{CpuBackend, HarnessOptions, alloc::CountingAlloc, run_suite};
use tier1::json::Finite;
use tier1::suite::Suite;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

struct Empty;

impl VariantRun for Empty {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        std::hint::black_box(());
        Ok(None)
    }
    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        Ok(Vec::new())
    }
}

/// Accumulator rows of the peak loop: 6 × 8 lanes = 12 SSE or 6 AVX registers, enough
/// independent chains to cover the add and multiply latencies without spilling.
const ROWS: usize = 6;

/// Register-blocked multiply-add loop: `ROWS` independent 8-lane accumulators per thread.
fn fma_block(iters: usize) -> f32 {
    let mut acc = [[1.0f32; 8]; ROWS];
    let (m, a) = (
        std::hint::black_box(0.999_999f32),
        std::hint::black_box(1e-7f32),
    );
    for _ in 0..iters {
        for row in acc.iter_mut() {
            for x in row.iter_mut() {
                *x = *x * m + a;
            }
        }
    }
    acc.iter().flatten().sum()
}

/// Cache-resident 192³ sgemm: matrixmultiply's register-blocked micro-kernel, which detects
/// AVX/FMA at run time (the portable loop above cannot use FMA without target features).
fn sgemm_block(reps: usize) -> f32 {
    let n = 192;
    let a = vec![0.5f32; n * n];
    let b = vec![0.25f32; n * n];
    let mut c = vec![0.0f32; n * n];
    for _ in 0..reps {
        tier1::bench::targets::gemm::sgemm(n, n, n, &a, &b, 0.0, &mut c);
    }
    c[0]
}

/// Best of 3 of `flops_per_call * threads / time` with `f` run on every thread.
fn best_rate(flops_per_call: f64, f: impl Fn() -> f32 + Sync) -> f64 {
    let t = threads();
    (0..3)
        .map(|_| {
            let t0 = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| std::hint::black_box(f()));
                }
            });
            flops_per_call * t as f64 / t0.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

/// Peak FLOP/s over all threads: the better of the portable multiply-add loop and the sgemm
/// micro-kernel.
fn peak_flops() -> (f64, f64) {
    let iters = 20_000_000;
    let portable = best_rate(2.0 * (ROWS * 8) as f64 * iters as f64, || fma_block(iters));
    let reps = 100;
    let gemm = best_rate(2.0 * 192f64.powi(3) * reps as f64, || sgemm_block(reps));
    (portable, gemm)
}

/// Copy bandwidth (bytes read + written per second) of a 256 MiB buffer, best of 5.
fn peak_bandwidth() -> f64 {
    let n = 64 << 20;
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    dst.copy_from_slice(&src);
    (0..5)
        .map(|_| {
            let t0 = Instant::now();
            dst.copy_from_slice(&src);
            std::hint::black_box(&dst);
            2.0 * 4.0 * n as f64 / t0.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

fn main() {
    let profile = std::env::var("TIER1_BENCH_PROFILE").unwrap_or_else(|_| "cpu".into());
    // One unbatched sample per round of an empty closure: what timing one sample costs.
    let plan = Plan {
        warmup: 1000,
        min_rounds: 100_000,
        max_rounds: 100_000,
        min_sample_ms: 0.0,
        budget: Duration::from_secs(60),
        seed: 42,
        clock: tier1::bench::clock::Clock::Wall,
    };
    let sampled =
        sampling::sample(&mut [&mut Empty], &plan, |_| false).expect("empty closure runs");
    let overhead = tier1::bench::stats::Stats::of(&sampled.samples_ms[0]).expect("finite");
    println!(
        "timing overhead per sample (empty closure, unbatched): median {:.0} ns, p99 {:.0} ns; a 1 ms batch makes it {:.4} % of a sample",
        overhead.median_ms.get() * 1e6,
        overhead.p99_ms.get() * 1e6,
        overhead.median_ms.get() * 100.0
    );
    let (portable, gemm) = peak_flops();
    let flops = portable.max(gemm);
    let bw = peak_bandwidth();
    println!(
        "peak ({} threads): {:.1} GFLOP/s portable multiply-add loop, {:.1} GFLOP/s cache-resident sgemm micro-kernel; {:.1} GB/s (256 MiB copy)",
        threads(),
        portable / 1e9,
        gemm / 1e9,
        bw / 1e9
    );

    let t0 = Instant::now();
    let opts = HarnessOptions::new(&profile, "bench_harness");
    let r = run_suite(&Suite::embedded(), Arc::new(CpuBackend), &opts).expect("suite runs");
    println!(
        "\nprofile {profile}: {} targets in {:.1} s",
        r.targets.len(),
        t0.elapsed().as_secs_f64()
    );
    println!(
        "| target | status | baseline median ms | optimized median ms | speedup | opt GFLOP/s (% peak) | opt GB/s (% peak) | memory savings % |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for t in &r.targets {
        let base = t.metrics.baseline_time_ms.map_or(f64::NAN, f64::from);
        let best = t
            .variants
            .iter()
            .find(|v| Some(&v.name) == t.metrics.best_optimization.as_ref())
            .map_or(f64::NAN, |v| v.stats.median_ms.get());
        let rate = |x: Option<Finite>, peak: f64, unit: f64| {
            x.map_or("-".to_string(), |x| {
                let r = x.get() / (best / 1e3);
                format!("{:.2} ({:.1} %)", r / unit, r / peak * 100.0)
            })
        };
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.2}x | {} | {} | {} |",
            t.key,
            t.status,
            base,
            best,
            t.metrics.best_speedup.map_or(f64::NAN, f64::from),
            rate(t.work.flops, flops, 1e9),
            rate(t.work.bytes, bw, 1e9),
            t.metrics
                .best_memory_savings_pct
                .map_or("-".into(), |p| format!("{p:.1}"))
        );
    }
}
