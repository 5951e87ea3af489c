//! [`bisect`]: resolve the good and the bad commit (fetching what a shallow checkout lacks from its
//! remote, [`crate::sidebyside::fetch`]), list the commits between them on the bad
//! commit's first-parent chain, then test candidates ([`crate::bisect::search`]) by comparing each
//! side by side with the good commit ([`crate::sidebyside::confirm()`]): `worse` is bad, `same` is
//! good, `unknown` is skipped. The report and every step's evidence are staged in the output
//! directory and renamed into place only when the search completes.

use crate::bisect::report::{BISECT_SCHEMA, BisectReport, BisectStatus, Step};
use crate::bisect::search::{Mark, Search};
use crate::sidebyside::fetch;
use crate::sidebyside::remote::Access;
use crate::sidebyside::{self, Budget, Cause, ConfirmRequest, DecideOn, Side, Verdict, git};
use crate::suite::Suite;
use std::path::Path;
use std::time::Instant;

/// What to bisect.
#[derive(Debug, Clone)]
pub struct BisectRequest<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// Profile.
    pub profile: &'a str,
    /// The target that changed.
    pub target_key: &'a str,
    /// A commit without the change (the anchor's, or the last accepted night's).
    pub good: &'a str,
    /// A commit with the change (taken as bad; not measured).
    pub bad: &'a str,
    /// The repository.
    pub repo_root: &'a Path,
    /// The build cache.
    pub cache_dir: &'a Path,
    /// Where `bisect.json` and `steps/` go (absent or empty).
    pub output_dir: &'a Path,
    /// Budget of each comparison.
    pub budget: Budget,
    /// Threshold (percent) of each comparison.
    pub threshold_pct: f64,
    /// Seed of the order of the builds in each round.
    pub seed: u64,
    /// Which metrics show the change (both, unless it is a change of one).
    pub decide_on: DecideOn,
}

/// Why a bisection could not complete.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The request is not usable (no repository, unknown commit, good not before bad, unknown
    /// target or profile, bad budget).
    #[error("{0}")]
    Invalid(String),
    /// The good commit cannot be built or run: there is nothing to compare with.
    #[error("{0}")]
    GoodUnusable(String),
    /// The output directory already holds data.
    #[error("{0}")]
    Conflict(String),
    /// Writing the report failed.
    #[error("{0}")]
    Io(String),
    /// SIGINT or SIGTERM arrived.
    #[error("{0}")]
    Cancelled(String),
}

impl crate::exit::Classify for BisectError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        match self {
            BisectError::Invalid(_) => Exit::Invalid,
            BisectError::GoodUnusable(_) => Exit::Unavailable,
            BisectError::Conflict(_) => Exit::Conflict,
            BisectError::Io(_) => Exit::Io,
            BisectError::Cancelled(_) => Exit::Cancelled,
        }
    }
}

impl BisectReport {
    /// The exit code of a completed bisection: 0 with one culprit, 1 when suspects remain.
    pub fn exit(&self) -> crate::exit::Exit {
        match self.status {
            BisectStatus::Found => crate::exit::Exit::Ok,
            BisectStatus::Ambiguous => crate::exit::Exit::Gate,
        }
    }
}

