//! `tier1-shard run` (docs/sharding.md §3): on a runner of the class, refuse a plan that does not
//! fit this checkout (another commit, suite file, profile or class, or another history than the
//! plan restored), measure the plan's targets of one shard as the night's run, and pack the
//! shard's evidence into its package. The package is uploaded as is by the workflow.

use super::error::{ShardError, io};
use super::pack::pack_paths;
use crate::digest::Digest;
use crate::history::INDEX_FILE;
use crate::recheck::recheck_run_id;
use crate::run::{RunRequest, ShardPlacement};
use crate::shards::Plan;
use crate::shards::layout::shard_dir;
use crate::suite::Suite;
use serde::Serialize;
use std::path::PathBuf;

/// What `tier1-shard run` is asked.
#[derive(Debug, Clone)]
pub struct ShardRunCommand {
    /// `plan.json` of the plan job.
    pub plan: PathBuf,
    /// The plan's digest as the plan job output it (the downloaded plan must be that plan).
    pub expected_plan_digest: Option<String>,
    /// 1-based shard number.
    pub shard: u32,
    /// The history the plan restored.
    pub history_root: PathBuf,
    /// Where the shard's evidence is written.
    pub evidence_root: PathBuf,
    /// The package to write (its file name is the artifact name).
    pub package: PathBuf,
    /// `--suite-config`; None: the suite the history records.
    pub suite_config: Option<PathBuf>,
    /// The checkout.
    pub repo_root: PathBuf,
    /// Attestation records (tier1-attest, tier1-preflight) for the manifest.
    pub environment_json: Vec<PathBuf>,
}

/// What `tier1-shard run` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ShardRunOutcome {
    /// The night's run id.
    pub(crate) run_id: String,
    /// The shard.
    pub(crate) shard: u32,
    /// The plan's shard count.
    pub(crate) shards: u32,
    /// The keys measured.
    pub targets: Vec<String>,
    /// The package written.
    pub(crate) package: String,
    /// Its digest.
    pub digest: Digest,
    /// Its size.
    pub(crate) bytes: u64,
    /// Rechecks run.
    pub(crate) rechecks: usize,
    /// Side-by-side comparisons made.
    pub(crate) side_by_side: usize,
    /// Seconds measuring.
    pub seconds: f64,
}

/// Read a plan file, check it against `expected` (a digest) when given.
pub(crate) fn read_plan(
    path: &std::path::Path,
    expected: Option<&str>,
) -> Result<Plan, ShardError> {
    let plan: Plan = crate::json::read(path)?;
    if let Some(want) = expected.filter(|w| !w.trim().is_empty()) {
        let want = Digest::parse_lenient(want)
            .map_err(|e| ShardError::Invalid(format!("--plan-digest: {e}")))?;
        let found = plan.digest();
        if found != want {
            return Err(ShardError::Integrity(format!(
                "{}: plan digest {found} differs from the plan job's {want}",
                path.display()
            )));
        }
    }
    Ok(plan)
}

/// Check that `plan` was made for `suite` (its file, not only its name).
pub(crate) fn check_plan_suite(plan: &Plan, suite: &Suite) -> Result<(), ShardError> {
    if let Some(p) = plan.problem(suite) {
        return Err(ShardError::Invalid(format!("plan: {p}")));
    }
    let digest = suite.config_digest().to_string();
    if plan.suite.name != suite.suite_name
        || plan.suite.version != suite.version
        || plan.suite.config_digest != digest
    {
        return Err(ShardError::Invalid(format!(
            "plan suite: expected {} v{} {digest} (this checkout's suite), found {} v{} {}",
            suite.suite_name,
            suite.version,
            plan.suite.name,
            plan.suite.version,
            plan.suite.config_digest
        )));
    }
    Ok(())
}

