//! Promotion of a combined run (docs/sharding.md §5): the run's evidence is its combined package
//! plus one package per shard. Each delivered shard's package must be given (found by its
//! artifact name), hash to the digest the summary and the combined manifest record, hold only
//! its shard's paths and verify as the combine step verified it; the packages are unpacked beside
//! the combined evidence (no path written twice) and the merged results must be what the shards'
//! results merge into. The evidence checks of §6.2 item 14 then run on the assembled tree.

use super::PromoteError;
use crate::archive::{self, ExtractPolicy};
use crate::digest::Digest;
use crate::evidence::manifest::Manifest;
use crate::history::shards::{ShardEntry, ShardsRecord};
use crate::shards::Plan;
use crate::shards::layout::member_allowed;
use crate::shards::merge::merge_results;
use crate::suite::Suite;
use std::path::{Path, PathBuf};

fn invalid(m: impl Into<String>) -> PromoteError {
    PromoteError::Invalid(m.into())
}

fn integrity(m: impl Into<String>) -> PromoteError {
    PromoteError::Integrity(m.into())
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PromoteError + '_ {
    move |source| PromoteError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The shard package named `name` among `archives` (by file name).
fn find<'a>(archives: &'a [PathBuf], name: &str) -> Option<&'a PathBuf> {
    archives
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
}

/// The combined run's evidence with every delivered shard's package unpacked beside it, in a
/// temporary directory (the inputs stay untouched).
pub(crate) fn assemble(
    evidence_root: &Path,
    archives: &[PathBuf],
    run_id: &str,
    record: &ShardsRecord,
    suite: &Suite,
) -> Result<tempfile::TempDir, PromoteError> {
    let plan = combined_plan(evidence_root, run_id, record)?;
    let tree = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("shards"))
        .tempdir()
        .map_err(io(Path::new("<tmp>")))?;
    crate::fsx::copy_tree(evidence_root, tree.path()).map_err(io(evidence_root))?;
    let mut delivered = Vec::new();
    for entry in record.delivered() {
        unpack_shard(tree.path(), archives, run_id, entry)?;
        let v = crate::shard::verify::verify_at(tree.path(), entry.shard, &plan, suite)
            .map_err(|e| integrity(e.to_string()))?;
        delivered.push((entry.shard, v.results));
    }
    let merged = merge_results(&plan, suite, &delivered).map_err(|e| integrity(e.to_string()))?;
    let results_path = tree.path().join(crate::evidence::results_rel(run_id));
    let stored: crate::bench::result::ResultsFile =
        crate::json::read(&results_path).map_err(|e| invalid(format!("combined results: {e}")))?;
    if stored != merged {
        return Err(invalid(format!(
            "{}: the combined results differ from what the shards' results merge into",
            crate::evidence::results_rel(run_id)
        )));
    }
    Ok(tree)
}

/// The plan of a complete combined run, as its evidence holds it: the summary's shards record
/// is valid and complete, and the combined manifest and plan are the ones it records.
fn combined_plan(
    evidence_root: &Path,
    run_id: &str,
    record: &ShardsRecord,
) -> Result<Plan, PromoteError> {
    if let Some(p) = record.problem() {
        return Err(invalid(format!("summary shards: {p}")));
    }
    if !record.complete {
        return Err(invalid(format!(
            "run {run_id:?} is an incomplete sharded night ({} of {} shards delivered): it is never an anchor",
            record.delivered().count(),
            record.count
        )));
    }
    let manifest_path = evidence_root
        .join(run_id)
        .join(crate::evidence::MANIFEST_FILE);
    let manifest: Manifest = crate::json::read(&manifest_path)
        .map_err(|e| invalid(format!("combined evidence manifest: {e}")))?;
    if manifest.shards.as_ref() != Some(record) {
        return Err(integrity(format!(
            "{}: its shards record differs from the summary's",
            manifest_path.display()
        )));
    }
    let plan_path = evidence_root.join(run_id).join("plan.json");
    let plan: Plan = crate::json::read(&plan_path)
        .map_err(|e| invalid(format!("combined evidence plan: {e}")))?;
    if plan.digest() != record.plan_digest || plan.run_id != run_id {
        return Err(integrity(format!(
            "{}: digest {} and run {:?} differ from the summary's plan {} of run {run_id:?}",
            plan_path.display(),
            plan.digest(),
            plan.run_id,
            record.plan_digest
        )));
    }
    Ok(plan)
}

/// Unpack the package of shard `entry` (found among `archives` by its artifact name, with the
/// digest the summary records) into `tree`: only its shard's paths, none already there.
fn unpack_shard(
    tree: &Path,
    archives: &[PathBuf],
    run_id: &str,
    entry: &ShardEntry,
) -> Result<(), PromoteError> {
    let name = entry.artifact.as_deref().unwrap_or_default();
    let Some(file) = find(archives, name) else {
        return Err(invalid(format!(
            "--shard-archives: the package {name} of shard {} is not among the {} given",
            entry.shard,
            archives.len()
        )));
    };
    let found = Digest::of_file(file).map_err(io(file))?;
    if Some(&found) != entry.digest.as_ref() {
        return Err(integrity(format!(
            "shard package {}: digest {found} differs from the recorded {:?}",
            file.display(),
            entry.digest
        )));
    }
    let staged = tempfile::Builder::new()
        .prefix(&crate::fsx::stale::temp_prefix("shard"))
        .tempdir()
        .map_err(io(Path::new("<tmp>")))?;
    let dest = staged.path().join("x");
    let policy = ExtractPolicy {
        strip_prefixes: vec![],
        allowed_in_dirs: vec![],
        ..ExtractPolicy::history()
    };
    let report = archive::extract_safe(file, &dest, &policy)?;
    for f in &report.files {
        if !member_allowed(run_id, entry.shard, &entry.targets, f) {
            return Err(integrity(format!(
                "shard package {name}: member {f:?} lies outside shard {}'s evidence",
                entry.shard
            )));
        }
        let to = tree.join(f);
        if to.exists() {
            return Err(integrity(format!(
                "shard package {name}: member {f:?} is already in the run's evidence"
            )));
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(dest.join(f), &to).map_err(io(&to))?;
    }
    Ok(())
}