/// Bisect; see the module docs.
pub fn bisect(req: &BisectRequest) -> Result<BisectReport, BisectError> {
    let started = Instant::now();
    let invalid = |m: String| BisectError::Invalid(m);
    if req.suite.target(req.target_key).is_none() {
        return Err(invalid(format!(
            "target {:?} is not in suite {}",
            req.target_key, req.suite.suite_name
        )));
    }
    if req.suite.profile(req.profile).is_none() {
        return Err(invalid(format!(
            "profile {:?} is not in suite {}",
            req.profile, req.suite.suite_name
        )));
    }
    req.budget.check().map_err(invalid)?;
    let repo = git::toplevel(req.repo_root).map_err(|p| invalid(p.message))?;
    // A shallow checkout (GitHub's default depth 1) lacks the good commit and the commits between:
    // fetch what the range needs from the checkout's remote.
    let access = Access::from_env();
    let has_remote = sidebyside::remote::checkout_remote(&repo).is_some();
    for (flag, rev) in [("--good", req.good), ("--bad", req.bad)] {
        if has_remote && git::is_full_commit(rev) {
            fetch::ensure_commit(&repo, rev, &access)
                .map_err(|u| invalid(format!("{flag}: {u}")))?;
        }
    }
    let good = git::resolve(&repo, req.good, None)
        .map_err(|p| invalid(format!("--good: {}", p.message)))?;
    let bad =
        git::resolve(&repo, req.bad, None).map_err(|p| invalid(format!("--bad: {}", p.message)))?;
    fetch::ensure_range(&repo, &good, &bad, &access).map_err(|u| invalid(u.to_string()))?;
    let commits = git::first_parent_range(&repo, &good, &bad)
        .map_err(invalid)?
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            invalid(format!(
                "expected the good commit {good} to be an ancestor of the bad commit {bad} on its \
                 first-parent chain, found {}",
                if good == bad {
                    "the same commit"
                } else {
                    "it is not"
                }
            ))
        })?;
    crate::fsx::stale::tidy_beside(&[req.output_dir]);
    crate::fsx::stale::tidy([req.cache_dir.to_path_buf()]);
    let stage = crate::fsx::StagedDir::new(req.output_dir).map_err(|e| {
        let m = format!(
            "--output-dir {}: expected an absent or empty directory: {e}",
            req.output_dir.display()
        );
        match e.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::InvalidInput => {
                BisectError::Conflict(m)
            }
            _ => BisectError::Io(m),
        }
    })?;
    let mut search = Search::new(commits.len());
    let mut steps: Vec<Step> = Vec::new();
    let mut builds = 0u32;
    while let Some(i) = search.next() {
        let commit = &commits[i];
        let n = u32::try_from(steps.len()).unwrap_or(u32::MAX) + 1;
        let rel = format!("steps/{n:02}-{}", &commit[..12]);
        tracing::info!(step = n, commit = %commit, "comparing side by side with the good commit");
        let compare = |rel: &str, budget: Budget| {
            sidebyside::confirm(&ConfirmRequest {
                suite: req.suite,
                profile: req.profile,
                target_key: req.target_key,
                current_commit: commit,
                anchor_commit: &good,
                repo_root: &repo,
                cache_dir: req.cache_dir,
                evidence_dir: &stage.path().join(rel),
                budget,
                threshold_pct: req.threshold_pct,
                seed: req.seed,
                decide_on: req.decide_on,
                builder: sidebyside::Builder::Bisect,
                state_dir: None,
                extra_seconds: 0.0,
            })
        };
        let new_builds = |o: &sidebyside::SideBySideOutcome| {
            u32::try_from(o.builds.iter().filter(|b| !b.reused).count()).unwrap_or(0)
        };
        let mut out = compare(&rel, req.budget);
        let built = out
            .builds
            .iter()
            .any(|b| b.side == Side::Current && !b.reused);
        builds += new_builds(&out);
        let mut attempts = 1;
        let mut rel = rel;
        // Too noisy: measured once more with twice the budget (the builds are cached) before the
        // commit is skipped.
        if out.cause == Some(Cause::TooNoisy) {
            attempts = 2;
            rel = format!("{rel}-again");
            tracing::info!(step = n, commit = %commit, "too noisy; measuring once more with twice the budget");
            let budget = Budget {
                seconds: 2.0 * req.budget.seconds,
                max_rounds: req.budget.max_rounds.saturating_mul(2),
                ..req.budget
            };
            out = compare(&rel, budget);
            builds += new_builds(&out);
        }
        match (out.cause, out.side) {
            (Some(Cause::Cancelled), _) => return Err(BisectError::Cancelled(out.reason)),
            (Some(Cause::InvalidRequest | Cause::NotARepository | Cause::Evidence), _) => {
                return Err(invalid(out.reason));
            }
            (Some(_), Some(Side::Anchor)) => {
                return Err(BisectError::GoodUnusable(format!(
                    "the good commit {good} cannot serve as the reference: {}",
                    out.reason
                )));
            }
            _ => {}
        }
        let mark = match out.verdict {
            Verdict::Worse => Mark::Bad,
            Verdict::Same => Mark::Good,
            Verdict::Unknown => Mark::Skip,
        };
        tracing::info!(step = n, commit = %commit, verdict = ?out.verdict, reason = %out.reason, "step done");
        search.mark(i, mark);
        steps.push(Step {
            step: n,
            commit: commit.clone(),
            subject: git::subject(&repo, commit),
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
        });
    }
    let suspects: Vec<String> = search
        .suspects()
        .into_iter()
        .map(|i| commits[i].clone())
        .collect();
    let found = suspects.len() == 1;
    let culprit = found.then(|| suspects[0].clone());
    let report = BisectReport {
        schema: BISECT_SCHEMA.into(),
        target: req.target_key.into(),
        profile: req.profile.into(),
        good,
        bad,
        threshold_pct: req.threshold_pct,
        decided_on: req.decide_on,
        commits_in_range: commits.len(),
        status: if found {
            BisectStatus::Found
        } else {
            BisectStatus::Ambiguous
        },
        culprit_subject: culprit.as_ref().map(|c| git::subject(&repo, c)),
        culprit,
        suspects,
        steps,
        builds,
        seconds: started.elapsed().as_secs_f64(),
        output_dir: Some(req.output_dir.display().to_string()),
    };
    let bytes = crate::json::to_pretty(&report, "bisect report")
        .map_err(|e| BisectError::Io(e.to_string()))?;
    let path = stage.path().join("bisect.json");
    crate::fsx::write_atomic(&path, &bytes)
        .map_err(|e| BisectError::Io(format!("{}: {e}", path.display())))?;
    stage.commit().map_err(|e| {
        BisectError::Io(format!(
            "{}: could not move the report into place: {e}",
            req.output_dir.display()
        ))
    })?;
    Ok(report)
}
