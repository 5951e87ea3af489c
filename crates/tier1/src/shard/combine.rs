//! `tier1-shard combine` (docs/sharding.md §4): fetch every shard's package of this workflow run
//! from the store, verify each (digest, members, provenance), merge the delivered shards into one
//! run (the missing shards' targets `missing`), compare the whole night with the anchor exactly as
//! promotion recomputes a comparison (the shards' rechecks and side-by-side records applied),
//! decide the gate, append the run to the candidate history and pack the combined evidence.
//! Nothing is written unless every delivered package verifies.

use super::error::{ShardError, io};
use super::fetch::fetch_all;
use super::pack::pack_paths;
use super::run_cmd::{check_plan_suite, read_plan};
use super::verify::{Verified, verify};
use crate::digest::Digest;
use crate::evidence::bind;
use crate::evidence::git::GitInfo;
use crate::evidence::manifest::{
    MANIFEST_SCHEMA_VERSION, Manifest, ManifestFiles, SuiteRecord, Toolchain,
};
use crate::history::INDEX_FILE;
use crate::history::shards::{DELIVERED, MISSING, ShardEntry, ShardsRecord};
use crate::history_check::AnchorRef;
use crate::recheck::RecheckResult;
use crate::regress::noise::NoiseHistory;
use crate::run::RunOutcome;
use crate::shards::Plan;
use crate::shards::merge::{merge_results, merge_side_by_side};
use crate::store::ArtifactStore;
use crate::suite::Suite;
use serde::Serialize;
use std::path::PathBuf;

/// What `tier1-shard combine` is asked.
#[derive(Debug, Clone)]
pub struct CombineCommand {
    /// `plan.json`.
    pub plan: PathBuf,
    /// The plan's digest as the plan job output it.
    pub expected_plan_digest: Option<String>,
    /// The history the plan restored: the candidate, appended in place.
    pub history_root: PathBuf,
    /// Where the shards are unpacked and the combined evidence is written.
    pub evidence_root: PathBuf,
    /// The combined evidence package to write (its file name is the evidence artifact name).
    pub package: PathBuf,
    /// The evidence artifact name the summary records.
    pub evidence_artifact_name: String,
    /// `--suite-config`; None: the suite the history records.
    pub suite_config: Option<PathBuf>,
    /// The checkout.
    pub repo_root: PathBuf,
    /// The workflow run's current attempt (`GITHUB_RUN_ATTEMPT`).
    pub current_attempt: u32,
}

/// What `tier1-shard combine` prints.
#[derive(Debug, Clone, Serialize)]
pub struct CombineOutcome {
    /// The combined run, as `tier1-run` prints one (for an incomplete night: what it would record,
    /// its missing targets and failing gate).
    pub run: RunOutcome,
    /// The shards record.
    pub shards: ShardsRecord,
    /// The night was recorded (every shard delivered): the run appended to the candidate history
    /// and the combined evidence packed. An incomplete night records nothing.
    pub recorded: bool,
    /// The combined evidence package (recorded nights only).
    pub(crate) package: Option<String>,
    /// Its digest.
    pub digest: Option<Digest>,
    /// Its size.
    pub(crate) bytes: u64,
}

/// Combine the shards of the plan's workflow run.
pub fn combine(
    cmd: &CombineCommand,
    store: &dyn ArtifactStore,
) -> Result<CombineOutcome, ShardError> {
    // 1. The plan, the evidence artifact's name, and outputs that do not exist yet.
    let plan = read_plan(&cmd.plan, cmd.expected_plan_digest.as_deref())?;
    check_request(cmd, &plan)?;
    // 2. The suite, and the anchor of the history the plan restored.
    let history = cmd
        .history_root
        .join(INDEX_FILE)
        .is_file()
        .then_some(cmd.history_root.as_path());
    let discovered = Suite::discover(cmd.suite_config.as_deref(), &cmd.repo_root, history)?;
    let (suite, suite_source) = (discovered.suite, discovered.source);
    check_plan_suite(&plan, &suite)?;
    let anchor_ref = plan_anchor(cmd, &plan, history)?;
    // 3. Every delivered shard's package fetched and verified; at least one must be.
    let work = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("combine"))
        .tempdir()
        .map_err(io(std::path::Path::new("<tmp>")))?;
    let (fetched, missing) = fetch_all(store, &plan, cmd.current_attempt.max(1), work.path())?;
    let verified: Vec<Verified> = fetched
        .iter()
        .map(|f| verify(f, &plan, &suite))
        .collect::<Result<_, _>>()?;
    if verified.is_empty() {
        return Err(ShardError::Unavailable(format!(
            "no shard of run {} delivered its evidence package ({} missing): there is no night to record",
            plan.workflow_run_id,
            missing.len()
        )));
    }
    let record = shards_record(&plan, &fetched, &missing);
    // 4. The night recorded; an incomplete one in a scratch copy, to say what it measured and why
    // its gate fails, with nothing written.
    let scratch = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("scratch"))
        .tempdir()
        .map_err(io(std::path::Path::new("<tmp>")))?;
    let target = recorded_into(cmd, &record, scratch.path())?;
    let (mut run, (digest, bytes)) = record_night(
        &target,
        &plan,
        &suite,
        suite_source,
        &record,
        &fetched,
        &verified,
        anchor_ref.as_ref(),
    )?;
    if !record.complete {
        run.verdict.passed = false;
        run.verdict
            .failures
            .splice(0..0, incomplete_failures(&record));
        return Ok(CombineOutcome {
            run,
            shards: record,
            recorded: false,
            package: None,
            digest: None,
            bytes: 0,
        });
    }
    // 5. A recorded night's outputs for the workflow.
    let ids: Vec<String> = fetched.iter().map(|f| f.meta.id.to_string()).collect();
    let _ = crate::gha::set_output("shard_artifact_ids", &ids.join(","));
    let _ = crate::gha::set_output("evidence_digest", digest.hex());
    Ok(CombineOutcome {
        run,
        shards: record,
        recorded: true,
        package: Some(cmd.package.display().to_string()),
        digest: Some(digest),
        bytes,
    })
}

