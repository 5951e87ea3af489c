//! `cargo bench --bench estimators`: which rule turns a run's rounds into its estimates, judged on
//! real samples from this machine. It runs the suite's `cpu` profile `TIER1_ESTIMATOR_RUNS` times
//! (default 8), each run a separate process, alternating the `wall` and `cpu` clocks, every target
//! sampled for its whole budget (`TIER1_ESTIMATOR_BUDGET_S`, default 6 s; precision never
//! reached), then judges the same samples by each estimator:
//!
//! - `clean_rounds`: median of the ratios of the rounds whose both samples are at or below their
//!   variant's median (results schema 2);
//! - `paired_median`: median of every round's ratio, median of every optimized sample (schema 3);
//! - `hodges_lehmann`: median of the Walsh averages of the per-round log ratios;
//! - `low_quantile`: the 25th percentiles of each variant (noise only adds time).
//!
//! For each: the 95 % interval half-width reached after a quarter, half and all of the budget
//! (precision per second of budget) and the run-to-run spread of the estimate across the runs of
//! one clock (standard deviation of its log, percent), side by side, with the ratio to
//! `clean_rounds`. `TIER1_ESTIMATOR_DATA=DIR` judges the results files already under DIR instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use tier1::bench::result::ResultsFile;
use tier1::stats;

#[global_allocator]
static ALLOC: tier1::bench::alloc::CountingAlloc = tier1::bench::alloc::CountingAlloc::new();

const ESTIMATORS: [&str; 4] = [
    "clean_rounds",
    "paired_median",
    "hodges_lehmann",
    "low_quantile",
];

/// (estimate of ln speedup, its 95 % half-width) and (ln optimized time, half-width).
type Est = ((f64, Option<f64>), (f64, Option<f64>));

fn half(lo: f64, mid: f64, hi: f64) -> f64 {
    (hi.ln() - mid.ln()).max(mid.ln() - lo.ln())
}

fn from_pair(e: tier1::bench::estimate::PairEstimate) -> Est {
    (
        (
            e.speedup.ln(),
            e.speedup_ci.map(|(l, h)| half(l, e.speedup, h)),
        ),
        (
            e.optimized_ms.ln(),
            e.optimized_ci.map(|(l, h)| half(l, e.optimized_ms, h)),
        ),
    )
}

fn quantile_ci(xs: &[f64], p: f64) -> (f64, Option<f64>) {
    let mut v: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    v.sort_by(f64::total_cmp);
    let q = stats::percentile(&v, p * 100.0);
    let ci = stats::order::quantile_ci(&v, p, 0.95).map(|c| (c.high - q).max(q - c.low));
    (q, ci)
}

