//! A/A side by side on a crowded machine (`cargo bench --locked --bench crowded`, issue 37): how
//! often `tier1::sidebyside` says `worse` when both sides run identical code, beside heavy
//! neighbours that this bench starts itself (CPU spinners on every core and more, plus bursts: a
//! parallel build's worth of short CPU jobs, and writes synced to disk), and what the rounds say
//! about the causes a non-exchangeable pair would have (the position in the round, in place
//! against a worktree).
//!
//! Three arrangements, in turn, as a night makes them:
//! - `cmd in place/worktree`: a Python command target that times real loops with the wall clock
//!   (`tests/it/support/synthetic_history.rs`), current commit = a later commit with identical
//!   code, run in place from the checkout (the night's current side), the anchor's commit from a
//!   worktree of the build cache (issue 37's night: a revert to the anchor's code);
//! - `cmd worktree/worktree`: the same two commits, both from worktrees of the cache;
//! - `built-in, one binary`: a built-in target of this build, both sides this build's
//!   `tier1-run` in place (an unchanged night: the anchor's commit is the current one), the
//!   targets in turn.
//!
//! Per comparison a JSON line goes to `TIER1_CROWDED_LOG` (default
//! `target/crowded/comparisons.jsonl`): verdict, intervals, rounds, the machine's load, and per
//! round the order and both worsenings. The table at the end gives per arrangement the `worse`
//! rate with its one-sided 95 % Clopper-Pearson upper bound, and the position and location
//! effects measured from the rounds.
//!
//! The built-in targets run with the `cpu` profile's settings (pinned to one core, timed by the
//! process's CPU time, as a night) on the `smoke` profile's shapes: the `cpu` shapes cost about
//! 10 s per invocation at a load of 15 on 2 cores. The command target runs with `n = 5000` and
//! 0.5 ms samples (wall clock, as issue 37's hidden target).
//!
//! Knobs: `TIER1_CROWDED_COMPARISONS` (default 210), `TIER1_CROWDED_LOAD` (runnable tasks the
//! spinners keep the machine at, default 3 × the cores; none are added when the machine is already
//! that busy) or `TIER1_CROWDED_HOGS` (a fixed number of spinners instead),
//! `TIER1_CROWDED_BURSTS` (`0` turns the bursts off), `TIER1_BENCH_BUDGET_S`
//! (seconds per comparison, default 20, the cpu profile's target budget),
//! `TIER1_CROWDED_EXTRA_S` (more rounds once when undecided, default the budget: what a night
//! grants when its total budget allows), `TIER1_BENCH_THRESHOLD_PCT` (default 5).

#[path = "neighbours.rs"]
mod neighbours;
#[path = "../tests/it/support/synthetic_history.rs"]
mod synthetic_history;

use neighbours::{Hogs, Neighbours, cores, load_avg};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use synthetic_history::Spec;
use tier1::sidebyside::{
    Budget, ConfirmRequest, DecideOn, InPlace, SideBySideOutcome, Verdict, confirm, confirm_from,
};
use tier1::suite::Suite;

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The arrangements, in turn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Arrangement {
    CmdInPlace,
    CmdWorktrees,
    Builtin,
}

impl Arrangement {
    fn name(self) -> &'static str {
        match self {
            Arrangement::CmdInPlace => "cmd in place/worktree",
            Arrangement::CmdWorktrees => "cmd worktree/worktree",
            Arrangement::Builtin => "built-in, one binary",
        }
    }
}

const ALL: [Arrangement; 3] = [
    Arrangement::CmdInPlace,
    Arrangement::CmdWorktrees,
    Arrangement::Builtin,
];

const BUILTINS: [&str; 4] = [
    "block_scaling",
    "flashattention4_alibi",
    "persistent_decode",
    "gradient_fusion",
];

/// What one comparison gave.
struct Record {
    arrangement: Arrangement,
    verdict: Verdict,
    overloaded: bool,
    /// Per round: (current first, time worsening, speedup worsening).
    rounds: Vec<(bool, f64, f64)>,
}

