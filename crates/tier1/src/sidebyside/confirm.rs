//! [`confirm`]: one target measured side by side, the current commit's build against the anchor
//! commit's, each from its own clean worktree built through the cache. Every failure (bad request,
//! no repository, unknown commit, dirty cached worktree, failed build or invocation, no decision
//! within the budget) is an `unknown` outcome with the reason, never a pass. The evidence of the
//! comparison (`<evidence_dir>/<target>/`: `outcome.json`, `rounds.json`, and every invocation's
//! raw document under `raw/`) is staged and renamed into place whole.

use crate::bench::options::{HarnessOptions, Timing};
use crate::history::overload::Overload;
use crate::sidebyside::build_cache::{self, BuildRequest};
use crate::sidebyside::build_step::BuildStep;
use crate::sidebyside::decide;
use crate::sidebyside::git;
use crate::sidebyside::measure::{self, Contender, Measured, Plan};
use crate::sidebyside::outcome::{
    Budget, BuildRecord, Cause, DecideOn, Problem, SIDEBYSIDE_SCHEMA, Side, SideBySideOutcome,
    Stop, Verdict,
};
use crate::suite::{Suite, Target, TargetKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Wall-clock limit of one build step.
pub(crate) const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// What to compare.
#[derive(Debug, Clone)]
pub struct ConfirmRequest<'a> {
    /// The suite (the target, its shapes, the profile, the `build` step).
    pub suite: &'a Suite,
    /// Profile name.
    pub profile: &'a str,
    /// The target's key.
    pub target_key: &'a str,
    /// The commit measured as current (a full id or any name git resolves).
    pub current_commit: &'a str,
    /// The commit measured as anchor.
    pub anchor_commit: &'a str,
    /// The repository both commits are in.
    pub repo_root: &'a Path,
    /// The build cache ([`build_cache::default_cache_dir`]).
    pub cache_dir: &'a Path,
    /// Where `<target>/` with the raw results and the outcome is written (must not hold one).
    pub evidence_dir: &'a Path,
    /// Seconds, rounds, precision and confidence.
    pub budget: Budget,
    /// A worsening of at least this percent matters.
    pub threshold_pct: f64,
    /// Seed of the order of the builds in each round.
    pub seed: u64,
    /// Which metrics decide (both, unless the suspected change is of one).
    pub decide_on: DecideOn,
    /// Who builds: the cache trusts only entries signed with this builder's key.
    pub builder: crate::sidebyside::Builder,
    /// Where the builder's key lives (None: `TIER1_STATE_DIR`, else the user's state directory).
    pub state_dir: Option<&'a Path>,
    /// Seconds of more rounds granted once when the budget runs out undecided (0: none; a night
    /// grants what its total budget has left, `run::side_by_side`).
    pub extra_seconds: f64,
}

/// The checkout itself (the repository's top level) as the current build: clean, at the current
/// commit, already built (the night just measured it). Its side then needs no worktree and no
/// build; when the anchor's commit is the same commit, the anchor side is this build too (an A/A
/// comparison that still cancels the machine's drift).
#[derive(Debug, Clone)]
pub struct InPlace {
    /// The program that runs a built-in target of this build (`<program> --emit-target KEY`: the
    /// running `tier1-nightly` or `tier1-run` when it is this commit's build); `None`: build
    /// `tier1-run` through the cache.
    pub program: Option<PathBuf>,
}

/// Compare the target side by side; see the module docs. The rounds hold
/// `crate::bench::harness::MEASURE_LOCK` (and pin the process to one CPU when the profile says
/// so): call it after a suite run, never from inside one.
pub fn confirm(req: &ConfirmRequest) -> SideBySideOutcome {
    confirm_from(req, None)
}

