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
//! default 10), `TIER1_BENCH_THRESHOLD_PCT` (default 5). `TIER1_BENCH_TARGET=py_sort` compares
//! an imported pytest-benchmark pair instead (the adoption trial's `py_sort`,
//! tests/fixtures/adoption: its `SLOWDOWN` knob set in the second commit, deciding on both
//! metrics as a night does for a pair; pytest-benchmark on `PATH`: `source .ci/importers.sh`,
//! then `PATH=$PWD/target/importers-venv/bin:$PATH`).

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

/// The adoption trial's pytest-benchmark pair in a fresh two-commit repository, its second commit
/// slowing the optimized variant by `factor` (1: a commit that changes nothing it measures).
fn pytest_pair(factor: f64) -> synthetic_history::History {
    use synthetic_history::git;
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adoption");
    std::fs::create_dir_all(repo.join("bench")).unwrap();
    std::fs::create_dir_all(repo.join("configs/benchmark_suites")).unwrap();
    let source = std::fs::read_to_string(fixture.join("bench/test_sort.py")).expect("fixture");
    assert!(
        source.contains("SLOWDOWN = 0.0"),
        "fixture test_sort.py lost its SLOWDOWN knob"
    );
    std::fs::write(repo.join(".gitignore"), "__pycache__/\n.benchmarks/\n").unwrap();
    std::fs::write(
        repo.join("configs/benchmark_suites/pair.yaml"),
        "suite_name: pair\nversion: 1\nworkflow: benchmarks.yml\nartifact_prefix: pair\n\
         default_profile: cpu\nprofiles:\n  cpu:\n    backend: cpu\n    clock: cpu\n    \
         warmup: 5\n    iterations: 10\n    precision_pct: 5\n    budget_s: 10\n    \
         timeout_s: 300\ntargets:\n  - key: py_sort\n    category: cpu\n    \
         target: bench/test_sort.py:py_sort\n    optimization_goal: speed\n    \
         tolerance: { rtol: 0.0, atol: 0.0 }\n    kind: command\n    format: pytest-benchmark\n    \
         command: [python3, -m, pytest, -q, -p, no:cacheprovider, bench, \"--benchmark-json={output}\"]\n    \
         variants: { baseline: test_sort_insertion, optimized: [test_sort_builtin] }\n",
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    let mut commits = Vec::new();
    for i in 0..2 {
        let slowdown = if i == 1 { factor - 1.0 } else { 0.0 };
        let text = source.replace("SLOWDOWN = 0.0", &format!("SLOWDOWN = {slowdown:.4}"));
        std::fs::write(repo.join("bench/test_sort.py"), text).unwrap();
        git(&repo, &["add", "-A"]);
        git(
            &repo,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("commit {i}"),
            ],
        );
        commits.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    synthetic_history::History { tmp, repo, commits }
}

/// The synthetic Python command target of `synthetic_history`, its culprit commit doing `factor`
/// times the work.
fn loop_history(factor: f64) -> synthetic_history::History {
    synthetic_history::create(&Spec {
        commits: 2,
        culprit: (factor != 1.0).then_some(1),
        factor,
        unbuildable: Vec::new(),
        crashing: Vec::new(),
        timed: true,
        noise: 0.0,
    })
}

/// What the trials compare: a target, the suite that holds it, the metrics that decide, and how
/// a two-commit history of it is made.
struct Subject {
    label: &'static str,
    key: &'static str,
    suite_file: &'static str,
    decide_on: DecideOn,
    decides: &'static str,
    /// What the change column means, when it is not the slowdown itself.
    change_note: Option<&'static str>,
    history: fn(f64) -> synthetic_history::History,
}

const LOOP: Subject = Subject {
    label: "loop (protocol command target)",
    key: "loop",
    suite_file: "synthetic.yaml",
    decide_on: DecideOn::OptimizedTime,
    decides: "the optimized time",
    change_note: None,
    history: loop_history,
};

const PY_SORT: Subject = Subject {
    label: "py_sort (pytest-benchmark pair)",
    key: "py_sort",
    suite_file: "pair.yaml",
    decide_on: DecideOn::Both,
    decides: "both metrics",
    change_note: Some(
        "(change: py_sort's SLOWDOWN knob x 100; what it slows: tests/fixtures/adoption/README.md)",
    ),
    history: pytest_pair,
};

fn main() {
    let trials: usize = knob("TIER1_BENCH_TRIALS", 10);
    let subject = match std::env::var("TIER1_BENCH_TARGET") {
        Ok(t) if t == "py_sort" => &PY_SORT,
        _ => &LOOP,
    };
    let budget_s: f64 = knob("TIER1_BENCH_BUDGET_S", 10.0);
    let threshold_pct: f64 = knob("TIER1_BENCH_THRESHOLD_PCT", 5.0);
    println!(
        "confirm: {}, {trials} trials per change, {budget_s} s per comparison, threshold {threshold_pct} %, deciding on {}",
        subject.label, subject.decides
    );
    if let Some(note) = subject.change_note {
        println!("{note}");
    }
    println!("change  worse  same  unknown  mean rounds  mean s  max s");
    for factor in [1.0, 1.05, 1.10, 1.20] {
        let (mut worse, mut same, mut unknown) = (0, 0, 0);
        let (mut rounds, mut secs, mut max_s) = (0u64, 0.0f64, 0.0f64);
        for trial in 0..trials {
            let h = (subject.history)(factor);
            let suite = Suite::load(
                &h.repo
                    .join("configs/benchmark_suites")
                    .join(subject.suite_file),
            )
            .expect("suite");
            let started = Instant::now();
            let o = confirm(&ConfirmRequest {
                suite: &suite,
                profile: "cpu",
                target_key: subject.key,
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
                decide_on: subject.decide_on,
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
