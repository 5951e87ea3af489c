//! The night's side-by-side confirmation: each suspected target (not rechecked first when side
//! by side runs, [`crate::run`]'s `confirm_night`)
//! ([`crate::confirmation::suspected`]) is measured side by side with the anchor's own code
//! ([`crate::sidebyside::confirm_from`]: the checkout in place as the current build, the anchor's
//! commit from the build cache; both sides in place when the anchor's commit is the current one),
//! under the target's own budget and threshold, the evidence under `<run_id>/sidebyside/<key>/`.
//! Whether it runs (`side_by_side: auto | off`, the anchor's commit reachable, a clean checkout)
//! and why is recorded in the block either way. A built-in target's current side is the running
//! binary when it is proven to be the checkout's build ([`crate::sidebyside::running`]), so a
//! night at the anchor's commit builds nothing. A comparison still undecided when its budget
//! runs out gets more rounds once, up to its budget again, from what the night's total budget
//! has left ([`NightBudget`]).

use crate::bench::harness::HarnessError;
use crate::confirmation::Suspect;
use crate::history::model::Summary;
use crate::history::{SbsRatio, SbsVerdict, SideBySideBlock, SideBySideCheck};
use crate::run::RunRequest;
use crate::sidebyside::{self, Budget, ConfirmRequest, DecideOn, InPlace, RatioCi, Verdict};
use crate::suite::{SideBySideSetting, TargetKind};

/// The directory under a run's evidence that holds its side-by-side comparisons.
pub(crate) const EVIDENCE_SUBDIR: &str = "sidebyside";

/// Whether side by side can run for a night against `anchor` ([`usable`], checked once a night
/// has a suspect: it may fetch the anchor's commit): Ok(true) when the anchor's commit had to be
/// fetched first, Ok(false) when it was there, else why not.
pub(crate) struct Availability(Result<bool, Off>);

impl Availability {
    /// Check it for `req` against `anchor`.
    pub(crate) fn of(req: &RunRequest<'_>, anchor: &Summary) -> Availability {
        Availability(usable(req, anchor, anchor.source_git_commit.as_deref()))
    }

    /// Whether the suspects will be compared side by side (then a recheck of them would only
    /// repeat what the comparison decides: they are not rechecked, docs/regression-model.md §3).
    pub(crate) fn runs(&self) -> bool {
        self.0.is_ok()
    }
}

/// The block of a night with `suspects` (None when nothing is suspected), side by side as
/// `available` says. SIGINT or SIGTERM during a comparison ends the run (nothing is written to
/// the history).
pub(crate) fn confirm_suspects(
    req: &RunRequest<'_>,
    suspects: &[Suspect],
    anchor: &Summary,
    night: &NightBudget,
    available: &Availability,
) -> Result<Option<SideBySideBlock>, HarnessError> {
    if suspects.is_empty() {
        return Ok(None);
    }
    let anchor_commit = anchor.source_git_commit.clone();
    let current_commit = req.git.commit.clone();
    let mut block = SideBySideBlock {
        enabled: false,
        reason: String::new(),
        warning: None,
        anchor_commit: anchor_commit.clone(),
        current_commit: current_commit.clone(),
        checks: Vec::new(),
    };
    let fetched = match &available.0 {
        Ok(fetched) => *fetched,
        Err(Off::Chosen(why)) => {
            tracing::info!("side by side is off: {why}");
            block.reason.clone_from(why);
            return Ok(Some(block));
        }
        Err(Off::Unable { reason, remedy }) => {
            let warning = crate::text::for_humans(&format!(
                "side by side did not run: {reason}; remedy: {remedy}. The suspected targets were \
                 decided by the history test alone."
            ))
            .into_owned();
            tracing::warn!("{warning}");
            crate::gha::warning(&warning);
            block.reason = crate::text::for_humans(&format!("off: {reason}")).into_owned();
            block.warning = Some(warning);
            return Ok(Some(block));
        }
    };
    let (Some(anc), Some(cur)) = (anchor_commit, current_commit) else {
        return Ok(Some(block));
    };
    block.enabled = true;
    block.reason = if anc == cur {
        format!("on: the anchor's commit {anc} is the current one; both sides are this build")
    } else if fetched {
        format!(
            "on: anchor commit {anc} (fetched alone from the checkout's remote) against current \
             commit {cur}"
        )
    } else {
        format!("on: anchor commit {anc} against current commit {cur}")
    };
    let budgets: Vec<f64> = suspects.iter().map(|s| budget_of(req, s)).collect();
    let night = NightBudget {
        total_s: night.total_s + budgets.iter().sum::<f64>(),
        ..*night
    };
    for (i, s) in suspects.iter().enumerate() {
        let extra = night.extra_for(budgets[i], budgets[i + 1..].iter().sum());
        if let Some(c) = check(req, s, &cur, &anc, extra) {
            if let Some(signal) = crate::process::requested()
                && c.cause.as_deref() == Some("cancelled")
            {
                return Err(HarnessError::Cancelled(signal, c.key));
            }
            block.checks.push(c);
        }
    }
    Ok(Some(block))
}