fn rounds_of(o: &SideBySideOutcome) -> Vec<(bool, f64, f64)> {
    let Some(dir) = &o.evidence_dir else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(Path::new(dir).join("rounds.json")).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v.as_array()
        .map(|rs| {
            rs.iter()
                .filter_map(|r| {
                    let f = |side: &str, k: &str| r[side][k].as_f64();
                    Some((
                        r["first"].as_str()? == "current",
                        (f("current", "optimized_ms")? / f("anchor", "optimized_ms")?).ln(),
                        (f("anchor", "speedup")? / f("current", "speedup")?).ln(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The one-sided upper bound at `conf` of a binomial rate with `k` of `n` (Clopper-Pearson),
/// by bisection on the binomial distribution function.
fn clopper_pearson_upper(k: usize, n: usize, conf: f64) -> f64 {
    if n == 0 || k >= n {
        return 1.0;
    }
    let cdf = |p: f64| -> f64 {
        // P(X <= k) for X ~ Bin(n, p), in log space.
        let (lp, lq) = (p.ln(), (1.0 - p).ln());
        let mut log_c = 0.0f64;
        let mut total = 0.0;
        for i in 0..=k {
            if i > 0 {
                log_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            total += (log_c + i as f64 * lp + (n - i) as f64 * lq).exp();
        }
        total
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid) > 1.0 - conf {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.len() < 2 {
        return (f64::NAN, f64::NAN);
    }
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

fn main() {
    let comparisons: usize = knob("TIER1_CROWDED_COMPARISONS", 210);
    let hogs = match std::env::var("TIER1_CROWDED_HOGS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => Hogs::Fixed(n),
        None => Hogs::Load(knob("TIER1_CROWDED_LOAD", 3.0 * cores() as f64)),
    };
    let bursts = knob("TIER1_CROWDED_BURSTS", 1u8) != 0;
    let budget_s: f64 = knob("TIER1_BENCH_BUDGET_S", 20.0);
    let extra_s: f64 = knob("TIER1_CROWDED_EXTRA_S", budget_s);
    let threshold_pct: f64 = knob("TIER1_BENCH_THRESHOLD_PCT", 5.0);
    let log_path = PathBuf::from(std::env::var("TIER1_CROWDED_LOG").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/crowded/comparisons.jsonl"
        )
        .into()
    }));
    if let Some(p) = log_path.parent() {
        std::fs::create_dir_all(p).expect("log directory");
    }
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .expect("open the log");
    println!(
        "crowded: {comparisons} A/A comparisons, CPU spinners {hogs:?} on {} cores, bursts {}, {budget_s} s per comparison (+{extra_s} s once when undecided), threshold {threshold_pct} %, log {}",
        cores(),
        if bursts { "on" } else { "off" },
        log_path.display()
    );

    // The command target: two commits of identical code (the second changes only notes.txt).
    let spec = Spec {
        commits: 2,
        culprit: None,
        factor: 1.0,
        unbuildable: Vec::new(),
        crashing: Vec::new(),
        timed: true,
        noise: 0.0,
    };
    let h = synthetic_history::create(&spec);
    // The checkout in place is built, as a night's checkout is.
    let built = Command::new("python3")
        .arg("build.py")
        .current_dir(&h.repo)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(built, "python3 build.py in {}", h.repo.display());
    // The commits' suite with shorter samples (the invocations' shapes and timing come from
    // here, not from the worktrees).
    let cmd_suite = Suite::parse(
        &synthetic_history::suite_yaml(5000, budget_s)
            .replace("min_sample_ms: 2.0", "min_sample_ms: 0.5"),
        "synthetic.yaml",
    )
    .expect("suite");
    // The built-in targets: a repository without a suite file (tier1-run then uses the embedded
    // suite) at one commit, both sides this build's tier1-run.
    let plain = h.tmp.path().join("plain");
    std::fs::create_dir_all(&plain).expect("plain repository");
    std::fs::write(plain.join("README"), "A/A\n").expect("README");
    synthetic_history::git(&plain, &["init", "-q"]);
    synthetic_history::git(&plain, &["add", "."]);
    synthetic_history::git(&plain, &["commit", "-q", "-m", "one"]);
    let plain_commit = synthetic_history::git(&plain, &["rev-parse", "HEAD"]);
    let mut builtin_suite = Suite::embedded();
    for t in &mut builtin_suite.targets {
        if let Some(smoke) = t.shapes.get("smoke").cloned() {
            t.shapes.insert("cpu".into(), smoke);
        }
    }
    let tier1_run = PathBuf::from(env!("CARGO_BIN_EXE_tier1-run"));

    let neighbours = Neighbours::start(hogs, bursts);
    // Let the load average catch up with the neighbours.
    std::thread::sleep(Duration::from_secs(20));
    let started = Instant::now();
    let mut records: Vec<Record> = Vec::new();
    for i in 0..comparisons {
        let arrangement = ALL[i % ALL.len()];
        let budget = Budget {
            seconds: budget_s,
            min_rounds: 10,
            max_rounds: 200,
            precision_pct: 1.0,
            confidence: 0.95,
        };
        let evidence = h.tmp.path().join(format!("evidence-{i}"));
        let load_before = load_avg();
        let t = Instant::now();
        let (o, target) = match arrangement {
            Arrangement::CmdInPlace | Arrangement::CmdWorktrees => {
                let req = ConfirmRequest {
                    suite: &cmd_suite,
                    profile: "cpu",
                    target_key: "loop",
                    current_commit: &h.commits[1],
                    anchor_commit: &h.commits[0],
                    repo_root: &h.repo,
                    cache_dir: &h.tmp.path().join("cache"),
                    evidence_dir: &evidence,
                    budget,
                    threshold_pct,
                    seed: 3700 + i as u64,
                    decide_on: DecideOn::Both,
                    extra_seconds: extra_s,
                    builder: tier1::sidebyside::Builder::SideBySide,
                    state_dir: Some(h.tmp.path()),
                };
                let o = if arrangement == Arrangement::CmdInPlace {
                    confirm_from(&req, Some(&InPlace { program: None }))
                } else {
                    confirm(&req)
                };
                (o, "loop")
            }
            Arrangement::Builtin => {
                let key = BUILTINS[(i / ALL.len()) % BUILTINS.len()];
                let req = ConfirmRequest {
                    suite: &builtin_suite,
                    profile: "cpu",
                    target_key: key,
                    current_commit: &plain_commit,
                    anchor_commit: &plain_commit,
                    repo_root: &plain,
                    cache_dir: &h.tmp.path().join("cache"),
                    evidence_dir: &evidence,
                    budget,
                    threshold_pct,
                    seed: 3700 + i as u64,
                    decide_on: DecideOn::Both,
                    extra_seconds: extra_s,
                    builder: tier1::sidebyside::Builder::SideBySide,
                    state_dir: Some(h.tmp.path()),
                };
                let in_place = InPlace {
                    program: Some(tier1_run.clone()),
                };
                (confirm_from(&req, Some(&in_place)), key)
            }
        };
        let seconds = t.elapsed().as_secs_f64();
        let rounds = rounds_of(&o);
        let overloaded = o.machine.is_some_and(|m| m.overloaded());
        let line = json!({
            "i": i,
            "arrangement": arrangement.name(),
            "target": target,
            "verdict": format!("{:?}", o.verdict).to_lowercase(),
            "cause": o.cause.map(|c| format!("{c:?}")),
            "reason": o.reason,
            "rounds": o.rounds,
            "stopped_by": o.stopped_by.map(|s| format!("{s:?}")),
            "seconds": seconds,
            "load_before": load_before,
            "load_after": load_avg(),
            "machine": o.machine,
            "overloaded": overloaded,
            "extra_seconds": o.extra_seconds,
            "time": o.optimized_time_ratio.map(|r| [r.ratio.get(), r.low.get(), r.high.get()]),
            "speedup": serde_json::to_value(&o).map(|v| v["speedup_ratio"].clone()).unwrap_or(Value::Null),
            "per_round": rounds.iter().map(|(c, t, s)| json!([c, t, s])).collect::<Vec<_>>(),
        });
        let _ = writeln!(log, "{line}");
        println!(
            "- {i:>3} {:<22} {target:<22} {:<7} {:>3} rounds {seconds:>5.1} s load {load_before:>5.1}{}",
            arrangement.name(),
            format!("{:?}", o.verdict).to_lowercase(),
            o.rounds,
            if o.verdict == Verdict::Worse {
                format!("  WORSE: {}", o.reason)
            } else if o
                .cause
                .is_some_and(|c| c != tier1::sidebyside::Cause::TooNoisy)
            {
                format!("  ({})", o.reason)
            } else {
                String::new()
            }
        );
        let _ = std::fs::remove_dir_all(&evidence);
        records.push(Record {
            arrangement,
            verdict: o.verdict,
            overloaded,
            rounds,
        });
    }
    drop(neighbours);
    report(&records, started.elapsed().as_secs_f64());
}

fn report(records: &[Record], seconds: f64) {
    println!(
        "\n### A/A side by side beside heavy neighbours ({} comparisons, {seconds:.0} s)\n",
        records.len()
    );
    println!(
        "| arrangement | comparisons | worse | same | unknown | worse rate (95 % upper bound) | overloaded | position effect, time (current first − anchor first) | mean worsening, time | position effect, speedup | mean worsening, speedup |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let pct = |(m, se): (f64, f64)| format!("{:+.2} % ±{:.2}", m * 100.0, se * 100.0);
    let mut rows: Vec<(&str, Vec<&Record>)> = ALL
        .iter()
        .map(|a| {
            (
                a.name(),
                records.iter().filter(|r| r.arrangement == *a).collect(),
            )
        })
        .collect();
    rows.push(("all", records.iter().collect()));
    for (name, rs) in rows {
        let n = rs.len();
        let count = |v: Verdict| rs.iter().filter(|r| r.verdict == v).count();
        let worse = count(Verdict::Worse);
        let all_rounds: Vec<(bool, f64, f64)> = rs.iter().flat_map(|r| r.rounds.clone()).collect();
        let metric = |k: usize| {
            let v = |r: &(bool, f64, f64)| if k == 0 { r.1 } else { r.2 };
            let cf: Vec<f64> = all_rounds.iter().filter(|r| r.0).map(v).collect();
            let af: Vec<f64> = all_rounds.iter().filter(|r| !r.0).map(v).collect();
            let all: Vec<f64> = all_rounds.iter().map(v).collect();
            let (mc, sc) = mean_se(&cf);
            let (ma, sa) = mean_se(&af);
            (
                pct((mc - ma, (sc * sc + sa * sa).sqrt())),
                pct(mean_se(&all)),
            )
        };
        let (pt, mt) = metric(0);
        let (ps, ms) = metric(1);
        println!(
            "| {name} | {n} | {worse} | {} | {} | {:.2} % ({:.2} %) | {} | {pt} | {mt} | {ps} | {ms} |",
            count(Verdict::Same),
            count(Verdict::Unknown),
            worse as f64 / n.max(1) as f64 * 100.0,
            clopper_pearson_upper(worse, n, 0.95) * 100.0,
            rs.iter().filter(|r| r.overloaded).count(),
        );
    }
}
