//! The rounds of a side-by-side comparison. Each round invokes the current and the anchor build
//! once each, back to back, in a balanced order ([`crate::sidebyside::rounds::Order`]: every pair
//! of rounds has both orders), every invocation a separate process started from its own worktree
//! with the same protocol environment (docs/command-targets.md: same profile, shapes, seed,
//! warm-up and rounds; `TIER1_PROCESS` is the round). Nothing of the parent's own work falls
//! between the two invocations of a round: both results are read, reduced and written as raw
//! evidence after the second one exits. An invocation is one short pass ([`invocation_timing`]):
//! a round keeps only each variant's fastest sample, and its cost is paid twice per round, so
//! rounds, not samples, buy the precision. Each invocation's document is reduced to its best
//! verified variant's speedup and optimized time (from each variant's fastest sample,
//! [`best_verified`]); the two give the round's worsenings, and at the looks of the schedule the
//! intervals may stop the rounds ([`crate::sidebyside::decide`]). Each round records how busy
//! the machine was (load, the invocations' CPU time against their wall time, steal). A
//! comparison whose seconds run out undecided gets more rounds once when its plan grants extra
//! seconds ([`Plan::extra_seconds`], from the night's total budget).

use crate::bench::backend::Shapes;
use crate::bench::command::{CommandOutput, Finished, invoke_in};
use crate::bench::options::{HarnessOptions, Timing};
use crate::sidebyside::decide::{self, MetricState};
use crate::sidebyside::outcome::{Budget, Cause, DecideOn, Problem, Side, Stop, Verdict};
use crate::sidebyside::rounds::{Cost, Order, Readings};
pub(crate) use crate::sidebyside::rounds::{Estimate, Round};
use crate::suite::Target;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Warm-up executions per variant in one invocation (fewer when the profile asks for fewer).
pub(crate) const INVOCATION_WARMUP: u32 = 2;

/// Timed samples per variant in one invocation. Measured on the built-in suite (cpu profile,
/// pinned, 16 processes per target): the fastest of 3 varies 2-4 % between two processes, the
/// fastest of 20 1-2 %, while 20 samples cost 2-4 times the invocation (llama_3_1_8b 3.1 s
/// against 0.8 s): more rounds of short invocations give the tighter interval for the same
/// seconds, and the first look's 10 rounds fit a target's budget (docs/performance.md).
pub(crate) const INVOCATION_SAMPLES: u32 = 3;

/// The timing of one side-by-side invocation from the profile's: [`INVOCATION_WARMUP`] and
/// [`INVOCATION_SAMPLES`], nothing adaptive; the sample length and timeout stay the profile's.
pub(crate) fn invocation_timing(profile: Timing) -> Timing {
    Timing {
        warmup: profile.warmup.min(INVOCATION_WARMUP),
        iterations: INVOCATION_SAMPLES,
        max_rounds: INVOCATION_SAMPLES,
        ..profile
    }
}

/// One build of the pair, ready to invoke.
#[derive(Debug, Clone)]
pub(crate) struct Contender {
    /// Which side.
    pub(crate) side: Side,
    /// The directory its invocations start in (its worktree).
    pub(crate) dir: PathBuf,
    /// The target as invoked: a command target whose argv runs this build.
    pub(crate) target: Target,
}

/// How to measure.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'a> {
    /// The profile's shapes of the target.
    pub(crate) shapes: &'a Shapes,
    /// Profile, seed (the inputs' seed: the same for both builds).
    pub(crate) opts: &'a HarnessOptions,
    /// Warm-up, rounds per invocation, shortest sample, per-invocation timeout.
    pub(crate) timing: Timing,
    /// Seconds and rounds of the comparison, precision, confidence.
    pub budget: Budget,
    /// Seconds of more rounds, granted once to a comparison whose budget ran out undecided
    /// (0: none). The looks and the level of the intervals stay those of the schedule, so the
    /// false-alarm rate stays within the family confidence.
    pub(crate) extra_seconds: f64,
    /// Threshold (percent).
    pub(crate) threshold_pct: f64,
    /// Which metrics decide.
    pub(crate) decide_on: DecideOn,
    /// Seed of the order of the builds in each round.
    pub(crate) order_seed: u64,
    /// Where each invocation's raw document is written (`round-0001-current.json`, ...).
    pub(crate) raw_dir: &'a Path,
}

