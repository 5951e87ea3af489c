//! The real-run part of `cargo bench --bench integrity` (opt-in: `TIER1_INTEGRITY_REAL_RUNS=N`):
//! the local main job (`tier1::nightly`, what `tier1-nightly` runs) in a scratch git checkout
//! with its own store.
//!
//! 1. Unchanged nights: a bootstrap, then N nights of tier1's own suite on the `cpu` profile
//!    against that one anchor: gate failures, inconclusive targets, per-target speedup CV.
//! 2. Injected slowdowns: a bootstrap and N/2 unchanged nights of a three-target command suite
//!    (tests/fixtures/integrity), then N/2 nights in which one target's optimized work grows by
//!    10 %: how many are caught as a confirmed regression (and whether anything else alarms).

use std::path::{Path, PathBuf};
use tier1::exit::Exit;
use tier1::history::model::Summary;
use tier1::nightly::{self, NightlyRequest};
use tier1::suite::Suite;

pub(crate) fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@localhost")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@localhost")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} in {}", dir.display());
}

/// A scratch checkout holding `suite` as its suite file, committed (runs bind to a clean commit).
fn checkout(suite_yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("scratch directory");
    let root = t.path().to_path_buf();
    std::fs::write(root.join(".gitignore"), ".tier1/\n").expect("write .gitignore");
    std::fs::write(root.join("suite.yaml"), suite_yaml).expect("write the suite");
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "suite"]);
    (t, root)
}

/// The bootstrap night, tried up to three times: an imprecise first measurement is refused as an
/// anchor (docs/regression-model.md §8), which is not what this bench measures.
pub(crate) fn bootstrap(root: &Path) -> (Summary, usize) {
    bootstrap_with(|| match night(root) {
        (Exit::Ok, s) => s,
        _ => None,
    })
}

/// The bootstrap night tried up to three times (an imprecise first measurement is refused as an
/// anchor, docs/regression-model.md §8; not what these benches measure): what the first accepted
/// night gave, and how many nights it took.
pub(crate) fn bootstrap_with<T>(mut try_night: impl FnMut() -> Option<T>) -> (T, usize) {
    for attempt in 1..=3 {
        if let Some(t) = try_night() {
            return (t, attempt);
        }
    }
    panic!("three bootstrap nights in a row were refused as anchors (see the messages above)");
}

/// One night: exit code, run id and the published summary of the run.
pub(crate) fn night(root: &Path) -> (Exit, Option<Summary>) {
    let req = NightlyRequest {
        store_dir: root.join(".tier1/store"),
        suite_config: Some(root.join("suite.yaml")),
        profile: Some("cpu".into()),
        workflow: None,
        artifact_prefix: None,
        repo_root: root.to_path_buf(),
        branch: "main".into(),
        bootstrap: false,
        accept: false,
        note: None,
        requester: None,
        auto_bootstrap: true,
        history_out: Some(root.join(".tier1/history")),
        now: None,
        keep_work: false,
        shards: None,
        runner_class: None,
    };
    let out = nightly::run(&req).expect("the night runs");
    if let Some(f) = &out.failure {
        eprintln!("night {:?}: {f}", out.run_id);
    }
    if let Some(reasons) = out
        .run
        .as_ref()
        .and_then(|r| r["verdict"]["failures"].as_array())
        && !reasons.is_empty()
    {
        eprintln!("night {:?}: gate failed: {reasons:?}", out.run_id);
    }
    let summary = out.run_id.as_ref().and_then(|id| {
        tier1::json::read(&root.join(format!(".tier1/history/{id}/summary.json"))).ok()
    });
    (out.exit, summary)
}

fn regressed_targets(root: &Path, run_id: &str) -> Vec<String> {
    regressions(&detection(root, run_id))
}