/// The operator's switch: `off` turns side by side off for one run without editing the suite.
pub(crate) const OFF_SWITCH: &str = "TIER1_SIDE_BY_SIDE";

/// Why side by side does not run for a night.
enum Off {
    /// Turned off on purpose (the suite, the operator's switch): the reason.
    Chosen(String),
    /// It should run but cannot: a warning wherever the night is read.
    Unable {
        /// What is missing or failed.
        reason: String,
        /// What the maintainer can do about it.
        remedy: String,
    },
}

fn unable(reason: String, remedy: &str) -> Off {
    Off::Unable {
        reason,
        remedy: remedy.to_string(),
    }
}

/// Whether side by side can run for this night: Ok(true) when the anchor's commit had to be
/// fetched from the checkout's remote first (a shallow checkout), Ok(false) when it was there.
fn usable(req: &RunRequest<'_>, anchor: &Summary, commit: Option<&str>) -> Result<bool, Off> {
    if req.suite.side_by_side_for(&req.profile) == SideBySideSetting::Off {
        return Err(Off::Chosen(format!(
            "off: side_by_side is off for profile {:?} in the suite",
            req.profile
        )));
    }
    if std::env::var(OFF_SWITCH).is_ok_and(|v| v == "off") {
        return Err(Off::Chosen(format!(
            "off: {OFF_SWITCH}=off in the environment"
        )));
    }
    let Some(commit) = commit else {
        return Err(unable(
            format!("the anchor {} records no git commit", anchor.run_id),
            "accept an anchor measured in the repository's git checkout",
        ));
    };
    if anchor.source_git_dirty == Some(true) {
        return Err(unable(
            format!(
                "the anchor {} was measured on a checkout with local changes",
                anchor.run_id
            ),
            "accept an anchor measured on a clean checkout",
        ));
    }
    if req.git.commit.is_none() || req.git.dirty != Some(false) {
        return Err(unable(
            format!(
                "the checkout {} is not a clean git checkout",
                req.repo_root.display()
            ),
            "run the night in a git checkout without local changes",
        ));
    }
    let repo = sidebyside::git::toplevel(&req.repo_root)
        .map_err(|p| unable(p.to_string(), "run the night in a git checkout"))?;
    let access = sidebyside::remote::Access::from_env();
    let fetched = sidebyside::fetch::ensure_commit(&repo, commit, &access).map_err(|u| {
        unable(
            format!("the anchor's commit is not reachable: {}", u.reason),
            &u.remedy,
        )
    })?;
    sidebyside::git::resolve(&repo, commit, None).map_err(|p| {
        unable(
            format!("the anchor's commit is not reachable: {p}"),
            "check out with `fetch-depth: 0`",
        )
    })?;
    Ok(fetched)
}

/// The night's total budget of measuring: the suite's targets' `budget_s` (its measurement) plus
/// each suspected target's (its comparison), counted from the run's start. A comparison
/// undecided when its own budget runs out may take more rounds once, up to its budget again, with
/// what is left after reserving the budgets of the comparisons still to come: a night never takes
/// longer than its total budget for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NightBudget {
    /// When the run started.
    pub(crate) started: std::time::Instant,
    /// Seconds in all: the suite's measurement (every target's `budget_s`), plus the
    /// comparisons' budgets once the suspects are known.
    pub(crate) total_s: f64,
}

/// Below this many seconds, more rounds are not worth starting.
const MIN_EXTRA_S: f64 = 1.0;

impl NightBudget {
    /// The night of `req`, started now.
    pub(crate) fn start(req: &RunRequest<'_>) -> NightBudget {
        let total_s = req.suite.profile(&req.profile).map_or(0.0, |p| {
            req.suite
                .targets
                .iter()
                .map(|t| req.suite.settings_for(p, t).budget_s)
                .sum()
        });
        NightBudget {
            started: std::time::Instant::now(),
            total_s,
        }
    }

    /// The extra seconds a comparison of `budget_s` starting now may take when undecided, with
    /// `reserved_s` still to come for later comparisons (0: none).
    pub(crate) fn extra_for(&self, budget_s: f64, reserved_s: f64) -> f64 {
        self.extra_at(self.started.elapsed().as_secs_f64(), budget_s, reserved_s)
    }

    fn extra_at(&self, elapsed_s: f64, budget_s: f64, reserved_s: f64) -> f64 {
        let left = self.total_s - elapsed_s - budget_s - reserved_s;
        let extra = left.min(budget_s);
        if extra >= MIN_EXTRA_S { extra } else { 0.0 }
    }
}

/// The comparison budget of a suspected target (its `budget_s`).
fn budget_of(req: &RunRequest<'_>, s: &Suspect) -> f64 {
    let target = req.suite.targets.iter().find(|t| t.target == s.target);
    match (target, req.suite.profile(&req.profile)) {
        (Some(t), Some(p)) => req.suite.settings_for(p, t).budget_s,
        _ => 0.0,
    }
}

