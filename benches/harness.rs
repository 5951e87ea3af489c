//! `cargo bench --bench harness`: the harness's timing overhead per iteration, this CPU's measured
//! peak FLOP/s and copy bandwidth, then the suite's `cpu` profile (or `TIER1_BENCH_PROFILE`) with
//! each target's baseline and optimized medians, speedup, and GFLOP/s or GB/s against the peaks.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tier1::bench::backend::{BackendError, VariantRun, threads};
use tier1::bench::harness::{Timing, time_variant};
use tier1::bench::{CpuBackend, HarnessOptions, alloc::CountingAlloc, run_suite};
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

/// Register-blocked multiply-add loop: 16 independent 8-lane accumulators per thread.
fn fma_block(iters: usize) -> f32 {
    let mut acc = [[1.0f32; 8]; 16];
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

/// Peak FLOP/s over all threads (2 flops per lane per iteration), best of 3.
fn peak_flops() -> f64 {
    let iters = 4_000_000;
    let t = threads();
    (0..3)
        .map(|_| {
            let t0 = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| std::hint::black_box(fma_block(iters)));
                }
            });
            2.0 * 128.0 * iters as f64 * t as f64 / t0.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
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
    let timing = Timing {
        warmup: 1000,
        iterations: 100_000,
        timeout: Duration::from_secs(60),
    };
    let (samples, _) = time_variant(&mut Empty, timing).expect("empty closure runs");
    let overhead = tier1::bench::stats::Stats::of(&samples).expect("finite");
    println!(
        "timing overhead per iteration (empty closure): median {:.0} ns, p99 {:.0} ns",
        overhead.median_ms * 1e6,
        overhead.p99_ms * 1e6
    );
    let flops = peak_flops();
    let bw = peak_bandwidth();
    println!(
        "peak: {:.1} GFLOP/s ({} threads, multiply-add loop), {:.1} GB/s (256 MiB copy)",
        flops / 1e9,
        threads(),
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
        let base = t.metrics.baseline_time_ms.unwrap_or(f64::NAN);
        let best = t
            .variants
            .iter()
            .find(|v| Some(&v.name) == t.metrics.best_optimization.as_ref())
            .map_or(f64::NAN, |v| v.stats.median_ms);
        let rate = |x: Option<f64>, peak: f64, unit: f64| {
            x.map_or("-".to_string(), |x| {
                let r = x / (best / 1e3);
                format!("{:.2} ({:.1} %)", r / unit, r / peak * 100.0)
            })
        };
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.2}x | {} | {} | {} |",
            t.key,
            t.status,
            base,
            best,
            t.metrics.best_speedup.unwrap_or(f64::NAN),
            rate(t.work.flops, flops, 1e9),
            rate(t.work.bytes, bw, 1e9),
            t.metrics
                .best_memory_savings_pct
                .map_or("-".into(), |p| format!("{p:.1}"))
        );
    }
}