/// What the rounds gave.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    /// Complete rounds.
    pub(crate) rounds: Vec<Round>,
    /// Seconds spent.
    pub(crate) seconds: f64,
    /// Time and speedup metrics (after at least the minimum rounds).
    pub(crate) metrics: Option<(MetricState, MetricState)>,
    /// The verdict (`Unknown` on a failure).
    pub(crate) verdict: Verdict,
    /// Why the rounds stopped.
    pub(crate) stop: Stop,
    /// Extra seconds the rounds took beyond the budget (0 when not extended).
    pub(crate) extended_s: f64,
    /// The failure that stopped them, if one did.
    pub(crate) failure: Option<Problem>,
}

/// Run rounds until the intervals decide, the precision is reached or the budget is spent.
pub(crate) fn measure(builds: &[Contender; 2], plan: &Plan) -> Measured {
    let started = Instant::now();
    let mut order = Order::new(plan.order_seed);
    let mut budget = plan.budget;
    let mut extended_s = 0.0;
    let mut rounds: Vec<Round> = Vec::new();
    let (mut time, mut speed) = (Vec::new(), Vec::new());
    let mut metrics = None;
    let schedule = decide::looks(plan.budget.min_rounds, plan.budget.max_rounds);
    let level = decide::comparison_level(&plan.budget, plan.decide_on, plan.extra_seconds > 0.0);
    let stop = loop {
        let n = u32::try_from(rounds.len()).unwrap_or(u32::MAX) + 1;
        let round = match one_round(builds, order.first(n), plan, n) {
            Ok(r) => r,
            Err(p) => return failed(rounds, started, metrics, p),
        };
        time.push((round.current.optimized_ms / round.anchor.optimized_ms).ln());
        speed.push((round.anchor.speedup / round.current.speedup).ln());
        tracing::debug!(
            round = n,
            first = round.first.as_str(),
            current_ms = round.current.optimized_ms,
            anchor_ms = round.anchor.optimized_ms,
            load = ?round.machine.load_avg_1m,
            "side-by-side round"
        );
        rounds.push(round);
        if let Some(c) = crate::process::requested() {
            let p = Problem::new(Cause::Cancelled, None, format!("the comparison was {c}"));
            return failed(rounds, started, metrics, p);
        }
        let elapsed = started.elapsed().as_secs_f64();
        let mut spent = budget.spent(n, elapsed);
        if schedule.contains(&n) || spent.is_some() {
            metrics = decide::metric(&time, plan.threshold_pct, level).zip(decide::metric(
                &speed,
                plan.threshold_pct,
                level,
            ));
            if let Some((t, s)) = metrics
                && let Some(stop) =
                    decide::early_stop(&plan.decide_on.select(t, s), plan.budget.precision_pct)
            {
                break stop;
            }
        }
        let undecided = metrics.is_none_or(|(t, s)| {
            decide::final_verdict(&plan.decide_on.select(t, s)) == Verdict::Unknown
        });
        if spent == Some(Stop::BudgetSeconds)
            && undecided
            && extended_s == 0.0
            && plan.extra_seconds > 0.0
        {
            // Undecided when the seconds ran out: more rounds, once.
            extended_s = plan.extra_seconds;
            budget.seconds += plan.extra_seconds;
            tracing::debug!(
                rounds = n,
                extra_s = plan.extra_seconds,
                "side by side undecided when its budget ran out: more rounds, once (the night's budget allows)"
            );
            spent = budget.spent(n, elapsed);
        }
        if let Some(stop) = spent {
            break stop;
        }
    };
    let verdict = metrics.map_or(Verdict::Unknown, |(t, s)| {
        decide::final_verdict(&plan.decide_on.select(t, s))
    });
    Measured {
        rounds,
        seconds: started.elapsed().as_secs_f64(),
        metrics,
        verdict,
        stop,
        extended_s,
        failure: None,
    }
}

fn failed(
    rounds: Vec<Round>,
    started: Instant,
    metrics: Option<(MetricState, MetricState)>,
    p: Problem,
) -> Measured {
    Measured {
        rounds,
        seconds: started.elapsed().as_secs_f64(),
        metrics,
        verdict: Verdict::Unknown,
        stop: Stop::Failure,
        extended_s: 0.0,
        failure: Some(p),
    }
}

/// One round: the build `first` (0 or 1) then the other, back to back; then both results read,
/// kept as raw evidence and reduced.
fn one_round(builds: &[Contender; 2], first: usize, plan: &Plan, n: u32) -> Result<Round, Problem> {
    let readings = Readings::start();
    let a = invoke(&builds[first], plan, n)?;
    let b = invoke(&builds[1 - first], plan, n)?;
    // Each build's invocation, in the order of `builds`; then current and anchor.
    let (of_0, of_1) = if first == 0 { (a, b) } else { (b, a) };
    let (cur, c, a) = if builds[0].side == Side::Current {
        (0, of_0, of_1)
    } else {
        (1, of_1, of_0)
    };
    let machine = readings.finish(c.1, a.1);
    Ok(Round {
        round: n,
        first: builds[first].side,
        current: reduce(&builds[cur], c.0, plan, n)?,
        anchor: reduce(&builds[1 - cur], a.0, plan, n)?,
        machine,
    })
}

