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

#[path = "integrity/real.rs"]
mod real;
#[path = "integrity/sim.rs"]
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

/// The cells of one noise model: false alarms and detections at 5, 10 and 20 % for both
/// methods, over `replicates` nights; every replicate's history is built once and judged by both
/// methods, and the same seeds give the same nights to both.
fn cells(replicates: usize, m: &Model, setup: &Setup) -> [[usize; 4]; 2] {
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
                    for r in (t..replicates).step_by(threads) {
                        let history = sim::History::new(r as u64, m, setup, &suites[0]);
                        for (k, suite) in suites.iter().enumerate() {
                            for (j, slow) in SLOWDOWNS.iter().enumerate() {
                                let n = sim::night(r as u64, &history, m, setup, suite, *slow);
                                out[k][j] += usize::from(if j == 0 { n.alarm } else { n.detected });
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        let mut total = [[0usize; 4]; 2];
        for h in handles {
            let part = h.join().expect("simulation thread");
            for k in 0..2 {
                for j in 0..4 {
                    total[k][j] += part[k][j];
                }
            }
        }
        total
    })
}

fn main() {
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
        for m in &MODELS {
            let c = cells(replicates, m, &setup);
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
    }
    println!("\nsimulation: {:.1} s", t0.elapsed().as_secs_f64());
    real::main();
}