fn estimate(name: &str, b: &[f64], o: &[f64]) -> Option<Est> {
    match name {
        "clean_rounds" => tier1::bench::estimate::pair_clean(b, o).map(from_pair),
        "paired_median" => tier1::bench::estimate::pair(b, o).map(from_pair),
        "hodges_lehmann" => {
            let d: Vec<f64> = b.iter().zip(o).map(|(b, o)| (b / o).ln()).collect();
            let n = d.len();
            let mut w = Vec::with_capacity(n * (n + 1) / 2);
            for i in 0..n {
                for j in i..n {
                    w.push((d[i] + d[j]) / 2.0);
                }
            }
            w.sort_by(f64::total_cmp);
            let m = stats::median(&w)?;
            let nf = n as f64;
            let k = (w.len() as f64 / 2.0
                - 1.96 * (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt())
            .max(0.0) as usize;
            let ci = (k < w.len() / 2).then(|| (w[w.len() - 1 - k] - m).max(m - w[k]));
            let time = quantile_ci(o, 0.5);
            Some(((m, ci), time))
        }
        "low_quantile" => {
            let (qb, cb) = quantile_ci(b, 0.25);
            let (qo, co) = quantile_ci(o, 0.25);
            let ci = cb.zip(co).map(|(x, y)| x.hypot(y));
            Some(((qb - qo, ci), (qo, co)))
        }
        _ => None,
    }
}

/// One run of the suite in this process (the child side): every target for its whole budget.
fn child(out: &Path, clock: &str, budget: &str) {
    let yaml = tier1::suite::EMBEDDED_TIER1_YAML
        .replace("    budget_s: 20\n    pin_cpu: true\n    clock: cpu", &format!("    budget_s: {budget}\n    pin_cpu: true\n    clock: {clock}\n    precision_pct: 0.0001"));
    let suite = tier1::suite::Suite::parse(&yaml, "estimators.yaml").expect("suite");
    let opts = tier1::bench::HarnessOptions::new("cpu", "estimators");
    let r = tier1::bench::run_suite(&suite, std::sync::Arc::new(tier1::bench::CpuBackend), &opts)
        .expect("suite runs");
    std::fs::write(out, serde_json::to_vec(&r).expect("serializes")).expect("writes");
}

fn collect(dir: &Path, runs: usize, budget: &str) -> Vec<(String, PathBuf)> {
    let exe = std::env::current_exe().expect("own path");
    let mut out = Vec::new();
    for i in 0..runs {
        let clock = if i % 2 == 0 { "cpu" } else { "wall" };
        let path = dir.join(format!("run{i:02}_{clock}.json"));
        let st = Command::new(&exe)
            .env("TIER1_ESTIMATOR_CHILD", &path)
            .env("TIER1_ESTIMATOR_CLOCK", clock)
            .env("TIER1_ESTIMATOR_BUDGET_S", budget)
            .status()
            .expect("child starts");
        assert!(st.success(), "run {i} failed");
        eprintln!("run {} of {runs} ({clock} clock) done", i + 1);
        out.push((clock.to_string(), path));
    }
    out
}

fn sd_pct(xs: &[f64]) -> f64 {
    stats::sample_variance(xs).map_or(f64::NAN, |v| v.sqrt() * 100.0)
}

fn median(xs: &[f64]) -> f64 {
    stats::median(xs).unwrap_or(f64::NAN)
}

fn main() {
    if let Ok(out) = std::env::var("TIER1_ESTIMATOR_CHILD") {
        let clock = std::env::var("TIER1_ESTIMATOR_CLOCK").unwrap_or_else(|_| "cpu".into());
        let budget = std::env::var("TIER1_ESTIMATOR_BUDGET_S").unwrap_or_else(|_| "6".into());
        child(Path::new(&out), &clock, &budget);
        return;
    }
    let files: Vec<(String, PathBuf)> = match std::env::var("TIER1_ESTIMATOR_DATA") {
        Ok(dir) => std::fs::read_dir(&dir)
            .expect("data dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let c = if p.to_string_lossy().contains("wall") {
                    "wall"
                } else {
                    "cpu"
                };
                (c.to_string(), p)
            })
            .collect(),
        Err(_) => {
            let runs: usize = std::env::var("TIER1_ESTIMATOR_RUNS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(8);
            let budget = std::env::var("TIER1_ESTIMATOR_BUDGET_S").unwrap_or_else(|_| "6".into());
            let dir = tempfile::tempdir().expect("tempdir").keep();
            eprintln!("samples under {}", dir.display());
            collect(&dir, runs, &budget)
        }
    };
    let mut runs: Vec<(String, ResultsFile)> = files
        .iter()
        .map(|(c, p)| {
            let r: ResultsFile =
                serde_json::from_slice(&std::fs::read(p).expect("read")).expect("results JSON");
            (c.clone(), r)
        })
        .collect();
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    let keys: Vec<String> = runs
        .first()
        .map(|r| r.1.targets.iter().map(|t| t.key.clone()).collect())
        .unwrap_or_default();
    println!(
        "| target | clock | estimator | speedup ±% at 1/4, 1/2, all of the budget | run-to-run SD of speedup (%) | optimized time ±% (all) | run-to-run SD of optimized time (%) |"
    );
    println!("| --- | --- | --- | --- | ---: | ---: | ---: |");
    for key in &keys {
        for clock in ["cpu", "wall"] {
            let mine: Vec<&ResultsFile> =
                runs.iter().filter(|r| r.0 == clock).map(|r| &r.1).collect();
            if mine.is_empty() {
                continue;
            }
            for name in ESTIMATORS {
                let (mut sp, mut ot) = (Vec::new(), Vec::new());
                let mut halves = [Vec::new(), Vec::new(), Vec::new()];
                let mut ohalf = Vec::new();
                for r in &mine {
                    let Some(t) = r.targets.iter().find(|t| &t.key == key) else {
                        continue;
                    };
                    if t.variants.len() < 2 {
                        continue;
                    }
                    let (b, o) = (&t.variants[0].samples_ms, &t.variants[1].samples_ms);
                    for (j, frac) in [0.25, 0.5, 1.0].into_iter().enumerate() {
                        let n = ((b.len() as f64 * frac) as usize).max(6).min(b.len());
                        if let Some(((_, h), _)) = estimate(name, &b[..n], &o[..n]) {
                            halves[j].push(h.unwrap_or(f64::NAN) * 100.0);
                        }
                    }
                    if let Some(((s, _), (ms, h))) = estimate(name, b, o) {
                        sp.push(s);
                        ot.push(ms);
                        ohalf.push(h.unwrap_or(f64::NAN) * 100.0);
                    }
                }
                println!(
                    "| {key} | {clock} | {name} | {:.2}, {:.2}, {:.2} | {:.2} | {:.2} | {:.2} |",
                    median(&halves[0]),
                    median(&halves[1]),
                    median(&halves[2]),
                    sd_pct(&sp),
                    median(&ohalf),
                    sd_pct(&ot)
                );
            }
        }
    }
}