/// The targets a regression summary lists as regressions.
pub(crate) fn regressions(reg: &serde_json::Value) -> Vec<String> {
    reg["regressions"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["target"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Which lists of the night's regression summary name `target` (regressions, within noise, ...).
fn where_listed(root: &Path, run_id: &str, target: &str) -> String {
    let reg: serde_json::Value =
        tier1::json::read(&root.join(format!(".tier1/history/{run_id}/regression_summary.json")))
            .unwrap_or_default();
    let lists: Vec<&str> = [
        "regressions",
        "within_noise",
        "anchor_declines",
        "suppressed_regressions",
        "inconclusive",
    ]
    .into_iter()
    .filter(|k| {
        reg[*k].as_array().is_some_and(|rows| {
            rows.iter().any(|r| {
                r["target"].as_str() == Some(target) || r["row"]["target"].as_str() == Some(target)
            })
        })
    })
    .collect();
    if lists.is_empty() {
        "below the thresholds".into()
    } else {
        lists.join(", ")
    }
}

/// The night's per-target detection records and side-by-side checks, as stored.
pub(crate) fn detection(root: &Path, run_id: &str) -> serde_json::Value {
    tier1::json::read(&root.join(format!(".tier1/history/{run_id}/regression_summary.json")))
        .unwrap_or_default()
}

/// What one unchanged night said of each target: verdict, stated detectable change, accepted
/// runs behind the noise estimate, and the side-by-side comparison's verdict when one ran.
#[derive(Default, Clone)]
pub(crate) struct Said {
    pub(crate) verdict: String,
    pub(crate) detectable_pct: Option<f64>,
    pub(crate) noise_runs: u64,
    pub(crate) side_by_side: Option<String>,
}

pub(crate) fn said(reg: &serde_json::Value, target: &str) -> Said {
    let mut out = Said::default();
    if let Some(d) = reg["detection"]["targets"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["target"].as_str() == Some(target)))
    {
        out.verdict = d["verdict"].as_str().unwrap_or("none").to_string();
        out.detectable_pct = d["detectable_pct"].as_f64();
        out.noise_runs = d["noise_runs"].as_u64().unwrap_or(0);
    }
    out.side_by_side = reg["side_by_side"]["checks"].as_array().and_then(|cs| {
        cs.iter()
            .find(|c| c["target"].as_str() == Some(target))
            .and_then(|c| c["verdict"].as_str().map(str::to_string))
    });
    out
}

fn inconclusive(root: &Path, run_id: &str) -> usize {
    let reg: serde_json::Value =
        tier1::json::read(&root.join(format!(".tier1/history/{run_id}/regression_summary.json")))
            .unwrap_or_default();
    reg["inconclusive"].as_array().map_or(0, Vec::len)
}

fn cv(xs: &[f64]) -> f64 {
    let m = tier1::stats::mean(xs).unwrap_or(f64::NAN);
    tier1::stats::sample_variance(xs).map_or(f64::NAN, |v| v.sqrt() / m * 100.0)
}

pub(crate) fn unchanged_nights(n: usize) {
    let yaml = tier1::suite::EMBEDDED_TIER1_YAML;
    let suite = Suite::parse(yaml, "tier1.yaml").expect("embedded suite");
    let (_t, root) = checkout(yaml);
    let t0 = std::time::Instant::now();
    let (anchor, attempts) = bootstrap(&root);
    let (mut failures, mut inconclusive_targets) = (0, 0);
    let mut speedups: Vec<Vec<f64>> = vec![Vec::new(); suite.targets.len()];
    let mut saids: Vec<Vec<Said>> = vec![Vec::new(); suite.targets.len()];
    let mut walls = Vec::new();
    for _ in 0..n {
        let t = std::time::Instant::now();
        let (exit, s) = night(&root);
        walls.push(t.elapsed().as_secs_f64());
        failures += usize::from(exit != Exit::Ok);
        if let Some(s) = s {
            inconclusive_targets += inconclusive(&root, &s.run_id);
            let reg = detection(&root, &s.run_id);
            for (i, t) in s.targets.iter().enumerate() {
                saids[i].push(said(&reg, &t.target));
                if let Some(x) = t.best_speedup {
                    speedups[i].push(x.get());
                }
            }
        }
    }
    walls.sort_by(f64::total_cmp);
    println!(
        "\n### Real unchanged nights: {n} `tier1-nightly` runs of the cpu profile against one anchor ({:.0} s in all; a night {:.1} s median, {:.1}-{:.1} s)\n",
        t0.elapsed().as_secs_f64(),
        walls[walls.len() / 2],
        walls[0],
        walls[walls.len() - 1]
    );
    println!(
        "- bootstrap nights needed: {attempts}; gate failures: {failures} of {n}; inconclusive targets: {inconclusive_targets} of {}",
        n * suite.targets.len()
    );
    println!("\n| target | anchor speedup | median speedup | min | max | run-to-run CV |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (i, t) in suite.targets.iter().enumerate() {
        let xs = &speedups[i];
        let med = tier1::stats::median(xs).unwrap_or(f64::NAN);
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(*x), b.max(*x))
            });
        println!(
            "| {} | {:.3} | {med:.3} | {lo:.3} | {hi:.3} | {:.2} % |",
            t.key,
            anchor.targets[i].best_speedup.map_or(f64::NAN, f64::from),
            cv(xs)
        );
    }
    verdict_table(&suite, &saids);
}