/// One invocation of one build, not read yet, with what it cost.
fn invoke(c: &Contender, plan: &Plan, round: u32) -> Result<(Finished, Cost), Problem> {
    let cpu_before = crate::bench::load::children_cpu_s();
    let t = Instant::now();
    let done = invoke_in(
        &c.target,
        plan.shapes,
        plan.opts,
        plan.timing,
        &c.dir,
        round,
    )
    .map_err(|m| {
        Problem::new(
            Cause::CommandFailed,
            Some(c.side),
            format!("{} build, round {round}: {m}", c.side.as_str()),
        )
    })?;
    let wall_s = t.elapsed().as_secs_f64();
    let cpu_s = cpu_before
        .zip(crate::bench::load::children_cpu_s())
        .map(|(a, b)| (b - a).max(0.0));
    Ok((done, Cost { wall_s, cpu_s }))
}

/// Read a finished invocation, keep its raw document, reduce it.
fn reduce(c: &Contender, done: Finished, plan: &Plan, round: u32) -> Result<Estimate, Problem> {
    let fail = |m: String| Problem::new(Cause::CommandFailed, Some(c.side), m);
    let (raw, out) = done
        .read(&c.target, plan.opts.seed)
        .map_err(|m| fail(format!("{} build, round {round}: {m}", c.side.as_str())))?;
    let file = plan
        .raw_dir
        .join(format!("round-{round:04}-{}.json", c.side.as_str()));
    std::fs::write(&file, &raw).map_err(|e| {
        Problem::new(
            Cause::Evidence,
            Some(c.side),
            format!("{}: {e}", file.display()),
        )
    })?;
    best_verified(&out).ok_or_else(|| {
        fail(format!(
            "{} build, round {round}: target {}: no optimized variant passed verification with \
             the baseline's input signature and a positive time (raw result: {})",
            c.side.as_str(),
            c.target.key,
            file.display()
        ))
    })
}