/// The evidence artifact's name is one, and neither the package nor the run's evidence or
/// history exists yet.
fn check_request(cmd: &CombineCommand, plan: &Plan) -> Result<(), ShardError> {
    if !crate::artifacts::is_evidence_artifact_name(&cmd.evidence_artifact_name) {
        return Err(ShardError::Invalid(format!(
            "--evidence-artifact-name must match {}, found {:?}",
            crate::artifacts::EVIDENCE_NAME_PATTERN,
            cmd.evidence_artifact_name
        )));
    }
    for (what, p) in [
        ("the package", cmd.package.clone()),
        ("the run's evidence", cmd.evidence_root.join(&plan.run_id)),
        ("the run's history", cmd.history_root.join(&plan.run_id)),
    ] {
        if p.exists() || p.is_symlink() {
            return Err(ShardError::Conflict(format!(
                "{}: {what} already exists; refusing to overwrite it",
                p.display()
            )));
        }
    }
    Ok(())
}

/// The latest anchor of the history (validated, of the plan's runner class), which must be the
/// one the plan was made against: the night is recorded into the history the plan restored.
fn plan_anchor(
    cmd: &CombineCommand,
    plan: &Plan,
    history: Option<&std::path::Path>,
) -> Result<Option<AnchorRef>, ShardError> {
    let anchor_ref = super::plan_cmd::history_anchor(history, plan)?;
    if anchor_ref.as_ref().map(|a| &a.run_id) != plan.anchor_run_id.as_ref() {
        return Err(ShardError::Invalid(format!(
            "{}: the history's anchor is {:?}, the plan's {:?}: the combine step records the night into the history the plan restored",
            cmd.history_root.display(),
            anchor_ref.as_ref().map(|a| &a.run_id),
            plan.anchor_run_id
        )));
    }
    Ok(anchor_ref)
}

/// Where the night is recorded: the command's own history, evidence and package when every
/// shard delivered; else a scratch copy of the history under `scratch` (the shards' packages
/// stay in the run, and a re-run of the failed shard jobs records the whole night).
fn recorded_into(
    cmd: &CombineCommand,
    record: &ShardsRecord,
    scratch: &std::path::Path,
) -> Result<CombineCommand, ShardError> {
    if record.complete {
        return Ok(cmd.clone());
    }
    let history = scratch.join("history");
    if cmd.history_root.is_dir() {
        crate::fsx::copy_tree(&cmd.history_root, &history).map_err(io(&cmd.history_root))?;
    }
    Ok(CombineCommand {
        history_root: history,
        evidence_root: scratch.join("runs"),
        package: scratch.join("package"),
        ..cmd.clone()
    })
}

/// The gate failures of an incomplete night: one per shard that delivered no evidence, naming
/// its missing targets.
fn incomplete_failures(record: &ShardsRecord) -> Vec<String> {
    record
        .shards
        .iter()
        .filter(|e| !e.delivered())
        .map(|e| {
            format!(
                "incomplete night: shard {} of {} delivered no evidence ({}); its targets {} are missing; nothing is recorded: re-run the failed shard job to record the night",
                e.shard,
                record.count,
                e.reason.as_deref().unwrap_or("no package"),
                e.targets.join(", ")
            )
        })
        .collect()
}