/// [`confirm`] with the current side taken from the checkout in place ([`InPlace`]).
pub fn confirm_from(req: &ConfirmRequest, in_place: Option<&InPlace>) -> SideBySideOutcome {
    let mut out = SideBySideOutcome {
        schema: SIDEBYSIDE_SCHEMA.into(),
        target: req.target_key.into(),
        profile: req.profile.into(),
        current_commit: req.current_commit.into(),
        anchor_commit: req.anchor_commit.into(),
        verdict: Verdict::Unknown,
        reason: String::new(),
        cause: None,
        side: None,
        threshold_pct: req.threshold_pct.into(),
        confidence: req.budget.confidence.into(),
        interval_level: decide::comparison_level(
            &req.budget,
            req.decide_on,
            extra_seconds(req) > 0.0,
        )
        .into(),
        decided_on: req.decide_on,
        optimized_time_verdict: None,
        speedup_verdict: None,
        optimized_time_ratio: None,
        speedup_ratio: None,
        rounds: 0,
        seconds: 0.0.into(),
        stopped_by: None,
        order_seed: req.seed,
        builds: Vec::new(),
        evidence_dir: None,
        build_seconds: None,
        machine: None,
        extra_seconds: None,
    };
    let mut stage = None;
    if let Err(p) = compare(req, in_place, &mut out, &mut stage) {
        set_failure(&mut out, p);
    }
    if let Some(stage) = stage
        && let Err(p) = write_evidence(stage, &mut out)
    {
        set_failure(&mut out, p);
    }
    out
}

fn set_failure(out: &mut SideBySideOutcome, p: Problem) {
    out.verdict = Verdict::Unknown;
    out.cause = Some(p.cause);
    out.side = p.side;
    out.reason = p.message;
    out.stopped_by = Some(Stop::Failure);
}

fn invalid(m: String) -> Problem {
    Problem::new(Cause::InvalidRequest, None, m)
}

struct Stage {
    dir: crate::fsx::StagedDir,
    rounds: Vec<measure::Round>,
}

/// The comparison of one request: the request checked, both commits resolved, the evidence
/// staged, both builds ready, then the rounds measured under the measurement lock and recorded on
/// `out` (a failure is the `Problem` returned, with what was measured so far recorded).
fn compare(
    req: &ConfirmRequest,
    in_place: Option<&InPlace>,
    out: &mut SideBySideOutcome,
    stage: &mut Option<Stage>,
) -> Result<(), Problem> {
    let (target, profile) = checked_request(req)?;
    let repo = git::toplevel(req.repo_root)?;
    let current = git::resolve(&repo, req.current_commit, Some(Side::Current))?;
    let anchor = git::resolve(&repo, req.anchor_commit, Some(Side::Anchor))?;
    out.current_commit.clone_from(&current);
    out.anchor_commit.clone_from(&anchor);
    let (dir, raw_dir) = staged_evidence(req)?;
    let stage = stage.insert(Stage {
        dir,
        rounds: Vec::new(),
    });
    let step = BuildStep::for_target(req.suite, target);
    let mut contenders = Vec::with_capacity(2);
    for (side, commit) in [(Side::Current, &current), (Side::Anchor, &anchor)] {
        let here = in_place.filter(|p| builds_in_place(*commit == current, &step, p));
        let record = match here {
            Some(p) => in_place_record(side, commit, &step, &repo, p),
            None => build_cache::ensure(&BuildRequest {
                repo: &repo,
                cache_dir: req.cache_dir,
                commit,
                step: &step,
                side,
                timeout: BUILD_TIMEOUT,
                builder: req.builder,
                state_dir: req.state_dir,
            })?,
        };
        contenders.push(contender(side, target, req.profile, &record, &req.budget));
        out.builds.push(record);
    }
    out.build_seconds = Some(out.builds.iter().map(|b| b.seconds).sum::<f64>().into());
    let [cur, anc] = <[Contender; 2]>::try_from(contenders)
        .map_err(|_| invalid("expected two builds".into()))?;
    let shapes = target.shapes.get(req.profile).cloned().unwrap_or_default();
    let opts = HarnessOptions::new(req.profile, "sidebyside");
    let plan = Plan {
        shapes: &shapes,
        opts: &opts,
        timing: measure::invocation_timing(Timing::of_profile(req.suite, profile, None, req.seed)),
        budget: req.budget,
        extra_seconds: extra_seconds(req),
        threshold_pct: req.threshold_pct,
        decide_on: req.decide_on,
        order_seed: req.seed,
        raw_dir: &raw_dir,
    };
    let measured = measure_locked(profile, &[cur, anc], &plan);
    record_measured(out, &measured, req.threshold_pct);
    stage.rounds = measured.rounds;
    match measured.failure {
        Some(p) => Err(p),
        None => Ok(()),
    }
}

