//! Sharded nights (`cargo bench --bench shards`, docs/performance.md "Sharded nights"):
//!
//! 1. the built-in suite on the `cpu` profile, one night per shard count (`TIER1_BENCH_SHARDS`,
//!    default `1,2,3,6`) with the real `tier1-nightly --shards N` against a local store: its wall
//!    time here (the shards one after another) and each shard job's measuring seconds, from which
//!    the night's wall time on N runners (the slowest shard) and its runner-seconds (every shard)
//!    follow;
//! 2. the combine step at 50 shards (`TIER1_BENCH_COMBINE_SHARDS`, default 50): a synthetic suite of
//!    that many deterministic command targets, measured once as a plan of 50 shard packages (not
//!    timed), then `tier1-shard combine` timed `TIER1_BENCH_REPEAT` times (default 5) on fresh
//!    copies of the candidate history.
//!
//! Prints tables with the load average and the core count beside them.

#[path = "../tests/it/support/command.rs"]
mod command;

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn knob(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn nproc() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn tool(root: &Path, exe: &str) -> Command {
    let mut c = command::scrubbed(exe);
    c.current_dir(root);
    c
}

fn run_json(cmd: &mut Command, what: &str) -> (Value, f64) {
    let (json, secs, _) = run_json_allowing(cmd, what, &[0]);
    (json, secs)
}

/// Run `cmd`, timing it; its exit code must be one of `codes` (a night whose gate fails, exit 1,
/// is still a whole night: measured, combined and recorded). Returns its JSON, seconds and code.
fn run_json_allowing(cmd: &mut Command, what: &str, codes: &[i32]) -> (Value, f64, i32) {
    let t = Instant::now();
    let out = cmd.output().expect(what);
    let secs = t.elapsed().as_secs_f64();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "{what}: exit {code}, expected one of {codes:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (json, secs, code)
}

fn checkout(dir: &Path, suite: Option<&str>) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(".gitignore"), ".tier1/\n").unwrap();
    if let Some(s) = suite {
        std::fs::write(dir.join("suite.yaml"), s).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nightly/fixed_target.py"),
            dir.join("fixed_target.py"),
        )
        .unwrap();
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "bench"]);
}