/// Write the night: the shards' evidence and the combined evidence under the evidence root, the
/// run appended to the candidate history, the combined evidence bound and packed.
#[allow(clippy::too_many_arguments)]
fn record_night(
    cmd: &CombineCommand,
    plan: &Plan,
    suite: &Suite,
    suite_source: crate::suite::SuiteSource,
    record: &ShardsRecord,
    fetched: &[super::fetch::Fetched],
    verified: &[Verified],
    anchor_ref: Option<&crate::history_check::AnchorRef>,
) -> Result<(RunOutcome, (Digest, u64)), ShardError> {
    let delivered: Vec<(u32, _)> = verified
        .iter()
        .map(|v| (v.shard, v.results.clone()))
        .collect();
    let merged =
        merge_results(plan, suite, &delivered).map_err(|e| ShardError::Integrity(e.to_string()))?;
    // Every check passed: from here on the night is written.
    for f in fetched {
        crate::fsx::copy_tree(&f.root, &cmd.evidence_root).map_err(io(&cmd.evidence_root))?;
    }
    let git = GitInfo {
        commit: Some(plan.commit.clone()),
        dirty: Some(false),
        dirty_files: Vec::new(),
    };
    let run_dir = cmd.evidence_root.join(&plan.run_id);
    crate::bench::harness::write_results(&run_dir, &merged).map_err(crate::run::RunError::from)?;
    let mut summary =
        crate::run::build_summary(suite, &merged, &git, Some(&cmd.evidence_artifact_name))?;
    summary.shards = Some(record.clone());
    let anchor = crate::run::anchor_summary(&cmd.history_root, anchor_ref)?;
    let comparison = compare(
        suite,
        &cmd.history_root,
        &summary,
        anchor.as_ref(),
        verified,
    )?;
    write_manifest(plan, suite, &merged, &git, record, verified, &run_dir)?;
    crate::json::write(&run_dir.join("plan.json"), plan)?;
    let mut evidence_dirs = vec![plan.run_id.clone()];
    evidence_dirs.extend(
        verified
            .iter()
            .flat_map(|v| &v.record.rechecks)
            .map(|r| crate::recheck::recheck_run_id(&plan.run_id, &r.key)),
    );
    let ran = crate::run::decide::decide(crate::run::decide::Measured {
        suite,
        suite_source,
        profile: plan.profile.clone(),
        run_id: plan.run_id.clone(),
        history_root: &cmd.history_root,
        evidence_root: &cmd.evidence_root,
        anchor_candidate: plan.anchor_candidate,
        results: merged,
        summary,
        anchor,
        comparison,
        evidence_dirs,
        // Each shard job measured its own targets: their phases are in the shards' records.
        timings: vec![],
    })?;
    bind::bind(&bind::BindRequest {
        run_id: &plan.run_id,
        evidence_root: &cmd.evidence_root,
        history_root: &cmd.history_root,
        commit: &plan.commit,
        dirty: false,
        dirty_files: &[],
        evidence_artifact_name: Some(&cmd.evidence_artifact_name),
    })?;
    let r = &plan.run_id;
    let rels = [
        format!("{r}/manifest.json"),
        format!("{r}/results"),
        format!("{r}/report.md"),
        format!("{r}/plan.json"),
    ];
    let packed = pack_paths(&cmd.evidence_root, &rels, &cmd.package)?;
    Ok((ran.outcome, packed))
}

/// The shards record: every shard of the plan, delivered (artifact, digest) or missing (why).
fn shards_record(
    plan: &Plan,
    fetched: &[super::fetch::Fetched],
    missing: &[(u32, String)],
) -> ShardsRecord {
    let shards: Vec<ShardEntry> = plan
        .assignments
        .iter()
        .map(|a| {
            let f = fetched.iter().find(|f| f.shard == a.shard);
            ShardEntry {
                shard: a.shard,
                targets: a.targets.clone(),
                status: if f.is_some() { DELIVERED } else { MISSING }.into(),
                artifact: f.map(|f| f.meta.name.clone()),
                digest: f.map(|f| f.digest.clone()),
                reason: missing
                    .iter()
                    .find(|(k, _)| *k == a.shard)
                    .map(|(_, why)| why.clone()),
            }
        })
        .collect();
    ShardsRecord {
        count: plan.shards,
        plan_digest: plan.digest(),
        complete: shards.iter().all(ShardEntry::delivered),
        shards,
    }
}