/// Measure one shard and pack its package.
pub fn run_shard(cmd: &ShardRunCommand) -> Result<ShardRunOutcome, ShardError> {
    // 1. The plan, and a package that does not exist yet.
    let plan = read_plan(&cmd.plan, cmd.expected_plan_digest.as_deref())?;
    if cmd.package.exists() || cmd.package.is_symlink() {
        return Err(ShardError::Conflict(format!(
            "{}: the package already exists; refusing to overwrite it",
            cmd.package.display()
        )));
    }
    // 2. The suite of the plan, the shard's targets, the plan's commit checked out and the
    // plan's anchor in the history.
    let history = cmd
        .history_root
        .join(INDEX_FILE)
        .is_file()
        .then_some(cmd.history_root.as_path());
    let discovered = Suite::discover(cmd.suite_config.as_deref(), &cmd.repo_root, history)?;
    let (suite, suite_source) = (discovered.suite, discovered.source);
    check_plan_suite(&plan, &suite)?;
    let keys = shard_keys(&plan, cmd.shard)?;
    if let Some(c) = &plan.runner_class {
        suite.runner_class(c).map_err(ShardError::Invalid)?;
    }
    let git = plan_checkout(cmd, &plan)?;
    check_anchor(cmd, &plan, history)?;
    // 3. The shard's targets measured, then packed.
    let attestation = crate::run::read_attestations(&cmd.environment_json)?;
    let backend =
        crate::run::backend_for(&suite, &plan.profile).map_err(crate::run::RunError::from)?;
    let req = RunRequest {
        suite: &suite,
        suite_source,
        profile: plan.profile.clone(),
        run_id: plan.run_id.clone(),
        history_root: cmd.history_root.clone(),
        evidence_root: cmd.evidence_root.clone(),
        backend,
        anchor_candidate: plan.anchor_candidate,
        attestation,
        git,
        repo_root: cmd.repo_root.clone(),
        allow_dirty: false,
        evidence_artifact_name: None,
        hook: None,
        passes: Some(plan.passes),
        runner_class: plan.runner_class.clone(),
        shard: Some(ShardPlacement {
            shard: cmd.shard,
            shards: plan.shards,
            plan_digest: plan.digest(),
            keys: keys.clone(),
        }),
    };
    std::fs::create_dir_all(&cmd.evidence_root).map_err(io(&cmd.evidence_root))?;
    let record = crate::run::shard::measure_shard(&req)?;
    let rels = package_paths(&plan.run_id, cmd.shard, &keys, |rel| {
        cmd.evidence_root.join(rel).exists()
    });
    let (digest, bytes) = pack_paths(&cmd.evidence_root, &rels, &cmd.package)?;
    let _ = crate::gha::set_output("package_digest", digest.hex());
    Ok(ShardRunOutcome {
        run_id: plan.run_id.clone(),
        shard: cmd.shard,
        shards: plan.shards,
        targets: keys,
        package: cmd.package.display().to_string(),
        digest,
        bytes,
        rechecks: record.rechecks.len(),
        side_by_side: record.side_by_side.as_ref().map_or(0, |b| b.checks.len()),
        seconds: record.seconds.get(),
    })
}

/// The targets the plan gives `shard` (`--shard` must be one of the plan's).
fn shard_keys(plan: &Plan, shard: u32) -> Result<Vec<String>, ShardError> {
    plan.targets_of(shard)
        .map(<[String]>::to_vec)
        .ok_or_else(|| {
            ShardError::Invalid(format!(
                "--shard {}: the plan has shards 1 to {}",
                shard, plan.shards
            ))
        })
}

/// The checkout, which must be at the plan's commit (its outputs do not make it dirty).
fn plan_checkout(
    cmd: &ShardRunCommand,
    plan: &Plan,
) -> Result<crate::evidence::git::GitInfo, ShardError> {
    let outputs = [
        cmd.history_root.as_path(),
        cmd.evidence_root.as_path(),
        cmd.package.as_path(),
    ];
    let git = crate::run::detect_git(&cmd.repo_root, &outputs);
    if git.commit.as_deref() != Some(plan.commit.as_str()) {
        return Err(ShardError::Invalid(format!(
            "the checkout {} is at {:?}, the plan measures {}: a shard measures the plan's commit only",
            cmd.repo_root.display(),
            git.commit,
            plan.commit
        )));
    }
    Ok(git)
}

/// The history's latest anchor (validated, of the plan's runner class) is the plan's: a shard
/// compares with the history the plan restored.
fn check_anchor(
    cmd: &ShardRunCommand,
    plan: &Plan,
    history: Option<&std::path::Path>,
) -> Result<(), ShardError> {
    let anchor = super::plan_cmd::history_anchor(history, plan)?.map(|a| a.run_id);
    if anchor != plan.anchor_run_id {
        return Err(ShardError::Invalid(format!(
            "{}: the history's anchor is {anchor:?}, the plan's {:?}: a shard compares with the history the plan restored",
            cmd.history_root.display(),
            plan.anchor_run_id
        )));
    }
    Ok(())
}

/// What the shard's package holds, relative to the evidence root: the shard's directory, then
/// each target's side-by-side evidence and recheck run where they `exist`.
fn package_paths(
    run_id: &str,
    shard: u32,
    keys: &[String],
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut rels = vec![shard_dir(run_id, shard)];
    for k in keys {
        for rel in [
            format!("{run_id}/sidebyside/{k}"),
            recheck_run_id(run_id, k),
        ] {
            if exists(&rel) {
                rels.push(rel);
            }
        }
    }
    rels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_paths_rows() {
        let keys = ["a/x".to_string(), "b".to_string()];
        let rows: [(&[&str], Vec<&str>); 3] = [
            (&[], vec!["r/shards/2"]),
            (
                &["r/sidebyside/a/x", "r__recheck__a_x", "r__recheck__b"],
                vec![
                    "r/shards/2",
                    "r/sidebyside/a/x",
                    "r__recheck__a_x",
                    "r__recheck__b",
                ],
            ),
            (
                &["r/sidebyside/b", "r/sidebyside/c"],
                vec!["r/shards/2", "r/sidebyside/b"],
            ),
        ];
        for (present, want) in rows {
            assert_eq!(
                package_paths("r", 2, &keys, |rel| present.contains(&rel)),
                want
            );
        }
    }
}
