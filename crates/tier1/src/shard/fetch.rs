//! The combine step's download of the shards' packages (docs/sharding.md §4): from the artifacts
//! of the plan's workflow run, for each shard the package of the newest attempt between the
//! plan's and the current one; its bytes must hash to the listed digest, and the safe extraction
//! into a staging directory may hold only the paths that shard may write. A shard without a
//! package is missing; an incomplete listing that might hide one refuses the night.

use super::error::{ShardError, io};
use crate::archive::{self, ExtractPolicy};
use crate::artifacts::ArtifactPrefix;
use crate::digest::{Digest, Hasher};
use crate::restore::provenance::artifact_rejection;
use crate::shards::Plan;
use crate::shards::layout::member_allowed;
use crate::store::{ArtifactMeta, ArtifactStore};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One shard's package, downloaded, verified and extracted.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    /// The shard.
    pub(crate) shard: u32,
    /// Its artifact.
    pub(crate) meta: ArtifactMeta,
    /// Its verified digest.
    pub(crate) digest: Digest,
    /// Where it was extracted (an evidence root of its own).
    pub(crate) root: PathBuf,
}

/// The shards' packages: `Fetched` per delivered shard, and `(shard, reason)` per missing one.
pub(crate) type Shards = (Vec<Fetched>, Vec<(u32, String)>);

/// A sink that hashes what passes into a file.
struct Hashing<'a> {
    file: &'a mut std::fs::File,
    hasher: Hasher,
}

impl Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The shards [`select`] found a package for (with it) and those it found none for.
pub(crate) struct Selection {
    found: Vec<(u32, ArtifactMeta)>,
    missing: Vec<u32>,
}

/// The newest package of each shard of `plan` among the run's artifacts (attempts from the
/// plan's to `current_attempt`).
pub(crate) fn select(
    store: &dyn ArtifactStore,
    plan: &Plan,
    current_attempt: u32,
) -> Result<Selection, ShardError> {
    let prefix = ArtifactPrefix::parse(&plan.artifact_prefix)
        .map_err(|m| ShardError::Invalid(format!("plan artifact_prefix: {m}")))?;
    let listing = store.list_run_artifacts(plan.workflow_run_id, &artifact_rejection)?;
    if let Some(s) = listing
        .skipped
        .iter()
        .find(|s| prefix.shard_parts(&s.name).is_some())
    {
        return Err(ShardError::Integrity(format!(
            "shard package {} of run {} has no trustworthy provenance: {}",
            s.name, plan.workflow_run_id, s.reason
        )));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for k in 1..=plan.shards {
        let newest = listing
            .items
            .iter()
            .filter(|a| {
                prefix
                    .shard_parts(&a.name)
                    .is_some_and(|(run, attempt, shard)| {
                        run == plan.workflow_run_id
                            && shard == k
                            && (plan.attempt..=current_attempt).contains(&attempt)
                    })
            })
            .max_by_key(|a| (prefix.shard_parts(&a.name).map(|p| p.1), a.id));
        match newest {
            Some(a) => found.push((k, a.clone())),
            None if listing.truncated => {
                return Err(ShardError::Integrity(format!(
                    "the artifact listing of run {} is incomplete and holds no package of shard {k}: refusing to record the night without it",
                    plan.workflow_run_id
                )));
            }
            None => missing.push(k),
        }
    }
    Ok(Selection { found, missing })
}

/// Download, verify and extract one shard's package into `dest` (absent or empty).
pub(crate) fn fetch_one(
    store: &dyn ArtifactStore,
    plan: &Plan,
    shard: u32,
    meta: &ArtifactMeta,
    work: &Path,
    dest: &Path,
) -> Result<Fetched, ShardError> {
    let listed = meta
        .digest
        .as_deref()
        .map(Digest::parse)
        .and_then(Result::ok)
        .ok_or_else(|| {
            ShardError::Integrity(format!(
                "shard package {} (id {}): expected a sha256:<64 hex> digest in its record, found {:?}",
                meta.name, meta.id, meta.digest
            ))
        })?;
    let file = work.join(format!("{}.zip", meta.name));
    let mut f = std::fs::File::create(&file).map_err(io(&file))?;
    let mut sink = Hashing {
        file: &mut f,
        hasher: Hasher::new(),
    };
    store.download(meta, &mut sink, archive::MAX_ARCHIVE_BYTES)?;
    sink.flush().map_err(io(&file))?;
    let found = sink.hasher.finish();
    drop(f);
    if found != listed {
        return Err(ShardError::Integrity(format!(
            "shard package {} (id {}): downloaded digest {found} differs from the listed {listed} (tampered or corrupted evidence)",
            meta.name, meta.id
        )));
    }
    let policy = ExtractPolicy {
        strip_prefixes: vec![],
        allowed_in_dirs: vec![],
        ..ExtractPolicy::history()
    };
    let report = archive::extract_safe(&file, dest, &policy).map_err(|e| match e {
        archive::ArchiveError::Io { path, source } => ShardError::Io { path, source },
        other => ShardError::Integrity(format!("shard package {}: {other}", meta.name)),
    })?;
    let keys = plan.targets_of(shard).unwrap_or_default();
    if let Some(bad) = report
        .files
        .iter()
        .find(|f| !member_allowed(&plan.run_id, shard, keys, f))
    {
        return Err(ShardError::Integrity(format!(
            "shard package {}: member {bad:?} lies outside shard {shard}'s evidence (its own directory, its targets' side-by-side comparisons and rechecks)",
            meta.name
        )));
    }
    Ok(Fetched {
        shard,
        meta: meta.clone(),
        digest: found,
        root: dest.to_path_buf(),
    })
}

/// [`select`], then [`fetch_one`] for every shard found (into `<work>/shard-<K>`).
pub(crate) fn fetch_all(
    store: &dyn ArtifactStore,
    plan: &Plan,
    current_attempt: u32,
    work: &Path,
) -> Result<Shards, ShardError> {
    let Selection { found, missing } = select(store, plan, current_attempt)?;
    let mut fetched = Vec::new();
    for (k, meta) in &found {
        if meta.expired {
            return Err(ShardError::Integrity(format!(
                "shard package {} (id {}) of this run has expired",
                meta.name, meta.id
            )));
        }
        let dest = work.join(format!("shard-{k}"));
        fetched.push(fetch_one(store, plan, *k, meta, work, &dest)?);
    }
    let missing = missing
        .into_iter()
        .map(|k| {
            (
                k,
                format!(
                    "no package {} of this run: the shard job failed before its upload, was cancelled, or did not run",
                    ArtifactPrefix::parse(&plan.artifact_prefix)
                        .map(|p| p.shard(plan.workflow_run_id, plan.attempt, k))
                        .unwrap_or_default()
                ),
            )
        })
        .collect();
    Ok((fetched, missing))
}
