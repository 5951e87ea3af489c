//! The rounds of a side-by-side comparison. Each round invokes the current and the anchor build
//! once each, in an order drawn from a seeded generator, every invocation a separate process
//! started from its own worktree with the same protocol environment (docs/command-targets.md:
//! same profile, shapes, seed, warm-up and rounds; `TIER1_PROCESS` is the round). An invocation
//! is one short pass ([`invocation_timing`]): a round keeps only each variant's fastest sample,
//! and its cost is paid twice per round, so rounds, not samples, buy the precision. Each
//! invocation's document is kept as raw evidence and reduced to its best verified variant's
//! speedup and optimized time (from each variant's fastest sample, [`best_verified`]); the two
//! give the round's worsenings, and at the looks of the schedule the intervals may stop the
//! rounds ([`crate::sidebyside::decide`]).

use crate::bench::backend::Shapes;
use crate::bench::command::{CommandOutput, invoke_in};
use crate::bench::options::{HarnessOptions, Timing};
use crate::bench::rng::Rng;
use crate::sidebyside::decide::{self, MetricState};
use crate::sidebyside::outcome::{Budget, Cause, DecideOn, Problem, Side, Stop, Verdict};
use crate::suite::Target;
use serde::Serialize;
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
    /// Threshold (percent).
    pub(crate) threshold_pct: f64,
    /// Which metrics decide.
    pub(crate) decide_on: DecideOn,
    /// Seed of the order of the builds in each round.
    pub(crate) order_seed: u64,
    /// Where each invocation's raw document is written (`round-0001-current.json`, ...).
    pub(crate) raw_dir: &'a Path,
}

/// One invocation reduced to its best verified variant (fastest samples).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Estimate {
    /// The variant.
    pub(crate) variant: String,
    /// Its speedup over the baseline (fastest baseline sample / fastest of its samples).
    pub(crate) speedup: f64,
    /// Its fastest sample (ms).
    pub(crate) optimized_ms: f64,
}

/// One round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Round {
    /// 1-based.
    pub(crate) round: u32,
    /// The build invoked first.
    pub(crate) first: Side,
    /// The current build's estimate.
    pub(crate) current: Estimate,
    /// The anchor build's estimate.
    pub(crate) anchor: Estimate,
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
    /// The failure that stopped them, if one did.
    pub(crate) failure: Option<Problem>,
}

/// Run rounds until the intervals decide, the precision is reached or the budget is spent.
pub(crate) fn measure(builds: &[Contender; 2], plan: &Plan) -> Measured {
    let started = Instant::now();
    let mut rng = Rng::new(plan.order_seed, 0x7369_6465_6279_7369);
    let mut rounds: Vec<Round> = Vec::new();
    let (mut time, mut speed) = (Vec::new(), Vec::new());
    let mut metrics = None;
    let schedule = decide::looks(plan.budget.min_rounds, plan.budget.max_rounds);
    let deciding = plan.decide_on.select((), ()).len();
    let level = decide::interval_level(plan.budget.confidence, schedule.len(), deciding);
    let stop = loop {
        let n = u32::try_from(rounds.len()).unwrap_or(u32::MAX) + 1;
        let first = rng.below(2) as usize;
        let one = match invoke(&builds[first], plan, n) {
            Ok(e) => e,
            Err(p) => return failed(rounds, started, metrics, p),
        };
        let other = match invoke(&builds[1 - first], plan, n) {
            Ok(e) => e,
            Err(p) => return failed(rounds, started, metrics, p),
        };
        let (a, b) = if first == 0 {
            (one, other)
        } else {
            (other, one)
        };
        let (current, anchor) = if builds[0].side == Side::Current {
            (a, b)
        } else {
            (b, a)
        };
        time.push((current.optimized_ms / anchor.optimized_ms).ln());
        speed.push((anchor.speedup / current.speedup).ln());
        rounds.push(Round {
            round: n,
            first: builds[first].side,
            current,
            anchor,
        });
        if let Some(c) = crate::process::requested() {
            let p = Problem::new(Cause::Cancelled, None, format!("the comparison was {c}"));
            return failed(rounds, started, metrics, p);
        }
        let spent = plan.budget.spent(n, started.elapsed().as_secs_f64());
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
        failure: Some(p),
    }
}

/// One invocation of one build: run it, keep its raw document, reduce it.
fn invoke(c: &Contender, plan: &Plan, round: u32) -> Result<Estimate, Problem> {
    let fail = |m: String| Problem::new(Cause::CommandFailed, Some(c.side), m);
    let (raw, out) = invoke_in(
        &c.target,
        plan.shapes,
        plan.opts,
        plan.timing,
        &c.dir,
        round,
    )
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
