//! `tier1-bisect`: the first commit between a good and a bad one whose side-by-side comparison
//! with the good commit shows the change; JSON on stdout, the report and evidence in a directory.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tier1::bisect::{BisectError, BisectReport, BisectRequest};
use tier1::cli;
use tier1::sidebyside::{Budget, DecideOn};

/// Find the first commit after GOOD, up to BAD on its first-parent chain, whose side-by-side
/// comparison with GOOD shows the change of one target, in about log2(N) builds. Each tested
/// commit is checked out in its own worktree, built with the suite's build step (cached by commit),
/// and measured interleaved with GOOD's build; commits that cannot be built, run or decided are
/// skipped as `git bisect skip` does. BAD is taken as bad, not measured. History is only read.
#[derive(Debug, Parser)]
#[command(name = "tier1-bisect", version)]
struct Args {
    /// A commit without the change: the anchor's, or the last accepted night's.
    #[arg(long)]
    good: String,
    /// A commit with the change (a confirmed regression).
    #[arg(long)]
    bad: String,
    /// The key of the target that changed.
    #[arg(long)]
    target: String,
    /// Where bisect.json and every step's evidence go (absent or empty).
    #[arg(long)]
    output_dir: PathBuf,
    #[command(flatten)]
    suite: cli::SuiteArgs,
    /// The repository.
    #[arg(long, default_value = ".")]
    repo_root: PathBuf,
    /// Build cache (default: `$RUNNER_TOOL_CACHE/tier1-builds` in Actions, else
    /// `<repo-root>/.tier1/builds`).
    #[arg(long, env = "TIER1_BUILD_CACHE")]
    cache_dir: Option<PathBuf>,
    /// A worsening of at least this percent is the change (default: the smaller of the suite's
    /// speedup and optimized-latency thresholds).
    #[arg(long)]
    threshold_pct: Option<f64>,
    /// Seconds of measuring per step (default: the profile's budget_s).
    #[arg(long)]
    budget_s: Option<f64>,
    /// The metric that shows the change: `both` (either worsening counts), `optimized_time` (a
    /// latency regression) or `speedup`.
    #[arg(long, default_value = "both", value_parser = ["both", "optimized_time", "speedup"])]
    metric: String,
    /// Most rounds per step.
    #[arg(long, default_value_t = 200)]
    max_rounds: u32,
    /// Seed of the order of the two builds in each round.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

fn main() -> ExitCode {
    cli::init();
    tier1::process::install_termination_handler();
    let args = match tier1::cli::parse::<Args>("tier1-bisect") {
        Ok(a) => a,
        Err(code) => return code,
    };
    match execute(args) {
        Ok(report) => {
            cli::print_json(&report);
            if let Err(e) = tier1::gha::step_summary(&report.markdown()) {
                tracing::warn!(error = %e, "could not write the step summary");
            }
            report.exit().into()
        }
        Err(e) => cli::fail("tier1-bisect", &e),
    }
}

fn execute(args: Args) -> Result<BisectReport, BisectError> {
    let (suite, profile) = args
        .suite
        .suite_and_profile(&args.repo_root)
        .map_err(|e| BisectError::Invalid(e.to_string()))?;
    let p = suite.profile(&profile).ok_or_else(|| {
        BisectError::Invalid(format!(
            "profile {profile:?} is not in suite {}",
            suite.suite_name
        ))
    })?;
    let target = suite.target(&args.target).ok_or_else(|| {
        BisectError::Invalid(format!(
            "target {:?} is not in suite {}",
            args.target, suite.suite_name
        ))
    })?;
    let mut budget = Budget::for_settings(&suite.settings_for(p, target));
    budget.seconds = args.budget_s.unwrap_or(budget.seconds);
    budget.max_rounds = args.max_rounds;
    let t = suite.thresholds_for(&target.target);
    let threshold_pct = args.threshold_pct.unwrap_or(
        t.speedup_regression_pct
            .min(t.optimized_latency_regression_pct),
    );
    let cache_dir = args
        .cache_dir
        .unwrap_or_else(|| tier1::sidebyside::default_cache_dir(&args.repo_root));
    tier1::bisect::bisect(&BisectRequest {
        suite: &suite,
        profile: &profile,
        target_key: &args.target,
        good: &args.good,
        bad: &args.bad,
        repo_root: &args.repo_root,
        cache_dir: &cache_dir,
        output_dir: &args.output_dir,
        budget,
        threshold_pct,
        seed: args.seed,
        decide_on: DecideOn::parse(&args.metric).unwrap_or_default(),
    })
}