/// One suspected target compared side by side.
fn check(
    req: &RunRequest<'_>,
    s: &Suspect,
    cur: &str,
    anc: &str,
    extra_seconds: f64,
) -> Option<SideBySideCheck> {
    let target = req.suite.targets.iter().find(|t| t.target == s.target)?;
    let profile = req.suite.profile(&req.profile)?;
    let settings = req.suite.settings_for(profile, target);
    let th = req.suite.thresholds_for(&target.target);
    let threshold_pct = th
        .speedup_regression_pct
        .min(th.optimized_latency_regression_pct);
    // Absolute paths: git and the builds run in other directories.
    let repo = sidebyside::git::toplevel(&req.repo_root).ok()?;
    let evidence_dir =
        std::path::absolute(req.evidence_root.join(&req.run_id).join(EVIDENCE_SUBDIR)).ok()?;
    let cache_dir = sidebyside::default_cache_dir(&repo);
    let decide_on = DecideOn::parse(s.decide_on).unwrap_or_default();
    let in_place = InPlace {
        program: (target.kind == TargetKind::Builtin)
            .then(|| running_build(req))
            .flatten(),
    };
    crate::gha::group(&format!("Side by side {}", target.key));
    tracing::debug!(target = %target.key, anchor = %anc, "suspected ({}): measuring it side by side with the anchor's own code", s.suspected_as);
    let o = sidebyside::confirm_from(
        &ConfirmRequest {
            suite: req.suite,
            profile: &req.profile,
            target_key: &target.key,
            current_commit: cur,
            anchor_commit: anc,
            repo_root: &repo,
            cache_dir: &cache_dir,
            evidence_dir: &evidence_dir,
            budget: Budget::for_settings(&settings),
            threshold_pct,
            seed: seed_of(&req.run_id, &target.key),
            decide_on,
            builder: sidebyside::Builder::SideBySide,
            state_dir: None,
            extra_seconds,
        },
        Some(&in_place),
    );
    crate::gha::endgroup();
    tracing::info!(target = %target.key, verdict = ?o.verdict, "side by side: {}", o.reason);
    let ratio = |r: Option<RatioCi>| {
        r.map(|r| SbsRatio {
            ratio: r.ratio,
            low: r.low,
            high: r.high,
        })
    };
    Some(SideBySideCheck {
        target: target.target.clone(),
        key: target.key.clone(),
        suspected_as: s.suspected_as.into(),
        verdict: match o.verdict {
            Verdict::Worse => SbsVerdict::Worse,
            Verdict::Same => SbsVerdict::Same,
            Verdict::Unknown => SbsVerdict::Unknown,
        },
        reason: crate::text::for_humans(&o.reason).into_owned(),
        cause: o.cause.and_then(|c| {
            serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
        }),
        threshold_pct: threshold_pct.into(),
        decided_on: o.decided_on.as_str().into(),
        optimized_time_ratio: ratio(o.optimized_time_ratio),
        speedup_ratio: ratio(o.speedup_ratio),
        rounds: o.rounds,
        seconds: o.seconds,
        build_seconds: o.build_seconds,
        evidence_dir: o
            .evidence_dir
            .is_some()
            .then(|| format!("{}/{EVIDENCE_SUBDIR}/{}", req.run_id, target.key)),
        overloaded: o
            .machine
            .as_ref()
            .and_then(crate::history::overload::Overload::note),
    })
}

/// The running binary as the current build of a built-in target, when it is proven to be the
/// checkout's build; else `None` (the comparison builds `tier1-run` through the cache) with the
/// reason logged.
fn running_build(req: &RunRequest<'_>) -> Option<std::path::PathBuf> {
    match crate::sidebyside::running::program_for(req.git.commit.as_deref(), req.git.dirty) {
        Ok(p) => {
            tracing::debug!(program = %p.display(), "the current side is the running binary: it is the checkout's build (same commit, clean)");
            Some(p)
        }
        Err(why) => {
            tracing::info!("the current side is built through the cache: {why}");
            None
        }
    }
}

/// The order seed of a target's comparison: from the run id and the key (reproducible).
fn seed_of(run_id: &str, key: &str) -> u64 {
    let d = crate::digest::Digest::of_bytes(format!("{run_id}/{key}").as_bytes());
    u64::from_str_radix(&d.hex()[..16], 16).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: a comparison undecided at its budget gets more rounds once, up to its budget
    /// again, only from what the night's total budget has left after the comparisons still to
    /// come; nothing when that is under a second.
    #[test]
    fn more_rounds_come_from_what_the_night_has_left() {
        let night = NightBudget {
            started: std::time::Instant::now(),
            total_s: 120.0 + 40.0,
        };
        // 30 s in, a 20 s comparison with another 20 s to come: 90 s left, capped at 20.
        assert_eq!(night.extra_at(30.0, 20.0, 20.0), 20.0);
        // 115 s in: 160 - 115 - 20 - 20 = 5 s left.
        assert_eq!(night.extra_at(115.0, 20.0, 20.0), 5.0);
        // 119.5 s in: half a second left, not worth a round.
        assert_eq!(night.extra_at(119.5, 20.0, 20.0), 0.0);
        assert_eq!(night.extra_at(200.0, 20.0, 0.0), 0.0);
    }
}