/// Per target: the verdicts of the unchanged nights, side by side's verdicts, and the stated
/// detectable change (median and range) over all nights and over the nights whose noise estimate
/// rested on at least 10 accepted runs.
fn verdict_table(suite: &Suite, saids: &[Vec<Said>]) {
    println!(
        "\n| target | verdicts (regressed/improved/unchanged/unknown) | side by side (worse/same/unknown) | detectable, all nights (median, min-max) | detectable, nights with >= 10 accepted runs (n, median) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let pct = |xs: &mut Vec<f64>| -> String {
        xs.sort_by(f64::total_cmp);
        match (xs.first(), xs.last()) {
            (Some(lo), Some(hi)) => format!(
                "{:.1} % ({lo:.1}-{hi:.1})",
                tier1::stats::median(xs).unwrap_or(f64::NAN)
            ),
            _ => "-".into(),
        }
    };
    for (i, t) in suite.targets.iter().enumerate() {
        let ss = &saids[i];
        let count = |v: &str| ss.iter().filter(|s| s.verdict == v).count();
        let sbs = |v: &str| {
            ss.iter()
                .filter(|s| s.side_by_side.as_deref() == Some(v))
                .count()
        };
        let mut all: Vec<f64> = ss.iter().filter_map(|s| s.detectable_pct).collect();
        let mut mature: Vec<f64> = ss
            .iter()
            .filter(|s| s.noise_runs >= 10)
            .filter_map(|s| s.detectable_pct)
            .collect();
        let n_mature = mature.len();
        println!(
            "| {} | {}/{}/{}/{} | {}/{}/{} | {} | {n_mature}, {} |",
            t.key,
            count("regressed"),
            count("improved"),
            count("unchanged"),
            count("unknown"),
            sbs("worse"),
            sbs("same"),
            sbs("unknown"),
            pct(&mut all),
            pct(&mut mature),
        );
    }
}

pub(crate) fn slowdown_nights(n: usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity");
    let script = dir.join("slowdown_target.py");
    let yaml = std::fs::read_to_string(dir.join("suite.yaml"))
        .expect("integrity suite")
        .replace(
            "[python3, slowdown_target.py]",
            &format!("[python3, {:?}]", script.display().to_string()),
        );
    let suite = Suite::parse(&yaml, "integrity/suite.yaml").expect("integrity suite");
    let (_t, root) = checkout(&yaml);
    let (anchor, attempts) = bootstrap(&root);
    println!(
        "\n(command suite: bootstrap nights needed: {attempts}; anchor {} speedup {:.4})",
        anchor.targets[0].target,
        anchor.targets[0].best_speedup.map_or(f64::NAN, f64::from)
    );
    let history = (n / 2).max(1);
    let mut unchanged_failures = 0;
    for _ in 0..history {
        unchanged_failures += usize::from(night(&root).0 != Exit::Ok);
    }
    let slowed = suite.targets[0].target.clone();
    // The change under test, committed: target 0's optimized work grows by 10 % (its command
    // gets the flag).
    let cmd = format!("[python3, {:?}]", script.display().to_string());
    let slow_yaml = yaml.replacen(
        &cmd,
        &format!(
            "[python3, {:?}, \"--slowdown=0.10\"]",
            script.display().to_string()
        ),
        1,
    );
    assert_ne!(slow_yaml, yaml, "the slowdown reaches target 0's command");
    std::fs::write(root.join("suite.yaml"), &slow_yaml).expect("write the slowed suite");
    git(
        &root,
        &["commit", "-q", "-am", "slow down target 0 by 10 %"],
    );
    let (mut caught, mut other) = (0, 0);
    let nights = (n / 2).max(1);
    for _ in 0..nights {
        let (_, s) = night(&root);
        if let Some(s) = s {
            let reg = regressed_targets(&root, &s.run_id);
            println!(
                "- night {}: {} speedup {:.4} ({}), {}",
                s.run_id,
                suite.targets[0].key,
                s.targets[0].best_speedup.map_or(f64::NAN, f64::from),
                where_listed(&root, &s.run_id, &slowed),
                if reg.is_empty() {
                    "no regression".to_string()
                } else {
                    format!("regressed: {reg:?}")
                }
            );
            caught += usize::from(reg.contains(&slowed));
            other += usize::from(reg.iter().any(|t| *t != slowed));
        }
    }
    println!(
        "\n### Real injected slowdowns: command suite of 3 targets, {history} unchanged nights of history (gate failures: {unchanged_failures}), then {nights} nights with `{}`'s optimized work +10 %\n",
        suite.targets[0].key
    );
    println!(
        "- caught as a confirmed regression: {caught} of {nights}; nights with another target regressed: {other}"
    );
}
