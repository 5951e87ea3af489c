//! The simulation of `cargo bench --bench integrity`: runs of a six-target suite measured under a
//! noise model, judged by the real code (`bench::result` estimates and precision, `regress`
//! comparison with the noise history, `recheck`), counting false alarms on unchanged code and
//! detections of injected slowdowns, for `detection: reference` against `statistical`.

use std::collections::BTreeMap;
use tier1::bench::result::{
    InputSignature, RESULTS_SCHEMA_VERSION, ResultsFile, Role, Sampling, TargetResult,
    VariantResult, VariantVerification, summarize,
};
use tier1::bench::rng::Rng;
use tier1::bench::stats::Stats;
use tier1::history::model::Summary;
use tier1::recheck::{self, RecheckResult};
use tier1::regress::noise::{HistoryRun, NoiseHistory};
use tier1::suite::{DetectionMethod, Suite, Thresholds};

/// A noise model: run-to-run effects and within-run sample noise.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// Name in the table.
    pub name: &'static str,
    /// Run-to-run standard deviation (log scale) of the common and the differential effect.
    pub tau: f64,
    /// Within-run sample standard deviation (log scale).
    pub sigma: f64,
    /// Linear drift of every sample over a run (fraction at the last round).
    pub drift: f64,
    /// Probability that a sample is stalled.
    pub stall_p: f64,
    /// Stall factor range.
    pub stall: (f64, f64),
}

/// What is measured.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Accepted runs in the history (the anchor is the first).
    pub history: usize,
    /// Rounds between precision checks, minimum and maximum rounds.
    pub min_rounds: usize,
    /// Maximum rounds (the budget).
    pub max_rounds: usize,
}

const TARGETS: usize = 6;
const SPEEDUP: f64 = 4.0;
const OPT_MS: f64 = 5.0;
const PRECISION_PCT: f64 = 1.0;

/// The six-target suite of the simulation.
pub fn suite(method: DetectionMethod) -> Suite {
    let mut yaml = String::from("suite_name: sim\nversion: 1\ntargets:\n");
    for i in 0..TARGETS {
        yaml.push_str(&format!(
            "  - {{ key: t{i}, category: c, target: sim:t{i}, tolerance: {{ rtol: 0.1, atol: 0.1 }} }}\n"
        ));
    }
    let mut s = Suite::parse(&yaml, "sim.yaml").expect("simulation suite");
    s.thresholds = Thresholds {
        detection: method,
        ..Thresholds::default()
    };
    s
}

/// Standard normal deviate (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The effects of one run on one target (shared by its recheck).
#[derive(Debug, Clone, Copy)]
struct RunEffect {
    common: f64,
    differential: f64,
}

fn sample(rng: &mut Rng, m: &Model, ms: f64, round: usize, rounds: usize) -> f64 {
    let mut x = ms * (m.sigma * normal(rng)).exp();
    x *= 1.0 + m.drift * round as f64 / rounds.max(1) as f64;
    if uniform(rng) < m.stall_p {
        x *= m.stall.0 + (m.stall.1 - m.stall.0) * uniform(rng);
    }
    x
}

fn variant(name: &str, role: Role, samples: Vec<f64>) -> VariantResult {
    VariantResult {
        name: name.into(),
        role,
        input_signature: InputSignature {
            seed: 1,
            inputs: vec![],
        },
        stats: Stats::of(&samples).expect("positive samples"),
        samples_ms: samples,
        repetitions: 1,
        memory_peak_bytes: None,
        verification: (role == Role::Optimized).then_some(VariantVerification {
            passed: true,
            elements: 1,
            mismatches: 0,
            max_abs_err: 0.0.into(),
            max_rel_err: 0.0.into(),
            reference: None,
            message: None,
        }),
    }
}

/// Measure one target as the harness does: rounds until the estimates are precise or the
/// maximum is reached.
fn measure(
    rng: &mut Rng,
    m: &Model,
    setup: &Setup,
    e: RunEffect,
    slowdown: f64,
    suite: &Suite,
    i: usize,
) -> TargetResult {
    let opt = OPT_MS * (1.0 + slowdown) * (e.common - e.differential / 2.0).exp();
    let base = OPT_MS * SPEEDUP * (e.common + e.differential / 2.0).exp();
    let (mut b, mut o) = (Vec::new(), Vec::new());
    let mut rounds = 0;
    loop {
        b.push(sample(rng, m, base, rounds, setup.max_rounds));
        o.push(sample(rng, m, opt, rounds, setup.max_rounds));
        rounds += 1;
        if rounds >= setup.max_rounds {
            break;
        }
        if rounds >= setup.min_rounds
            && rounds % 10 == 0
            && tier1::bench::estimate::pair(&b, &o).is_some_and(|p| p.within(PRECISION_PCT))
        {
            break;
        }
    }
    let t = &suite.targets[i];
    let mut r = TargetResult {
        key: t.key.clone(),
        target: t.target.clone(),
        kind: t.kind,
        optimization_goal: t.optimization_goal,
        shapes: BTreeMap::new(),
        tolerance: t.tolerance,
        work: Default::default(),
        baseline_file: None,
        artifacts: Default::default(),
        failure: None,
        min_speedup: None,
        peak_class: None,
        variants: vec![
            variant("baseline", Role::Baseline, b),
            variant("optimized", Role::Optimized, o),
        ],
        sampling: Some(Sampling {
            rounds: rounds as u32,
            processes: 1,
            precision_pct: PRECISION_PCT.into(),
            order_seed: 0,
            budget_exhausted: rounds >= setup.max_rounds,
            remeasured: false,
            throttled: vec![],
            machine: vec![],
            clock: None,
            precision_required: false,
            passes: vec![],
        }),
        status: String::new(),
        message: None,
        metrics: Default::default(),
    };
    r.finalize(suite.thresholds.min_speedup);
    r
}

