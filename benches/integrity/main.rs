//! `cargo bench --bench integrity`: the operating characteristics of the release gate.
//!
//! 1. Simulation: nights of a six-target suite under noise models (run-to-run CV 1 %, 3 %, 10 %,
//!    slow drift, 5 % outlier samples, a bimodal mode, and this machine's measured noise), judged
//!    by the real estimator, comparison, noise history and recheck code, for `detection:
//!    reference` against `statistical`: false alarms per night on unchanged code, and the share
//!    of nights in which a 5 %, 10 % or 20 % slowdown of one target is a confirmed regression.
//!    `TIER1_INTEGRITY_REPLICATES` nights per cell (default 400; docs/performance.md used 2000; 0
//!    skips the simulation).
//! 2. Real runs (`TIER1_INTEGRITY_REAL_RUNS=N`, default 0: skipped): N unchanged `tier1-nightly`
//!    runs of the `cpu` profile against one anchor (gate failures, per-target speedup CV), then
//!    nights of a command-target suite whose optimized work grows by 10 % (detections). Method in
//!    docs/regression-model.md.

mod builtin_nights;
#[path = "../neighbours.rs"]
mod neighbours;
mod nights;
mod real;
mod sim;

use sim::{Model, Setup};
use tier1::suite::DetectionMethod;

// The real nights measure memory like the binaries do.
#[global_allocator]
static ALLOC: tier1::bench::alloc::CountingAlloc = tier1::bench::alloc::CountingAlloc::new();

const MODELS: [Model; 7] = [
    Model {
        name: "CV 1 %",
        tau: 0.01,
        sigma: 0.01,
        drift: 0.0,
        stall_p: 0.0,
        stall: (1.0, 1.0),
    },
    Model {
        name: "CV 3 %",
        tau: 0.03,
        sigma: 0.03,
        drift: 0.0,
        stall_p: 0.0,
        stall: (1.0, 1.0),
    },
    Model {
        name: "CV 10 %",
        tau: 0.10,
        sigma: 0.10,
        drift: 0.0,
        stall_p: 0.0,
        stall: (1.0, 1.0),
    },
    Model {
        name: "CV 1 %, 10 % slow drift",
        tau: 0.01,
        sigma: 0.01,
        drift: 0.10,
        stall_p: 0.0,
        stall: (1.0, 1.0),
    },
    Model {
        name: "CV 1 %, 5 % outliers x1.5-3",
        tau: 0.01,
        sigma: 0.01,
        drift: 0.0,
        stall_p: 0.05,
        stall: (1.5, 3.0),
    },
    Model {
        name: "CV 1 %, bimodal 20 % at +8 %",
        tau: 0.01,
        sigma: 0.01,
        drift: 0.0,
        stall_p: 0.20,
        stall: (1.08, 1.08),
    },
    Model {
        name: "this VM: CV 2.5 %, 15 % stalls x1.2-2",
        tau: 0.025,
        sigma: 0.03,
        drift: 0.0,
        stall_p: 0.15,
        stall: (1.2, 2.0),
    },
];

fn rate(n: usize, of: usize) -> String {
    let p = n as f64 / of as f64;
    let se = (p * (1.0 - p) / of as f64).sqrt();
    format!("{:.2} % ±{:.2}", p * 100.0, se * 100.0)
}

/// What the statistical method stated and kept, over the nights of one cell.
#[derive(Debug, Default, Clone)]
struct Promise {
    /// Target 0's stated detectable slowdown (percent), every unchanged night.
    stated: Vec<f64>,
    /// Unchanged nights with target 0 unknown.
    unknown: usize,
    /// Slowed nights whose slowdown was at least 1.25 × the stated detectable change.
    covered: usize,
    /// Of those, the nights that caught it.
    kept: usize,
}

/// The cells of one noise model: false alarms and detections at 5, 10 and 20 % for both
/// methods, over `replicates` nights; every replicate's history is built once and judged by both
/// methods, and the same seeds give the same nights to both. Also, for the statistical method,
/// what it stated it could detect and whether it kept that promise.
fn cells(replicates: usize, m: &Model, setup: &Setup) -> ([[usize; 4]; 2], Promise) {
    const SLOWDOWNS: [f64; 4] = [0.0, 0.05, 0.10, 0.20];
    let methods = [DetectionMethod::Reference, DetectionMethod::Statistical];
    let suites = methods.map(sim::suite);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let suites = &suites;
                s.spawn(move || {
                    let mut out = [[0usize; 4]; 2];
                    let mut p = Promise::default();
                    for r in (t..replicates).step_by(threads) {
                        let history = sim::History::new(r as u64, m, setup, &suites[0]);
                        for (k, suite) in suites.iter().enumerate() {
                            for (j, slow) in SLOWDOWNS.iter().enumerate() {
                                let n = sim::night(r as u64, &history, m, setup, suite, *slow);
                                out[k][j] += usize::from(if j == 0 { n.alarm } else { n.detected });
                                if k == 1 && j == 0 {
                                    p.stated.extend(n.detectable_pct);
                                    p.unknown += usize::from(n.unknown);
                                }
                                if k == 1
                                    && j > 0
                                    && n.detectable_pct.is_some_and(|d| slow * 100.0 >= 1.25 * d)
                                {
                                    p.covered += 1;
                                    p.kept += usize::from(n.detected);
                                }
                            }
                        }
                    }
                    (out, p)
                })
            })
            .collect();
        let mut total = [[0usize; 4]; 2];
        let mut promise = Promise::default();
        for h in handles {
            let (part, p) = h.join().expect("simulation thread");
            for k in 0..2 {
                for j in 0..4 {
                    total[k][j] += part[k][j];
                }
            }
            promise.stated.extend(p.stated);
            promise.unknown += p.unknown;
            promise.covered += p.covered;
            promise.kept += p.kept;
        }
        (total, promise)
    })
}