/// The verified optimized variant with the highest speedup (a single benchmark: its one variant,
/// speedup 1), each variant's time its fastest sample: on a shared machine interference only adds
/// time, and the fastest of an invocation's samples varies least from process to process
/// (docs/performance.md, "Side by side").
pub(crate) fn best_verified(out: &CommandOutput) -> Option<Estimate> {
    let fastest = |xs: &[f64]| {
        xs.iter()
            .copied()
            .filter(|x| x.is_finite() && *x > 0.0)
            .min_by(f64::total_cmp)
    };
    let base = out.variants.first()?;
    let base_ms = fastest(&base.samples_ms)?;
    if out.variants.len() == 1 {
        // A single benchmark: its one variant's time is the optimized time; no speedup to lose.
        return Some(Estimate {
            variant: base.name.clone(),
            speedup: 1.0,
            optimized_ms: base_ms,
        });
    }
    out.variants
        .iter()
        .skip(1)
        .filter(|v| v.input_signature == base.input_signature)
        .filter(|v| v.verification.as_ref().is_some_and(|x| x.passed))
        .filter_map(|v| {
            let optimized_ms = fastest(&v.samples_ms)?;
            Some(Estimate {
                variant: v.name.clone(),
                speedup: base_ms / optimized_ms,
                optimized_ms,
            })
        })
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(variants: &str) -> CommandOutput {
        let sig = r#"{"seed": 42, "inputs": [{"name": "a", "shape": [4], "dtype": "f32"}]}"#;
        let text = format!(
            r#"{{"schema": "tier1.command_result.v1", "variants": [{{"name": "baseline", "samples_ms": [9.0, 8.0, 30.0], "input_signature": {sig}}}{variants}]}}"#
        );
        crate::bench::command::parse("t", text.as_bytes()).unwrap()
    }

    fn variant(name: &str, samples: &str, passed: bool, seed: u64) -> String {
        format!(
            r#", {{"name": "{name}", "samples_ms": {samples}, "input_signature": {{"seed": {seed}, "inputs": [{{"name": "a", "shape": [4], "dtype": "f32"}}]}}, "verification": {{"passed": {passed}, "elements": 4, "mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0}}}}"#
        )
    }

    #[test]
    fn an_invocation_is_its_best_verified_variant_by_fastest_samples() {
        let out = doc(&format!(
            "{}{}{}",
            variant("slow", "[4.0, 4.5, 20.0]", true, 42),
            variant("fast", "[2.0, 9.0, 2.5]", true, 42),
            variant("unverified", "[0.5]", false, 42),
        ));
        let e = best_verified(&out).unwrap();
        assert_eq!(
            (e.variant.as_str(), e.speedup, e.optimized_ms),
            ("fast", 4.0, 2.0)
        );
        let other_inputs = doc(&variant("fast", "[1.0]", true, 7));
        assert_eq!(best_verified(&other_inputs), None);
    }

    /// A command target that appends, at its start, how many raw documents the comparison had
    /// written so far to `log`, then prints a fixed document.
    fn logging_target(raw: &Path, log: &Path) -> Target {
        let sig = r#"{"seed": 42, "inputs": [{"name": "a", "shape": [4], "dtype": "f32"}]}"#;
        let ver = r#"{"passed": true, "elements": 4, "mismatches": 0, "max_abs_err": 0.0, "max_rel_err": 0.0}"#;
        let doc = format!(
            r#"{{"schema": "tier1.command_result.v1", "variants": [{{"name": "baseline", "samples_ms": [4.0, 4.1, 4.2], "input_signature": {sig}}}, {{"name": "opt", "samples_ms": [1.0, 1.1, 1.2], "input_signature": {sig}, "verification": {ver}}}]}}"#
        );
        let script = format!(
            "ls '{}' | wc -l >> '{}'; printf '%s' '{doc}'",
            raw.display(),
            log.display()
        );
        let mut t = crate::suite::Suite::embedded().targets[0].clone();
        t.kind = crate::suite::TargetKind::Command;
        t.command = vec!["sh".into(), "-c".into(), script];
        t
    }

    /// Issue 37: the parent wrote the first invocation's raw document between the two
    /// invocations of a round, and drew the order of each round by a coin (the anchor first in 8
    /// of 10 rounds of a night that read identical code worse). Now both invocations run back to
    /// back (every invocation starts with a whole number of rounds written: an even count) and
    /// every pair of rounds has both orders.
    #[test]
    fn a_round_runs_both_builds_back_to_back_and_every_pair_has_both_orders() {
        let tmp = tempfile::tempdir().unwrap();
        let raw = tmp.path().join("raw");
        std::fs::create_dir_all(&raw).unwrap();
        let log = tmp.path().join("log");
        let target = logging_target(&raw, &log);
        let suite = crate::suite::Suite::embedded();
        let profile = suite.profile("cpu").unwrap();
        let builds = [Side::Current, Side::Anchor].map(|side| Contender {
            side,
            dir: tmp.path().to_path_buf(),
            target: target.clone(),
        });
        let opts = HarnessOptions::new("cpu", "test");
        let shapes = Shapes::default();
        for seed in [1u64, 2, 3] {
            std::fs::remove_dir_all(&raw).unwrap();
            std::fs::create_dir_all(&raw).unwrap();
            let _ = std::fs::remove_file(&log);
            let plan = Plan {
                shapes: &shapes,
                opts: &opts,
                timing: invocation_timing(Timing::of_profile(&suite, profile, None, 1)),
                budget: Budget {
                    seconds: 600.0,
                    min_rounds: 10,
                    max_rounds: 10,
                    precision_pct: 0.001,
                    confidence: 0.95,
                },
                extra_seconds: 0.0,
                threshold_pct: 5.0,
                decide_on: DecideOn::Both,
                order_seed: seed,
                raw_dir: &raw,
            };
            let m = measure(&builds, &plan);
            assert!(m.failure.is_none(), "{:?}", m.failure);
            assert_eq!(m.rounds.len(), 10);
            let counts: Vec<usize> = std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .map(|l| l.trim().parse().unwrap())
                .collect();
            assert_eq!(counts.len(), 20);
            assert!(
                counts.iter().all(|c| c % 2 == 0),
                "seed {seed}: raw documents written between the invocations of a round: {counts:?}"
            );
            let firsts: Vec<Side> = m.rounds.iter().map(|r| r.first).collect();
            for pair in firsts.chunks(2) {
                assert_ne!(pair[0], pair[1], "seed {seed}: {firsts:?}");
            }
        }
    }

    /// A single benchmark (one variant, judged on its absolute time: the quickstart's
    /// `bench/encode.py`) was refused as "no optimized variant passed verification", so side by
    /// side could never confirm or clear one; a noisy night's regression of it then stood. Its
    /// one variant's fastest sample is the optimized time, and its speedup is 1 on both sides.
    #[test]
    fn a_single_benchmark_is_its_one_variant() {
        let e = best_verified(&doc("")).unwrap();
        assert_eq!(
            (e.variant.as_str(), e.speedup, e.optimized_ms),
            ("baseline", 1.0, 8.0)
        );
    }
}
