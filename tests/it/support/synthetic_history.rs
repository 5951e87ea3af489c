//! A synthetic git history for side-by-side comparisons and bisection: a repository whose one
//! Python command target (`bench.py`) does `work.txt` units of work per execution in both its
//! variants. Commit `i` changes only `notes.txt`, except the culprit, which multiplies the work by
//! a known factor (the change is in a commit, never in the environment), and the unbuildable
//! commits, which make the build step (`build.py`, writing the untracked `built.txt` that
//! `bench.py` requires) fail. The tests use a target that reports samples computed from the work
//! (deterministic: the verdicts do not depend on the machine's load; `noise.txt` adds a
//! per-invocation factor drawn from the commit and the round); `benches/bisect.rs` uses one that
//! times real loops.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The start of both targets: the build must have run; `crash.txt` makes the command fail.
const PRELUDE_PY: &str = r#"import json, os, random, sys, time
if not os.path.exists("built.txt"):
    sys.exit("bench.py: built.txt is missing: the build step did not run in this worktree")
if os.path.exists("crash.txt"):
    sys.exit("bench.py: crashing on purpose (crash.txt)")
work = float(open("work.txt").read())
n = int(json.loads(os.environ.get("TIER1_SHAPES") or "{}").get("n", 20000))
rounds = int(os.environ.get("TIER1_ITERATIONS", "6"))
process = int(os.environ.get("TIER1_PROCESS", "0"))
"#;

/// The end of both targets: print `samples` (baseline, optimized) as the protocol's document.
const PRINT_PY: &str = r#"sig = {"seed": int(os.environ.get("TIER1_SEED", "42")), "inputs": [{"name": "n", "shape": [n], "dtype": "i64"}]}
ver = {"passed": True, "elements": 1, "mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0}
print(json.dumps({"schema": "tier1.command_result.v1", "baseline_file": "bench.py", "variants": [
    {"name": "baseline", "samples_ms": samples[0], "input_signature": sig},
    {"name": "optimized_quarter", "samples_ms": samples[1], "input_signature": sig, "verification": ver}]}))
"#;

/// Samples computed, not timed: `work × n / 10⁴` ms (baseline 4×), times a per-invocation factor
/// `exp(noise × u)` with `u` uniform in [-1, 1] drawn from the commit's notes and the round.
const SYNTHETIC_PY: &str = r#"noise = float(open("noise.txt").read()) if os.path.exists("noise.txt") else 0.0
rng = random.Random(open("notes.txt").read() + "/" + str(process))
factor = 2.718281828459045 ** (noise * (2 * rng.random() - 1))
unit = work * n / 1e4 * factor
samples = [[4 * unit * (1 + 0.001 * (i % 3)) for i in range(rounds)], [unit * (1 + 0.001 * (i % 3)) for i in range(rounds)]]
"#;

/// Timed: both variants loop `work × n` times (the baseline 4× as often), batched to
/// `TIER1_MIN_SAMPLE_MS`, timed once per round in a shuffled order.
const TIMED_PY: &str = r#"def loop(k):
    s = 0
    for i in range(k):
        s += i
    return s
def baseline():
    return loop(int(4 * n * work))
def optimized():
    return loop(int(n * work))
def batch(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) * 1e3
warmup = int(os.environ.get("TIER1_WARMUP", "5"))
min_ms = float(os.environ.get("TIER1_MIN_SAMPLE_MS", "1"))
fns = [baseline, optimized]
reps = []
for fn in fns:
    for _ in range(warmup):
        fn()
    r = 1
    while batch(fn, r) < min_ms and r < 1 << 20:
        r *= 2
    reps.append(r)
samples = [[], []]
rng = random.Random(process)
for _ in range(rounds):
    order = [0, 1]
    rng.shuffle(order)
    for i in order:
        samples[i].append(batch(fns[i], reps[i]) / reps[i])
"#;

/// The command target's source.
pub fn bench_py(timed: bool) -> String {
    let body = if timed { TIMED_PY } else { SYNTHETIC_PY };
    format!("{PRELUDE_PY}{body}{PRINT_PY}")
}

/// The build step: fails when `broken.txt` exists, else writes `built.txt`.
pub const BUILD_PY: &str = r#"import os, sys
if os.path.exists("broken.txt"):
    sys.exit("build.py: this commit does not build (broken.txt)")
open("built.txt", "w").write("built\n")
print("built")
"#;

/// A suite with the one command target `loop`, a `cpu` profile and the build step.
pub fn suite_yaml(n: u64, budget_s: f64) -> String {
    format!(
        "suite_name: synthetic\nversion: 1\ndefault_profile: cpu\nbuild: [python3, build.py]\n\
         profiles:\n  cpu:\n    backend: cpu\n    warmup: 5\n    iterations: 12\n    min_sample_ms: 2.0\n    \
         precision_pct: 1.0\n    budget_s: {budget_s}\n    timeout_s: 60\n\
         targets:\n  - key: loop\n    category: demo\n    target: demo:loop\n    kind: command\n    \
         tolerance: {{ rtol: 0.0, atol: 0.0 }}\n    command: [python3, bench.py]\n    shapes:\n      cpu: {{ n: {n} }}\n"
    )
}

/// What the history looks like.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Commits in all (the first is the good one).
    pub commits: usize,
    /// Index of the commit that multiplies the work (`None`: no change).
    pub culprit: Option<usize>,
    /// The factor.
    pub factor: f64,
    /// Commits whose build fails.
    pub unbuildable: Vec<usize>,
    /// Commits whose command fails.
    pub crashing: Vec<usize>,
    /// Time real loops (benches) instead of computing the samples (tests).
    pub timed: bool,
    /// Amplitude of the per-invocation factor of computed samples (0: none).
    pub noise: f64,
}