/// The whole night's comparison, as promotion recomputes one: the comparison of the combined
/// summary, the shards' recorded rechecks pooled in, then their side-by-side records.
fn compare(
    suite: &Suite,
    history_root: &std::path::Path,
    summary: &crate::history::model::Summary,
    anchor: Option<&crate::history::model::Summary>,
    verified: &[Verified],
) -> Result<crate::history::model::RegressionSummary, ShardError> {
    let th = suite.threshold_book();
    let noise = match anchor {
        Some(_) => NoiseHistory::for_run(history_root, suite, summary)?,
        None => NoiseHistory::default(),
    };
    let first = crate::regress::compare_in(summary, anchor, &th, &noise)?;
    let Some(anchor) = anchor else {
        return Ok(first);
    };
    let rechecks: Vec<RecheckResult> = verified
        .iter()
        .flat_map(|v| &v.record.rechecks)
        .map(RecheckResult::from)
        .collect();
    let rechecked = crate::recheck::apply(first, summary, anchor, &rechecks, &th, &noise);
    let suspects =
        crate::confirmation::suspected(&rechecked, summary, &crate::confirmation::blind_too(suite));
    let blocks: Vec<(u32, _)> = verified
        .iter()
        .filter_map(|v| v.record.side_by_side.clone().map(|b| (v.shard, b)))
        .collect();
    let block =
        merge_side_by_side(&blocks, &suspects).map_err(|e| ShardError::Integrity(e.to_string()))?;
    Ok(match block {
        Some(b) => crate::confirmation::apply(rechecked, summary, anchor, b),
        None => rechecked,
    })
}

/// `<run_id>/manifest.json` of the combined run: the merged results' identity, the shards record,
/// and each shard's attestation records under `shard-<K>`.
fn write_manifest(
    plan: &Plan,
    suite: &Suite,
    merged: &crate::bench::result::ResultsFile,
    git: &GitInfo,
    record: &ShardsRecord,
    verified: &[Verified],
    run_dir: &std::path::Path,
) -> Result<(), ShardError> {
    let attestation: serde_json::Map<String, serde_json::Value> = verified
        .iter()
        .filter_map(|v| {
            v.attestation
                .clone()
                .map(|a| (format!("shard-{}", v.shard), a))
        })
        .collect();
    let manifest = Manifest {
        schema_version: MANIFEST_SCHEMA_VERSION,
        run_id: Some(plan.run_id.clone()),
        recheck_of: None,
        created_at: merged.timestamp.clone(),
        git: git.clone(),
        suite: SuiteRecord {
            name: suite.suite_name.clone(),
            version: suite.version,
            config_digest: suite.config_digest().to_string(),
            profile: plan.profile.clone(),
        },
        toolchain: Toolchain::current(),
        environment: merged.environment.clone(),
        attestation: (!attestation.is_empty()).then_some(serde_json::Value::Object(attestation)),
        files: ManifestFiles {
            results_json: crate::evidence::results_rel(&plan.run_id),
            report_md: crate::evidence::report_rel(&plan.run_id),
        },
        runner_class: plan.runner_class.clone(),
        shard: None,
        shards: Some(record.clone()),
    };
    crate::json::write(&run_dir.join(crate::evidence::MANIFEST_FILE), &manifest)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(shard: u32, targets: &[&str], delivered: bool, reason: Option<&str>) -> ShardEntry {
        ShardEntry {
            shard,
            targets: targets.iter().map(|t| t.to_string()).collect(),
            status: if delivered { DELIVERED } else { MISSING }.into(),
            artifact: None,
            digest: None,
            reason: reason.map(str::to_string),
        }
    }

    #[test]
    fn incomplete_failures_rows() {
        let record = |shards: Vec<ShardEntry>| ShardsRecord {
            count: 3,
            plan_digest: Digest::parse(&format!("sha256:{}", "0".repeat(64))).unwrap(),
            complete: shards.iter().all(ShardEntry::delivered),
            shards,
        };
        let line = |k: u32, why: &str, targets: &str| {
            format!(
                "incomplete night: shard {k} of 3 delivered no evidence ({why}); its targets {targets} are missing; nothing is recorded: re-run the failed shard job to record the night"
            )
        };
        let rows: [(ShardsRecord, Vec<String>); 3] = [
            (
                record(vec![
                    entry(1, &["a"], true, None),
                    entry(2, &["b"], true, None),
                ]),
                vec![],
            ),
            (
                record(vec![
                    entry(1, &["a"], true, None),
                    entry(2, &["b", "c"], false, Some("the job failed")),
                    entry(3, &["d"], false, None),
                ]),
                vec![
                    line(2, "the job failed", "b, c"),
                    line(3, "no package", "d"),
                ],
            ),
            (
                record(vec![entry(1, &[], false, None)]),
                vec![line(1, "no package", "")],
            ),
        ];
        for (record, want) in rows {
            assert_eq!(incomplete_failures(&record), want);
        }
    }
}
