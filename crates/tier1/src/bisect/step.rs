//! One step of a bisection: the candidate compared side by side with the good commit
//! ([`crate::sidebyside::confirm()`]), once more with twice the budget when too noisy, and what
//! the comparison decides ([`next_step`]) as the step's record or the error that stops the
//! bisection.

use super::decide::{Next, Stop, doubled, next_step};
use super::range::Range;
use super::request::{BisectError, BisectRequest};
use crate::bisect::report::Step;
use crate::sidebyside::{self, Budget, ConfirmRequest, Side, SideBySideOutcome, git};
use std::path::Path;

/// A measured step: its record for the report and the builds it made.
pub(crate) struct Measured {
    /// The step as reported.
    pub(crate) step: Step,
    /// Builds made (not reused) by its comparisons.
    pub(crate) builds: u32,
}

/// Compare candidate `commit`, step `n`, with the good commit; its evidence goes under `stage`.
pub(crate) fn measure(
    req: &BisectRequest,
    range: &Range,
    stage: &Path,
    n: u32,
    commit: &str,
) -> Result<Measured, BisectError> {
    let mut rel = format!("steps/{n:02}-{}", &commit[..12]);
    tracing::info!(step = n, commit = %commit, "comparing side by side with the good commit");
    let compare = |rel: &str, budget: Budget| {
        sidebyside::confirm(&ConfirmRequest {
            suite: req.suite,
            profile: req.profile,
            target_key: req.target_key,
            current_commit: commit,
            anchor_commit: &range.good,
            repo_root: &range.repo,
            cache_dir: req.cache_dir,
            evidence_dir: &stage.join(rel),
            budget,
            threshold_pct: req.threshold_pct,
            seed: req.seed,
            decide_on: req.decide_on,
            builder: sidebyside::Builder::Bisect,
            state_dir: None,
            extra_seconds: 0.0,
        })
    };
    let mut out = compare(&rel, req.budget);
    let built = out
        .builds
        .iter()
        .any(|b| b.side == Side::Current && !b.reused);
    let mut builds = new_builds(&out);
    let mut attempts = 1;
    let mark = loop {
        match next_step(out.cause, out.side, out.verdict, attempts) {
            Next::Mark(mark) => break mark,
            Next::Stop(stop) => return Err(stopped(stop, &range.good, out.reason)),
            // Too noisy: measured once more with twice the budget (the builds are cached)
            // before the commit is skipped.
            Next::Again => {
                attempts = 2;
                rel = format!("{rel}-again");
                tracing::info!(step = n, commit = %commit, "too noisy; measuring once more with twice the budget");
                out = compare(&rel, doubled(req.budget));
                builds += new_builds(&out);
            }
        }
    };
    tracing::info!(step = n, commit = %commit, verdict = ?out.verdict, reason = %out.reason, "step done");
    let step = Step {
        step: n,
        commit: commit.to_string(),
        subject: git::subject(&range.repo, commit),
        verdict: out.verdict,
        mark,
        reason: out.reason,
        optimized_time_ratio: out.optimized_time_ratio,
        speedup_ratio: out.speedup_ratio,
        rounds: out.rounds,
        seconds: out.seconds.into(),
        attempts,
        built,
        evidence: rel,
    };
    Ok(Measured { step, builds })
}

/// Builds a comparison made rather than reused.
fn new_builds(o: &SideBySideOutcome) -> u32 {
    u32::try_from(o.builds.iter().filter(|b| !b.reused).count()).unwrap_or(0)
}

/// The error of a stop, with the comparison's reason.
fn stopped(stop: Stop, good: &str, reason: String) -> BisectError {
    match stop {
        Stop::Cancelled => BisectError::Cancelled(reason),
        Stop::Invalid => BisectError::Invalid(reason),
        Stop::GoodUnusable => BisectError::GoodUnusable(format!(
            "the good commit {good} cannot serve as the reference: {reason}"
        )),
    }
}