/// A repository built from a [`Spec`].
#[derive(Debug)]
pub struct History {
    /// Keeps the directory alive.
    pub tmp: tempfile::TempDir,
    /// The repository.
    pub repo: PathBuf,
    /// Commit ids, oldest first.
    pub commits: Vec<String>,
}

/// `git <args>` in `dir`, panicking with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=tier1",
            "-c",
            "user.email=tier1@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Write the files every commit shares (target, build step, suite, ignore rules, noise) into `dir`.
pub fn write_base(dir: &Path, spec: &Spec) {
    std::fs::create_dir_all(dir.join("configs/benchmark_suites")).unwrap();
    std::fs::write(dir.join("bench.py"), bench_py(spec.timed)).unwrap();
    std::fs::write(dir.join("noise.txt"), format!("{}\n", spec.noise)).unwrap();
    std::fs::write(dir.join("build.py"), BUILD_PY).unwrap();
    std::fs::write(dir.join(".gitignore"), "built.txt\n__pycache__/\n").unwrap();
    std::fs::write(
        dir.join("configs/benchmark_suites/synthetic.yaml"),
        suite_yaml(20000, 20.0),
    )
    .unwrap();
}

/// Write the files of commit `i` (its work, notes and flags) into `dir`; returns its message.
pub fn write_commit(dir: &Path, spec: &Spec, i: usize) -> String {
    let work = match spec.culprit {
        Some(c) if i >= c => spec.factor,
        _ => 1.0,
    };
    std::fs::write(dir.join("work.txt"), format!("{work}\n")).unwrap();
    std::fs::write(dir.join("notes.txt"), format!("commit {i}\n")).unwrap();
    for (flag, on) in [
        ("broken.txt", spec.unbuildable.contains(&i)),
        ("crash.txt", spec.crashing.contains(&i)),
    ] {
        let p = dir.join(flag);
        if on {
            std::fs::write(&p, "yes\n").unwrap();
        } else if p.exists() {
            std::fs::remove_file(&p).unwrap();
        }
    }
    if spec.culprit == Some(i) {
        format!("commit {i}: the culprit (work x{})", spec.factor)
    } else {
        format!("commit {i}")
    }
}

/// Commit `range` of the spec on the repository's current branch; returns the commit ids.
pub fn commit_range(repo: &Path, spec: &Spec, range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| {
            let msg = write_commit(repo, spec, i);
            git(repo, &["add", "-A"]);
            git(repo, &["commit", "-q", "-m", &msg]);
            git(repo, &["rev-parse", "HEAD"])
        })
        .collect()
}

/// Create the history (python3 and git are required).
pub fn create(spec: &Spec) -> History {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    write_base(&repo, spec);
    let commits = commit_range(&repo, spec, 0..spec.commits);
    History { tmp, repo, commits }
}

/// Everything about the repository a comparison must leave untouched: refs, HEAD, worktrees,
/// the checkout's status, and every file under `.git` (path and content).
pub fn state(repo: &Path) -> String {
    // git's own reads first (status may refresh the index's stat data), then the files.
    let asked = format!(
        "{}\n{}\n{}\n{}",
        git(repo, &["for-each-ref"]),
        git(repo, &["rev-parse", "HEAD"]),
        git(repo, &["worktree", "list", "--porcelain"]),
        git(repo, &["status", "--porcelain=v1", "--untracked-files=all"]),
    );
    let mut files = Vec::new();
    let mut stack = vec![repo.join(".git")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(format!("{} {:?}", p.display(), std::fs::read(&p).unwrap()));
            }
        }
    }
    files.sort();
    format!("{asked}\n{}", files.join("\n"))
}