fn main() {
    if nights::child() {
        return;
    }
    let replicates: usize = std::env::var("TIER1_INTEGRITY_REPLICATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let t0 = std::time::Instant::now();
    // 0 replicates: the real nights alone.
    let histories: &[usize] = if replicates == 0 { &[] } else { &[20, 5, 1] };
    for &history in histories {
        let setup = Setup {
            history,
            min_rounds: 20,
            max_rounds: 400,
        };
        println!(
            "\n### Simulation: {replicates} nights per cell, six targets, history of {history} accepted run(s) (the anchor first)\n"
        );
        println!(
            "| noise model | detection | false alarms / night | 5 % slowdown caught | 10 % caught | 20 % caught |"
        );
        println!("| --- | --- | ---: | ---: | ---: | ---: |");
        let mut promises = Vec::new();
        for m in &MODELS {
            let (c, promise) = cells(replicates, m, &setup);
            promises.push((m.name, promise));
            for (k, method) in [DetectionMethod::Reference, DetectionMethod::Statistical]
                .iter()
                .enumerate()
            {
                let r: Vec<String> = c[k].iter().map(|n| rate(*n, replicates)).collect();
                println!(
                    "| {} | {} | {} | {} | {} | {} |",
                    m.name,
                    method.as_str(),
                    r[0],
                    r[1],
                    r[2],
                    r[3]
                );
            }
        }
        println!(
            "\nStatistical method, the slowed target: its stated detectable slowdown on unchanged nights (median, p10-p90), unknown verdicts, and the promise: of the slowed nights whose slowdown was at least 1.25x the stated detectable change, the share caught.\n"
        );
        println!(
            "| noise model | stated detectable (median, p10-p90) | unknown / night | slowdowns >= 1.25x stated | caught |"
        );
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (name, mut p) in promises {
            p.stated.sort_by(f64::total_cmp);
            let q = |f: f64| {
                if p.stated.is_empty() {
                    f64::NAN
                } else {
                    p.stated[((p.stated.len() - 1) as f64 * f) as usize]
                }
            };
            let caught = if p.covered == 0 {
                "-".to_string()
            } else {
                rate(p.kept, p.covered)
            };
            println!(
                "| {name} | {:.1} % ({:.1}-{:.1}) | {} | {} | {caught} |",
                q(0.5),
                q(0.1),
                q(0.9),
                rate(p.unknown, replicates),
                p.covered
            );
        }
    }
    println!("\nsimulation: {:.1} s", t0.elapsed().as_secs_f64());
    real_nights();
}

/// Run the real nights when asked for. The dispatch lives here, above `real`, `nights` and
/// `builtin_nights`, so that `real` (whose helpers the other two use) imports neither of them.
fn real_nights() {
    let runs: usize = std::env::var("TIER1_INTEGRITY_REAL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if runs == 0 {
        println!(
            "\nreal runs: skipped (TIER1_INTEGRITY_REAL_RUNS=20 runs 20 unchanged cpu nights and 10 + 10 injected-slowdown nights; about 30 minutes on 2 cores)"
        );
        return;
    }
    // TIER1_INTEGRITY_REAL_ONLY=unchanged|slowdown runs one half; nights|builtin_nights, whole nights
    // with and without side by side; heal, the stated detectable change around a burst of loaded
    // nights.
    let only = std::env::var("TIER1_INTEGRITY_REAL_ONLY").unwrap_or_default();
    if only == "nights" {
        nights::main(runs);
        return;
    }
    if only == "heal" {
        nights::heal(runs);
        return;
    }
    if only == "builtin_nights" {
        builtin_nights::main(runs);
        return;
    }
    if only != "slowdown" {
        real::unchanged_nights(runs);
    }
    if only != "unchanged" {
        real::slowdown_nights(runs);
    }
}