/// The request's target and profile, once its budget and threshold are valid and the suite has
/// both.
fn checked_request<'s>(
    req: &ConfirmRequest<'s>,
) -> Result<(&'s Target, &'s crate::suite::Profile), Problem> {
    req.budget.check().map_err(invalid)?;
    if !(req.threshold_pct.is_finite() && req.threshold_pct > 0.0) {
        return Err(invalid(format!(
            "threshold_pct: expected a finite number > 0, found {}",
            req.threshold_pct
        )));
    }
    let target = req.suite.target(req.target_key).ok_or_else(|| {
        invalid(format!(
            "target {:?} is not in suite {}",
            req.target_key, req.suite.suite_name
        ))
    })?;
    let profile = req.suite.profile(req.profile).ok_or_else(|| {
        invalid(format!(
            "profile {:?} is not in suite {} (profiles: {})",
            req.profile,
            req.suite.suite_name,
            req.suite
                .profiles
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    Ok((target, profile))
}

/// The comparison's evidence directory, staged (`<evidence_dir>/<target>/` once renamed), and its
/// `raw/` directory for the invocations' documents, created.
fn staged_evidence(req: &ConfirmRequest) -> Result<(crate::fsx::StagedDir, PathBuf), Problem> {
    let dest = req.evidence_dir.join(req.target_key);
    let dir = crate::fsx::StagedDir::new(&dest).map_err(|e| {
        Problem::new(
            Cause::Evidence,
            None,
            format!(
                "{}: the evidence of this comparison cannot go there: {e}",
                dest.display()
            ),
        )
    })?;
    let raw_dir = dir.path().join("raw");
    std::fs::create_dir_all(&raw_dir)
        .map_err(|e| Problem::new(Cause::Evidence, None, format!("{}: {e}", raw_dir.display())))?;
    Ok((dir, raw_dir))
}

/// Whether a commit's build is the one running in place (`in_place`) rather than one built
/// through the cache: only the current commit's, and for a `tier1-run` step only when the
/// running build names its program.
fn builds_in_place(is_current: bool, step: &BuildStep, in_place: &InPlace) -> bool {
    is_current && (*step != BuildStep::Tier1Run || in_place.program.is_some())
}

/// The rounds measured under `crate::bench::harness::MEASURE_LOCK`, pinned to one CPU (both
/// builds' processes inherit it) where the profile says so.
fn measure_locked(
    profile: &crate::suite::Profile,
    contenders: &[Contender; 2],
    plan: &Plan<'_>,
) -> Measured {
    let _guard = crate::bench::harness::MEASURE_LOCK
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    // Pinned here, both builds' processes inherit the one CPU.
    let _pinned = if profile.pin_cpu {
        crate::bench::affinity::pin_to_one_cpu().unwrap_or(None)
    } else {
        None
    };
    measure::measure(contenders, plan)
}

/// The extra seconds the request grants (0 when none, negative or not finite).
fn extra_seconds(req: &ConfirmRequest) -> f64 {
    if req.extra_seconds.is_finite() {
        req.extra_seconds.max(0.0)
    } else {
        0.0
    }
}

/// The record of the checkout used in place: nothing built, its own directory and program.
fn in_place_record(
    side: Side,
    commit: &str,
    step: &BuildStep,
    repo: &Path,
    p: &InPlace,
) -> BuildRecord {
    BuildRecord {
        side,
        commit: commit.to_string(),
        step: Vec::new(),
        reused: true,
        worktree: repo.display().to_string(),
        outputs_digest: String::new(),
        outputs: 0,
        toolchain: None,
        seconds: 0.0,
        log: None,
        program: (*step == BuildStep::Tier1Run)
            .then(|| p.program.as_ref().map(|x| x.display().to_string()))
            .flatten(),
    }
}

/// The target as each build runs it: a command target's argv from its worktree (a relative
/// program path resolved there), a tool's with the flags of a short pass sized to the budget
/// (`import::short_pass`: the tool ignores `TIER1_ITERATIONS`), a built-in target through the
/// build's `tier1-run --emit-target`.
fn contender(
    side: Side,
    target: &Target,
    profile: &str,
    b: &BuildRecord,
    budget: &Budget,
) -> Contender {
    let dir = PathBuf::from(&b.worktree);
    let mut t = target.clone();
    if target.kind == TargetKind::Builtin {
        let program = b.program.clone().unwrap_or_default();
        t.command = vec![
            program,
            "--emit-target".into(),
            target.key.clone(),
            "--profile".into(),
            profile.into(),
        ];
        t.kind = TargetKind::Command;
    } else {
        if let Some(p) = t.command.first_mut()
            && p.contains('/')
            && Path::new(p.as_str()).is_relative()
        {
            *p = dir.join(p.as_str()).display().to_string();
        }
        t.command.extend(crate::bench::import::short_pass(
            target,
            measure::INVOCATION_SAMPLES,
            budget.seconds,
        ));
    }
    Contender {
        side,
        dir,
        target: t,
    }
}

fn record_measured(out: &mut SideBySideOutcome, m: &Measured, threshold_pct: f64) {
    out.rounds = u32::try_from(m.rounds.len()).unwrap_or(u32::MAX);
    out.seconds = m.seconds.into();
    out.stopped_by = Some(m.stop);
    out.verdict = m.verdict;
    out.machine = crate::sidebyside::rounds::over_rounds(&m.rounds);
    out.extra_seconds = (m.extended_s > 0.0).then(|| m.extended_s.into());
    if let Some((t, s)) = m.metrics {
        out.optimized_time_ratio = Some(decide::ratio(&t.ci, false));
        out.optimized_time_verdict = Some(decide::metric_verdict(&t));
        out.speedup_ratio = Some(decide::ratio(&s.ci, true));
        out.speedup_verdict = Some(decide::metric_verdict(&s));
    }
    let figures = match (out.optimized_time_ratio, out.speedup_ratio) {
        (Some(t), Some(s)) => format!(
            "optimized time x{:.4} [{:.4}, {:.4}], speedup x{:.4} [{:.4}, {:.4}] current/anchor over {} rounds",
            t.ratio, t.low, t.high, s.ratio, s.low, s.high, out.rounds
        ),
        _ => format!("{} rounds", out.rounds),
    };
    let extended = if m.extended_s > 0.0 {
        format!(" (with {:.0} s more rounds once)", m.extended_s)
    } else {
        String::new()
    };
    out.reason = match m.verdict {
        Verdict::Worse => format!(
            "{figures}: a worsening beyond the {threshold_pct} % threshold, significant (an interval that excludes no change)"
        ),
        Verdict::Same => format!("{figures}: no worsening of {threshold_pct} % or more"),
        Verdict::Unknown => {
            out.cause = Some(Cause::TooNoisy);
            format!(
                "too noisy: {figures} in {:.1} s{extended}; the intervals still include both no change and the {threshold_pct} % threshold",
                m.seconds
            )
        }
    };
    if let Some(note) = out.machine.as_ref().and_then(Overload::note) {
        out.reason = format!("{}; {note}", out.reason);
    }
}

fn write_evidence(stage: Stage, out: &mut SideBySideOutcome) -> Result<(), Problem> {
    let ev = |m: String| Problem::new(Cause::Evidence, None, m);
    let dest = stage.dir.dest().to_path_buf();
    out.evidence_dir = Some(dest.display().to_string());
    let write = |name: &str, bytes: Result<Vec<u8>, crate::json::JsonError>| {
        let path = stage.dir.path().join(name);
        let bytes = bytes.map_err(|e| ev(e.to_string()))?;
        crate::fsx::write_atomic(&path, &bytes).map_err(|e| ev(format!("{}: {e}", path.display())))
    };
    write(
        "rounds.json",
        crate::json::to_pretty(&stage.rounds, "rounds"),
    )?;
    write(
        "outcome.json",
        crate::json::to_pretty(&*out, "side-by-side outcome"),
    )?;
    stage.dir.commit().map_err(|e| {
        out.evidence_dir = None;
        ev(format!(
            "{}: could not move the evidence into place: {e}",
            dest.display()
        ))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_commit_builds_in_place_and_tier1_run_needs_a_program() {
        let program = InPlace {
            program: Some(PathBuf::from("tier1-run")),
        };
        let no_program = InPlace { program: None };
        let argv = BuildStep::Argv(vec!["make".into()]);
        for (is_current, step, in_place, expected) in [
            (true, &BuildStep::Nothing, &no_program, true),
            (true, &argv, &no_program, true),
            (true, &BuildStep::Tier1Run, &program, true),
            (true, &BuildStep::Tier1Run, &no_program, false),
            (false, &BuildStep::Nothing, &program, false),
            (false, &BuildStep::Tier1Run, &program, false),
        ] {
            assert_eq!(
                builds_in_place(is_current, step, in_place),
                expected,
                "{is_current} {step:?} {:?}",
                in_place.program
            );
        }
    }

    fn record(program: Option<&str>) -> BuildRecord {
        BuildRecord {
            side: Side::Anchor,
            commit: "c".repeat(40),
            step: Vec::new(),
            reused: true,
            worktree: "/cache/c/src".into(),
            outputs_digest: String::new(),
            outputs: 0,
            toolchain: None,
            seconds: 0.0,
            log: None,
            program: program.map(String::from),
        }
    }

    #[test]
    fn each_build_runs_its_own_program_from_its_worktree() {
        let suite = Suite::embedded();
        let builtin = &suite.targets[0];
        let budget = Budget::for_settings(&suite.settings_for(&suite.profiles["cpu"], builtin));
        let c = contender(
            Side::Anchor,
            builtin,
            "cpu",
            &record(Some("/cache/c/target/release/tier1-run")),
            &budget,
        );
        assert_eq!(c.dir, Path::new("/cache/c/src"));
        assert_eq!(c.target.kind, TargetKind::Command);
        assert_eq!(
            c.target.command,
            [
                "/cache/c/target/release/tier1-run",
                "--emit-target",
                builtin.key.as_str(),
                "--profile",
                "cpu"
            ]
        );
        let mut cmd = builtin.clone();
        cmd.kind = TargetKind::Command;
        for (argv0, want) in [
            ("./bench", "/cache/c/src/./bench"),
            ("bin/bench", "/cache/c/src/bin/bench"),
            ("python3", "python3"),
            ("/usr/bin/python3", "/usr/bin/python3"),
        ] {
            cmd.command = vec![argv0.into(), "x.py".into()];
            let c = contender(Side::Anchor, &cmd, "cpu", &record(None), &budget);
            assert_eq!(c.target.command, [want, "x.py"], "{argv0}");
        }
        // A tool's command: a short pass sized to the budget, after the suite's flags (a tool
        // takes the last value of a flag), so a round does not re-run the suite's repetitions.
        cmd.command = vec!["./bench".into(), "--benchmark_repetitions=30".into()];
        cmd.format = crate::suite::OutputFormat::GoogleBenchmark;
        cmd.variants = Some(crate::suite::VariantMap {
            baseline: "BM_A".into(),
            optimized: vec!["BM_B".into()],
        });
        let c = contender(Side::Anchor, &cmd, "cpu", &record(None), &budget);
        assert_eq!(
            c.target.command[..3],
            [
                "/cache/c/src/./bench",
                "--benchmark_repetitions=30",
                "--benchmark_repetitions=3"
            ]
        );
        assert!(
            c.target.command[3].starts_with("--benchmark_min_time="),
            "{:?}",
            c.target.command
        );
    }
}
