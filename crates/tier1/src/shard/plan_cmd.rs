//! `tier1-shard plan` (docs/sharding.md §2): after restoring the class's history once, fix the
//! night's run id, commit, suite, profile and runner class, and split the targets over the
//! shards by their recorded times; write `plan.json` and, on GitHub, the plan job's outputs
//! (the job matrix included).

use super::error::{ShardError, io};
use crate::history::INDEX_FILE;
use crate::history_check::validate_history_root;
use crate::shards::Plan;
use crate::shards::plan::{PlanRequest, make};
use crate::suite::Suite;
use crate::suite::classes::class_prefix;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `tier1-shard plan` is asked.
#[derive(Debug, Clone)]
pub struct PlanCommand {
    /// The restored history (absent or empty: a bootstrap).
    pub history_root: PathBuf,
    /// Where `plan.json` goes (must not exist).
    pub output: PathBuf,
    /// `--suite-config`; None: the suite the history records, by [`Suite::discover`].
    pub suite_config: Option<PathBuf>,
    /// The checkout.
    pub repo_root: PathBuf,
    /// `--profile` (must be the class's when a class is given).
    pub profile: Option<String>,
    /// `--runner-class`.
    pub runner_class: Option<String>,
    /// `--shards`; None: the class's, else the suite's, else 1.
    pub shards: Option<u32>,
    /// `--run-id`; None: `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>` now.
    pub run_id: Option<String>,
    /// The workflow run whose artifacts hold the shards (`GITHUB_RUN_ID`).
    pub workflow_run_id: u64,
    /// Its attempt (`GITHUB_RUN_ATTEMPT`).
    pub attempt: u32,
    /// The base artifact prefix; None: the suite's, else `tier1`.
    pub artifact_prefix: Option<String>,
    /// The night is an accept dispatch's candidate (measured in the anchor's passes).
    pub anchor_candidate: bool,
}

/// What `tier1-shard plan` prints.
#[derive(Debug, Clone, Serialize)]
pub struct PlanOutcome {
    /// The plan's digest.
    pub(crate) plan_digest: String,
    /// Where the plan was written.
    pub(crate) plan_path: String,
    /// `{"include": [{"shard": 1, "targets": "a b"}, ...]}`: the shard jobs' matrix.
    pub(crate) matrix: serde_json::Value,
    /// The plan.
    pub plan: Plan,
}

/// Make and write the plan: the suite, class, profile, anchor, commit, shard count, artifact
/// prefix and run id fixed, then the plan made, written, and its outputs set.
pub fn plan(cmd: &PlanCommand) -> Result<PlanOutcome, ShardError> {
    refuse_existing(&cmd.output)?;
    let history = cmd
        .history_root
        .join(INDEX_FILE)
        .is_file()
        .then_some(cmd.history_root.as_path());
    let suite = Suite::discover(cmd.suite_config.as_deref(), &cmd.repo_root, history)?.suite;
    let class = cmd.runner_class.as_deref().filter(|c| !c.is_empty());
    if let Some(c) = class {
        suite.runner_class(c).map_err(ShardError::Invalid)?;
    }
    let profile = suite
        .class_profile(class, cmd.profile.as_deref())
        .map_err(ShardError::Invalid)?
        .unwrap_or_else(|| crate::run::default_profile(&suite));
    let Some(p) = suite.profile(&profile) else {
        return Err(ShardError::Invalid(format!(
            "--profile {profile:?}: the suite has no such profile"
        )));
    };
    let anchor = match history {
        Some(root) => {
            let v = validate_history_root(root)?;
            check_class(root, v.index.runner_class.as_deref(), class)?;
            v.latest_anchor.map(|a| a.run_id)
        }
        None => None,
    };
    let git = crate::run::detect_git(&cmd.repo_root, &[&cmd.history_root]);
    let Some(commit) = git.commit.clone() else {
        return Err(ShardError::Invalid(format!(
            "{}: not a git checkout: a sharded night binds every shard to one commit",
            cmd.repo_root.display()
        )));
    };
    let requested = checked_shards(cmd.shards.unwrap_or_else(|| suite.shards_for(class)))?;
    let base = crate::suite::run_names(
        None,
        cmd.artifact_prefix.as_deref(),
        cmd.suite_config.as_deref(),
        &cmd.repo_root,
    )?
    .artifact_prefix;
    let prefix = class_prefix(&base, class).map_err(ShardError::Invalid)?;
    let run_id = cmd
        .run_id
        .clone()
        .unwrap_or_else(|| crate::run::default_run_id_now(Some(&commit)));
    if !crate::fsx::is_safe_run_id(&run_id) {
        return Err(ShardError::Invalid(format!(
            "--run-id {run_id:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$"
        )));
    }
    let passes = passes(anchor.is_some(), cmd.anchor_candidate, p.anchor_passes);
    let plan = make(PlanRequest {
        suite: &suite,
        history,
        run_id,
        workflow_run_id: cmd.workflow_run_id,
        attempt: cmd.attempt.max(1),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        commit,
        profile,
        runner_class: class.map(str::to_string),
        artifact_prefix: prefix.to_string(),
        requested_shards: requested,
        passes,
        anchor_candidate: cmd.anchor_candidate,
        anchor_run_id: anchor,
    })?;
    write_plan(&cmd.output, &plan)?;
    let outcome = PlanOutcome {
        plan_digest: plan.digest().to_string(),
        plan_path: cmd.output.display().to_string(),
        matrix: matrix(&plan),
        plan,
    };
    set_outputs(&outcome);
    Ok(outcome)
}