fn summary(run_id: &str, targets: Vec<TargetResult>, suite: &Suite) -> Summary {
    let file = ResultsFile {
        schema_version: RESULTS_SCHEMA_VERSION,
        run_id: run_id.into(),
        timestamp: "2026-12-02T00:00:00Z".into(),
        suite_name: suite.suite_name.clone(),
        suite_version: suite.version,
        profile: "sim".into(),
        backend: "cpu".into(),
        environment: serde_json::from_value(serde_json::json!({"backend": "cpu"}))
            .expect("environment"),
        seed: 1,
        min_speedup: suite.thresholds.min_speedup.into(),
        warmup: 5,
        iterations: 20,
        max_rounds: None,
        min_sample_ms: None,
        precision_pct: None,
        budget_s: None,
        targets,
    };
    let rows = summarize(&file, suite).expect("simulated results are valid");
    serde_json::from_value(serde_json::json!({
        "suite_name": suite.suite_name, "suite_version": suite.version,
        "run_id": run_id, "generated_at": "2026-12-02T00:00:00Z",
        "summary": tier1::aggregate::compute(&rows), "targets": rows,
    }))
    .expect("summary")
}

fn effects(rng: &mut Rng, m: &Model) -> Vec<RunEffect> {
    (0..TARGETS)
        .map(|_| RunEffect {
            common: m.tau * normal(rng),
            differential: m.tau * normal(rng),
        })
        .collect()
}

/// One whole unchanged run (its summary).
fn unchanged_run(rng: &mut Rng, m: &Model, setup: &Setup, suite: &Suite, id: &str) -> Summary {
    let e = effects(rng, m);
    let targets = (0..TARGETS)
        .map(|i| measure(rng, m, setup, e[i], 0.0, suite, i))
        .collect();
    summary(id, targets, suite)
}

/// The outcome of one simulated night.
#[derive(Debug, Clone, Copy, Default)]
pub struct Night {
    /// The gate failed on a confirmed regression.
    pub alarm: bool,
    /// Target 0 (the slowed one) has a confirmed regression.
    pub detected: bool,
    /// Target 0's verdict is unknown (after its extra measurement).
    pub unknown: bool,
    /// The slowdown (percent) target 0's comparison stated it would catch in 95 % of nights.
    pub detectable_pct: Option<f64>,
}

/// A history of `setup.history` unchanged accepted runs (the first is the anchor).
#[derive(Debug, Clone)]
pub struct History {
    anchor: Summary,
    runs: NoiseHistory,
}

impl History {
    /// The history of replicate `seed` (the same for every method and slowdown).
    pub fn new(seed: u64, m: &Model, setup: &Setup, suite: &Suite) -> History {
        let mut rng = Rng::new(seed, 0x4849);
        let mut runs = Vec::with_capacity(setup.history);
        for h in 0..setup.history.max(1) {
            let id = format!("h{h}");
            let s = unchanged_run(&mut rng, m, setup, suite, &id);
            runs.push(HistoryRun {
                run_id: id,
                segment: "h0".into(),
                summary: s,
            });
        }
        History {
            anchor: runs[0].summary.clone(),
            runs: NoiseHistory { runs },
        }
    }
}

/// One night after `history`: target 0 slowed by `slowdown`, compared with the anchor, each
/// regressed target rechecked (sharing the night's effects: the same machine state), the gate.
pub fn night(
    seed: u64,
    history: &History,
    m: &Model,
    setup: &Setup,
    suite: &Suite,
    slowdown: f64,
) -> Night {
    let mut rng = Rng::new(seed, 0x5151);
    let e = effects(&mut rng, m);
    let slow = |i: usize| if i == 0 { slowdown } else { 0.0 };
    let targets = (0..TARGETS)
        .map(|i| measure(&mut rng, m, setup, e[i], slow(i), suite, i))
        .collect();
    let current = summary("current", targets, suite);
    let th = &suite.thresholds;
    let first = tier1::regress::compare_in(&current, Some(&history.anchor), th, &history.runs)
        .expect("one environment");
    let rechecks: Vec<RecheckResult> = recheck::targets_to_recheck(&first)
        .into_iter()
        .map(|target| {
            let i = suite
                .targets
                .iter()
                .position(|t| t.target == target)
                .expect("suite target");
            let r = measure(&mut rng, m, setup, e[i], slow(i), suite, i);
            let row = summary("recheck", vec![r], suite)
                .targets
                .into_iter()
                .find(|t| t.target == target);
            RecheckResult {
                key: suite.targets[i].key.clone(),
                target,
                recheck_output_json: "x".into(),
                row,
            }
        })
        .collect();
    let out = recheck::apply(
        first,
        &current,
        &history.anchor,
        &rechecks,
        th,
        &history.runs,
    );
    let first = out
        .detection
        .as_ref()
        .and_then(|d| d.target(&suite.targets[0].target));
    Night {
        alarm: !out.regressions.is_empty(),
        detected: out
            .regressions
            .iter()
            .any(|r| r.target() == suite.targets[0].target),
        unknown: first.and_then(|t| t.verdict) == Some(tier1::history::Verdict::Unknown),
        detectable_pct: first.and_then(|t| t.detectable_pct).map(f64::from),
    }
}
