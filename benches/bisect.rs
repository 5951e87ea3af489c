//! Bisection over a synthetic history of 16 commits with one culprit (`cargo bench --bench bisect`):
//! a Python command target that times real loops, whose work grows by a known factor from the
//! culprit commit on (injected in a commit, not by an environment variable). Each trial puts the
//! culprit elsewhere and runs `tier1::bisect::bisect` with a fresh build cache; the bench reports
//! per trial the steps, builds, seconds and whether the culprit was found, and exits non-zero when
//! a trial misses it or needs more than 5 builds.
//!
//! Knobs: `TIER1_BENCH_TRIALS` (default 6), `TIER1_BENCH_FACTOR` (default 1.2),
//! `TIER1_BENCH_BUDGET_S` (seconds per step, default 20), `TIER1_BENCH_THRESHOLD_PCT` (default 5),
//! `TIER1_BENCH_METRIC` (`optimized_time`, the metric the injected change is in; or `both`).

#[path = "../tests/it/support/synthetic_history.rs"]
mod synthetic_history;

use std::time::Instant;
use synthetic_history::Spec;
use tier1::bisect::{BisectRequest, BisectStatus, bisect};
use tier1::sidebyside::{Budget, DecideOn};
use tier1::suite::Suite;

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let trials: usize = knob("TIER1_BENCH_TRIALS", 6);
    let factor: f64 = knob("TIER1_BENCH_FACTOR", 1.2);
    let budget_s: f64 = knob("TIER1_BENCH_BUDGET_S", 20.0);
    let threshold_pct: f64 = knob("TIER1_BENCH_THRESHOLD_PCT", 5.0);
    // The injected change multiplies both variants' work: a change of the optimized time.
    let metric: String = knob("TIER1_BENCH_METRIC", "optimized_time".to_string());
    let decide_on =
        DecideOn::parse(&metric).expect("TIER1_BENCH_METRIC: both, optimized_time or speedup");
    let culprits = [11, 3, 15, 7, 1, 13, 5, 9];
    println!(
        "bisect: 16 commits, work x{factor} from the culprit on, {budget_s} s per step, threshold {threshold_pct} %, deciding on {metric}"
    );
    println!("trial culprit found  steps builds  seconds  skipped");
    let (mut correct, mut worst_builds, mut total_steps) = (0, 0, 0);
    for trial in 0..trials {
        let culprit = culprits[trial % culprits.len()];
        let spec = Spec {
            commits: 16,
            culprit: Some(culprit),
            factor,
            unbuildable: Vec::new(),
            crashing: Vec::new(),
            timed: true,
            noise: 0.0,
        };
        let h = synthetic_history::create(&spec);
        let suite =
            Suite::load(&h.repo.join("configs/benchmark_suites/synthetic.yaml")).expect("suite");
        let started = Instant::now();
        let report = bisect(&BisectRequest {
            suite: &suite,
            profile: "cpu",
            target_key: "loop",
            good: &h.commits[0],
            bad: &h.commits[15],
            repo_root: &h.repo,
            cache_dir: &h.tmp.path().join("cache"),
            output_dir: &h.tmp.path().join("out"),
            budget: Budget {
                seconds: budget_s,
                min_rounds: 10,
                max_rounds: 200,
                precision_pct: 1.0,
                confidence: 0.95,
            },
            threshold_pct,
            seed: 42 + trial as u64,
            decide_on,
        })
        .expect("the bisection completes");
        let found = report.status == BisectStatus::Found
            && report.culprit.as_deref() == Some(h.commits[culprit].as_str());
        let skipped = report
            .steps
            .iter()
            .filter(|s| s.mark == tier1::bisect::Mark::Skip)
            .count();
        correct += usize::from(found && report.builds <= 5);
        worst_builds = worst_builds.max(report.builds);
        total_steps += report.steps.len();
        println!(
            "{trial:>5} {culprit:>7} {:>6} {:>6} {:>6} {:>8.1} {skipped:>8}",
            if found { "yes" } else { "NO" },
            report.steps.len(),
            report.builds,
            started.elapsed().as_secs_f64()
        );
        for s in &report.steps {
            println!(
                "        step {} {}: {:?} ({})",
                s.step,
                &s.commit[..8],
                s.verdict,
                s.reason
            );
        }
    }
    println!(
        "found {correct}/{trials} in at most 5 builds; most builds {worst_builds}; mean steps {:.2}",
        total_steps as f64 / trials.max(1) as f64
    );
    if correct != trials {
        eprintln!("bisect: a trial missed the culprit or needed more than 5 builds");
        std::process::exit(1);
    }
}