/// Refuses to overwrite a plan file (or a link where it would go).
fn refuse_existing(output: &Path) -> Result<(), ShardError> {
    if output.exists() || output.is_symlink() {
        return Err(ShardError::Conflict(format!(
            "{}: the plan file already exists; refusing to overwrite it",
            output.display()
        )));
    }
    Ok(())
}

/// The shard count asked for, once it is between 1 and `MAX_SHARDS`.
fn checked_shards(requested: u32) -> Result<u32, ShardError> {
    if !(1..=crate::suite::classes::MAX_SHARDS).contains(&requested) {
        return Err(ShardError::Invalid(format!(
            "--shards: expected 1 to {}, found {requested}",
            crate::suite::classes::MAX_SHARDS
        )));
    }
    Ok(requested)
}

/// How many passes each target is measured in: the profile's `anchor_passes` for a night that may
/// become the anchor (no anchor yet, or `--anchor-candidate`), else one.
fn passes(has_anchor: bool, anchor_candidate: bool, anchor_passes: u32) -> u32 {
    if !has_anchor || anchor_candidate {
        anchor_passes
    } else {
        1
    }
}

/// Writes the plan to `output`, its directory created where missing.
fn write_plan(output: &Path, plan: &Plan) -> Result<(), ShardError> {
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    crate::json::write(output, plan)?;
    Ok(())
}

/// The shard jobs' matrix: one `include` entry per shard, with its targets for the job's name.
pub(crate) fn matrix(plan: &Plan) -> serde_json::Value {
    let include: Vec<serde_json::Value> = plan
        .assignments
        .iter()
        .map(|a| serde_json::json!({"shard": a.shard, "targets": a.targets.join(" ")}))
        .collect();
    serde_json::json!({ "include": include })
}

/// The latest anchor of the history at `root` (validated, and of `plan`'s runner class), `None`
/// without a history or an anchor: what a shard and the combine step compare with the plan's.
pub(crate) fn history_anchor(
    root: Option<&Path>,
    plan: &Plan,
) -> Result<Option<crate::history_check::AnchorRef>, ShardError> {
    let Some(root) = root else {
        return Ok(None);
    };
    let v = validate_history_root(root)?;
    check_class(
        root,
        v.index.runner_class.as_deref(),
        plan.runner_class.as_deref(),
    )?;
    Ok(v.latest_anchor)
}

/// The restored history's class must be the night's (restore of the class's names checks it
/// too).
pub(crate) fn check_class(
    root: &Path,
    found: Option<&str>,
    want: Option<&str>,
) -> Result<(), ShardError> {
    if found == want {
        return Ok(());
    }
    Err(ShardError::Integrity(format!(
        "{}: index.json runner_class: expected {want:?} (the night's runner class), found {found:?}: a history of another class is never measured against",
        root.join(INDEX_FILE).display()
    )))
}

/// The plan job's outputs on GitHub.
fn set_outputs(o: &PlanOutcome) {
    let p = &o.plan;
    let class = p.class.as_ref();
    let labels = class.map_or_else(|| "[]".into(), |c| serde_json::json!(c.labels).to_string());
    for (name, value) in [
        ("run_id", p.run_id.clone()),
        ("shards", p.shards.to_string()),
        ("matrix", o.matrix.to_string()),
        ("plan_digest", o.plan_digest.clone()),
        ("profile", p.profile.clone()),
        ("runner_class", p.runner_class.clone().unwrap_or_default()),
        ("runner_labels", labels),
        (
            "runner_labels_csv",
            class.map(|c| c.labels.join(",")).unwrap_or_default(),
        ),
        (
            "device_name",
            class
                .and_then(|c| c.device_name.clone())
                .unwrap_or_default(),
        ),
        (
            "device_count",
            class
                .and_then(|c| c.device_count)
                .map(|n| n.to_string())
                .unwrap_or_default(),
        ),
        ("artifact_prefix", p.artifact_prefix.clone()),
    ] {
        let _ = crate::gha::set_output(name, &value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_night_that_may_become_the_anchor_runs_the_anchor_passes() {
        for (has_anchor, anchor_candidate, passes_run) in [
            (false, false, 3),
            (false, true, 3),
            (true, true, 3),
            (true, false, 1),
        ] {
            assert_eq!(
                passes(has_anchor, anchor_candidate, 3),
                passes_run,
                "anchor {has_anchor}, candidate {anchor_candidate}"
            );
        }
    }
}
