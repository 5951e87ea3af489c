//! `tier1-dashboard`: render a history root (or the newest history of an artifact store) as a
//! static HTML page and a Markdown step summary.

use clap::Parser;
use std::path::PathBuf;
use tier1::dashboard::classes::{ClassHistory, write_classes_dashboard};
use tier1::dashboard::from_store::{StoreSource, write_classes_from_store, write_from_store};
use tier1::dashboard::{DashboardOptions, write_dashboard};
use tier1::exit::Exit;

/// Render a tier-1 history root as `OUT/index.html` and `OUT/summary.md` (the summary is also
/// appended to `$GITHUB_STEP_SUMMARY` when set).
#[derive(Debug, Parser)]
#[command(name = "tier1-dashboard", version, about)]
#[command(mut_arg("store", |a| a.help(
    "Read the newest published history of this artifact store instead of --history-root \
     (`local:DIR`, such as tier1-nightly's `local:.tier1/store`, or `github`)"
)))]
#[command(mut_arg("repository", |a| a.help(
    "With --store github: `owner/name` (a local store knows its own)"
)))]
struct Args {
    /// History root to read (absent or empty: "no history yet").
    #[arg(
        long,
        env = "TIER1_HISTORY_ROOT",
        required_unless_present_any = ["store", "class_history"],
        conflicts_with_all = ["store", "class_history"]
    )]
    history_root: Option<PathBuf>,
    /// A runner class's history root, `NAME=DIR` (repeatable): the classes side by side in one
    /// page, every figure naming its class (docs/sharding.md).
    #[arg(
        long = "class-history",
        value_name = "NAME=DIR",
        conflicts_with = "store"
    )]
    class_history: Vec<String>,
    /// With --store: show these runner classes side by side (repeatable), each restored from its
    /// own artifact names `<prefix>-<class>-*`.
    #[arg(long = "runner-class", value_name = "NAME", requires = "store")]
    runner_class: Vec<String>,
    // --store, shared with the binaries that open a store (`TIER1_STORE`); no default here.
    #[command(flatten)]
    store: tier1::cli::StoreSpecArg,
    // --repository and --api-url for --store github, shared with every GitHub binary.
    #[command(flatten)]
    github: tier1::cli::GithubArgs,
    /// With --store: the workflow whose runs hold the history (default: the suite's `workflow`,
    /// else tier1-nightly.yml).
    #[arg(long, requires = "store")]
    workflow: Option<String>,
    /// With --store: the artifact prefix (default: the suite's `artifact_prefix`, else `tier1`).
    #[arg(long, requires = "store", value_parser = tier1::cli::parsers::artifact_prefix)]
    artifact_prefix: Option<tier1::artifacts::ArtifactPrefix>,
    /// With --store: the branch whose history is shown.
    #[arg(long, default_value = "main")]
    branch: String,
    /// Output directory; must be absent or empty.
    #[arg(long, env = "TIER1_DASHBOARD_OUTPUT")]
    output: PathBuf,
    /// Local evidence root; references to files found there are shown as local paths.
    #[arg(long, env = "TIER1_EVIDENCE_ROOT")]
    evidence_root: Option<PathBuf>,
    /// The clock for the anchor age (RFC 3339); default: now.
    #[arg(long, env = "TIER1_NOW")]
    now: Option<String>,
    // The suite whose thresholds and tolerances are shown.
    #[command(flatten)]
    suite: tier1::cli::SuiteFileArg,
    /// Warn when the newest run is more than this many days old.
    #[arg(long, env = "TIER1_STALE_AFTER_DAYS", default_value_t = tier1::dashboard::freshness::DEFAULT_STALE_AFTER_DAYS, value_parser = clap::value_parser!(i64).range(0..))]
    stale_after_days: i64,
}

fn main() -> std::process::ExitCode {
    tier1::cli::init();
    let args = match tier1::cli::parse::<Args>("tier1-dashboard") {
        Ok(args) => args,
        Err(code) => return code,
    };
    let opts = DashboardOptions {
        history_root: args.history_root.unwrap_or_default(),
        output: args.output,
        evidence_root: args.evidence_root,
        now: args.now,
        suite_config: args.suite.suite_config,
        repo_root: PathBuf::from("."),
        step_summary: true,
        stale_after_days: args.stale_after_days,
    };
    if !args.class_history.is_empty() {
        let mut classes = Vec::new();
        for given in &args.class_history {
            let Some((class, dir)) = given
                .split_once('=')
                .filter(|(c, d)| !c.is_empty() && !d.is_empty())
            else {
                return tier1::cli::fail(
                    "tier1-dashboard",
                    &tier1::dashboard::classes::usage(format!(
                        "--class-history: expected NAME=DIR, found {given:?}"
                    )),
                );
            };
            classes.push(ClassHistory {
                class: class.to_string(),
                history_root: PathBuf::from(dir),
            });
        }
        let result = write_classes_dashboard(&opts, &classes).map(|outcome| {
            tier1::cli::print_json(&outcome);
            Exit::Ok
        });
        return tier1::cli::finish("tier1-dashboard", result);
    }
    if let (Some(store), false) = (args.store.given(), args.runner_class.is_empty()) {
        let result = write_classes_from_store(
            &StoreSource {
                store: store.to_string(),
                workflow: args.workflow.clone(),
                artifact_prefix: args.artifact_prefix.as_ref().map(|p| p.to_string()),
                branch: args.branch.clone(),
                repository: args.github.repository.clone(),
                api_url: Some(args.github.api_url.clone()),
            },
            &args.runner_class,
            &opts,
        )
        .map(|outcome| {
            tier1::cli::print_json(&outcome);
            Exit::Ok
        });
        return tier1::cli::finish("tier1-dashboard", result);
    }
    let written = match args.store.given() {
        Some(store) => write_from_store(
            &StoreSource {
                store: store.to_string(),
                workflow: args.workflow,
                artifact_prefix: args.artifact_prefix.map(|p| p.to_string()),
                branch: args.branch,
                repository: args.github.repository,
                api_url: Some(args.github.api_url),
            },
            &opts,
        ),
        None => write_dashboard(&opts),
    };
    let result = written.map(|outcome| {
        tier1::cli::print_json(&outcome);
        Exit::Ok
    });
    tier1::cli::finish("tier1-dashboard", result)
}