fn builtin_nights() {
    let counts: Vec<u32> = knob("TIER1_BENCH_SHARDS", "1,2,3,6")
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    checkout(&root, None);
    let nightly = env!("CARGO_BIN_EXE_tier1-nightly");
    println!(
        "built-in suite, profile cpu, nproc {}: bootstrap (one job) ...",
        nproc()
    );
    let (_, boot) = run_json(
        tool(&root, nightly).args(["--store", ".tier1/store", "--profile", "cpu"]),
        "bootstrap night",
    );
    println!("  bootstrap {boot:.1} s (load {})", load());
    println!(
        "shards  wall here s  shards' s (sum)  slowest shard s  overhead s  wall on N runners s  runner-s  gate  load"
    );
    for n in counts {
        // Under load a night's gate may fail on noise (exit 1): the night is still measured and
        // recorded whole, and its times count; the row says which.
        let (json, wall, code) = run_json_allowing(
            tool(&root, nightly).args([
                "--store",
                ".tier1/store",
                "--profile",
                "cpu",
                "--shards",
                &n.to_string(),
            ]),
            "sharded night",
            &[0, 1],
        );
        assert!(
            json["shards"]["jobs"]
                .as_array()
                .is_some_and(|j| j.iter().all(|x| x["result"] == "success")),
            "every shard job succeeded: {json}"
        );
        let secs: Vec<f64> = json["shards"]["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|j| j["seconds"].as_f64())
            .collect();
        let sum: f64 = secs.iter().sum();
        let max = secs.iter().copied().fold(0.0, f64::max);
        let overhead = wall - sum;
        println!(
            "{n:>6}  {wall:>11.1}  {sum:>15.1}  {max:>15.1}  {overhead:>10.1}  {:>19.1}  {:>8.1}  {:>4}  {}",
            overhead + max,
            overhead + sum,
            if code == 0 { "pass" } else { "fail" },
            load()
        );
    }
}

/// A suite of `n` deterministic command targets (the nightly fixture's, fixed samples).
fn synthetic_suite(n: usize) -> String {
    let mut s = String::from(
        "suite_name: tier1\nversion: 1\ndefault_profile: smoke\nside_by_side: off\nprofiles:\n  smoke:\n    backend: cpu\n    warmup: 5\n    iterations: 5\n    budget_s: 1\n    timeout_s: 60\ntargets:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  - key: t{i:02}\n    category: c\n    target: synth/t:t{i:02}\n    optimization_goal: speed\n    tolerance: {{ rtol: 1.0e-3, atol: 1.0e-3 }}\n    kind: command\n    command: [python3, fixed_target.py]\n"
        ));
    }
    s
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn combine_at(n: usize, repeat: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    checkout(&root, Some(&synthetic_suite(n)));
    let nightly = env!("CARGO_BIN_EXE_tier1-nightly");
    let shard = env!("CARGO_BIN_EXE_tier1-shard");
    let restore = env!("CARGO_BIN_EXE_tier1-restore");
    let common = ["--store", ".tier1/store", "--suite-config", "suite.yaml"];
    println!("combine at {n} shards: bootstrap ({n} targets, one job) ...");
    run_json(tool(&root, nightly).args(common), "bootstrap");
    let store = tier1::store::local::LocalStore::open(&root.join(".tier1/store")).unwrap();
    let sha = git(&root, &["rev-parse", "HEAD"]);
    let wf = store
        .create_run(&tier1::store::local::NewRun::new(
            "tier1-nightly.yml",
            "main",
            &sha,
        ))
        .unwrap()
        .id;
    let work = tmp.path().join("work");
    let history = work.join("history");
    run_json(
        tool(&root, restore)
            .args(["--store", "local:.tier1/store", "--branch", "main"])
            .arg("--destination")
            .arg(&history),
        "restore",
    );
    run_json(
        tool(&root, shard)
            .args([
                "plan",
                "--suite-config",
                "suite.yaml",
                "--shards",
                &n.to_string(),
            ])
            .arg("--history-root")
            .arg(&history)
            .arg("--output")
            .arg(work.join("plan.json"))
            .args(["--workflow-run-id", &wf.to_string()]),
        "plan",
    );
    let t = Instant::now();
    let mut bytes = 0u64;
    for k in 1..=n {
        let name = format!("tier1-shard-{wf}-1-{k}");
        let package = work.join(&name);
        run_json(
            tool(&root, shard)
                .args([
                    "run",
                    "--suite-config",
                    "suite.yaml",
                    "--shard",
                    &k.to_string(),
                ])
                .arg("--plan")
                .arg(work.join("plan.json"))
                .arg("--history-root")
                .arg(&history)
                .arg("--evidence-root")
                .arg(work.join(format!("runs-{k}")))
                .arg("--package")
                .arg(&package),
            "shard",
        );
        bytes += std::fs::metadata(&package).unwrap().len();
        store.upload_file(wf, &name, &package, 90).unwrap();
    }
    println!(
        "  {n} shard packages measured and uploaded in {:.1} s ({} KiB in all)",
        t.elapsed().as_secs_f64(),
        bytes / 1024
    );
    let mut times = Vec::new();
    for i in 0..repeat {
        let h = work.join(format!("history-{i}"));
        tier1::fsx::copy_tree(&history, &h).unwrap();
        let (json, secs) = run_json(
            tool(&root, shard)
                .args([
                    "combine",
                    "--suite-config",
                    "suite.yaml",
                    "--store",
                    "local:.tier1/store",
                ])
                .arg("--plan")
                .arg(work.join("plan.json"))
                .arg("--history-root")
                .arg(&h)
                .arg("--evidence-root")
                .arg(work.join(format!("combined-{i}")))
                .arg("--package")
                .arg(work.join(format!("tier1-evidence-{wf}-{i}")))
                .args([
                    "--evidence-artifact-name",
                    &format!("tier1-evidence-{wf}-1"),
                ]),
            "combine",
        );
        assert_eq!(json["recorded"], true, "{json}");
        times.push(secs);
        println!("  combine {i}: {secs:.2} s (load {})", load());
    }
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let max = times.iter().copied().fold(0.0, f64::max);
    println!(
        "combine at {n} shards: median {:.2} s, min {min:.2}, max {max:.2} ({repeat} runs, nproc {}, load {})",
        median(times),
        nproc(),
        load()
    );
}

fn main() {
    let n: usize = knob("TIER1_BENCH_COMBINE_SHARDS", "50")
        .parse()
        .unwrap_or(50);
    let repeat: usize = knob("TIER1_BENCH_REPEAT", "5").parse().unwrap_or(5);
    if knob("TIER1_BENCH_PART", "all") != "combine" {
        builtin_nights();
    }
    if knob("TIER1_BENCH_PART", "all") != "nights" {
        combine_at(n, repeat);
    }
}
