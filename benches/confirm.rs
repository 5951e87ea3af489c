//! Side-by-side confirmation rates (`cargo bench --bench confirm`): how often
//! `tier1::sidebyside::confirm` says `worse` for a commit that changed nothing (false alarms) and
//! for commits that slow a Python command target that times real loops by 5 %, 10 % and 20 %
//! (detection), with what it costs. Each trial is a fresh two-commit synthetic history (the change
//! is in the second commit, never in the environment) and a fresh build cache; the current side is
//! the culprit's worktree, as in a night on another commit. The night's own history test is not
//! re-run here (its rates are in docs/performance.md): these are the rates of the confirmation
//! that decides a suspected target.
//!
//! Knobs: `TIER1_BENCH_TRIALS` (default 10), `TIER1_BENCH_BUDGET_S` (seconds per comparison,
//! default 10), `TIER1_BENCH_THRESHOLD_PCT` (default 5).

#[path = "../tests/it/support/synthetic_history.rs"]
mod synthetic_history;

use std::time::Instant;
use synthetic_history::Spec;
use tier1::sidebyside::{Budget, ConfirmRequest, DecideOn, Verdict, confirm};
use tier1::suite::Suite;

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let trials: usize = knob("TIER1_BENCH_TRIALS", 10);
    let budget_s: f64 = knob("TIER1_BENCH_BUDGET_S", 10.0);
    let threshold_pct: f64 = knob("TIER1_BENCH_THRESHOLD_PCT", 5.0);
    println!(
        "confirm: {trials} trials per change, {budget_s} s per comparison, threshold {threshold_pct} %, deciding on the optimized time"
    );
    println!("change  worse  same  unknown  mean rounds  mean s  max s");
    for factor in [1.0, 1.05, 1.10, 1.20] {
        let (mut worse, mut same, mut unknown) = (0, 0, 0);
        let (mut rounds, mut secs, mut max_s) = (0u64, 0.0f64, 0.0f64);
        for trial in 0..trials {
            let spec = Spec {
                commits: 2,
                culprit: (factor != 1.0).then_some(1),
                factor,
                unbuildable: Vec::new(),
                crashing: Vec::new(),
                timed: true,
                noise: 0.0,
            };
            let h = synthetic_history::create(&spec);
            let suite = Suite::load(&h.repo.join("configs/benchmark_suites/synthetic.yaml"))
                .expect("suite");
            let started = Instant::now();
            let o = confirm(&ConfirmRequest {
                suite: &suite,
                profile: "cpu",
                target_key: "loop",
                current_commit: &h.commits[1],
                anchor_commit: &h.commits[0],
                repo_root: &h.repo,
                cache_dir: &h.tmp.path().join("cache"),
                evidence_dir: &h.tmp.path().join("evidence"),
                budget: Budget {
                    seconds: budget_s,
                    min_rounds: 10,
                    max_rounds: 200,
                    precision_pct: 1.0,
                    confidence: 0.95,
                },
                threshold_pct,
                seed: 1000 + trial as u64,
                decide_on: DecideOn::OptimizedTime,
                builder: tier1::sidebyside::Builder::SideBySide,
                state_dir: Some(h.tmp.path()),
                extra_seconds: 0.0,
            });
            let s = started.elapsed().as_secs_f64();
            match o.verdict {
                Verdict::Worse => worse += 1,
                Verdict::Same => same += 1,
                Verdict::Unknown => unknown += 1,
            }
            if o.verdict == Verdict::Unknown && o.cause != Some(tier1::sidebyside::Cause::TooNoisy)
            {
                eprintln!("trial {trial}: {}", o.reason);
            }
            rounds += u64::from(o.rounds);
            secs += s;
            max_s = max_s.max(s);
        }
        let n = trials.max(1) as f64;
        println!(
            "{:>5.0} % {worse:>6} {same:>5} {unknown:>8} {:>12.1} {:>7.1} {max_s:>6.1}",
            (factor - 1.0) * 100.0,
            rounds as f64 / n,
            secs / n
        );
    }
}
