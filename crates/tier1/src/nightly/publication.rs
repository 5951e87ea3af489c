//! The publication job (normal) or the protected promotion (accept) after a producer, each
//! restoring live history again under the class's short publication lock, then the published
//! package delivered: uploaded, copied to `--history-out`, its sealed segments vaulted. Which
//! path and what the job's exit becomes is in [`decide`](super::decide).

use super::NightlyOutcome;
use super::decide::{self, Publication};
use super::jobs::{JobError, Plan, checkpoint, io, json, restore_into};
use crate::archive;
use crate::exit::Exit;
use crate::history_check::restorable::would_restore_accept;
use crate::promote::{self, PromoteRequest};
use crate::publish::{self, MergeRequest};
use crate::store::local::LocalStore;
use crate::store::{ArtifactMeta, ArtifactStore};
use crate::suite::{RunNames, Suite};
use std::path::{Path, PathBuf};

/// What the producer (or a sharded night's combine step) left for the publication job.
pub(super) struct Produced<'a> {
    /// The candidate history.
    pub(super) history_dir: PathBuf,
    /// The run id.
    pub(super) run_id: String,
    /// The evidence artifact's name.
    pub(super) evidence_name: String,
    /// The uploaded evidence.
    pub(super) evidence: ArtifactMeta,
    /// Its packed digest.
    pub(super) evidence_digest: String,
    /// `<run>-<attempt>`.
    pub(super) suffix: String,
    /// The suite.
    pub(super) suite: &'a Suite,
    /// The run's own exit (its gate).
    pub(super) run_exit: Exit,
    /// The gate's message when it failed.
    pub(super) gate_message: Option<String>,
    /// A sharded night's uploaded shard packages (promotion downloads them).
    pub(super) shards: Vec<ArtifactMeta>,
}

/// Publication job (normal) or protected promotion (accept), each restoring live history again
/// under the class's short publication lock (the producer lock is released first, as the jobs
/// differ). Returns the job's verdict.
pub(super) fn publish(
    plan: &Plan<'_>,
    out: &mut NightlyOutcome,
    p: &Produced<'_>,
) -> Result<Exit, JobError> {
    let Plan {
        req,
        names,
        store,
        work,
        auto_bootstrap,
        class,
        ..
    } = *plan;
    checkpoint()?;
    let _publication =
        super::locks::acquire(&req.store_dir, &super::locks::publication_group(class))?;
    let published = work.join("published");
    // An automatic first anchor whose store got its first history from another job meanwhile
    // (two first nights at once) is published as evidence against that anchor, not lost.
    let raced = req.accept && auto_bootstrap && !first_history_missing(store, names)?;
    let path = decide::publication(req.accept, auto_bootstrap, raced);
    if path == Publication::MergeAfterRace {
        tracing::warn!(
            "another job published the first history while this one ran: publishing this run as evidence against that anchor instead of as a second first anchor"
        );
        out.accept = false;
        out.requester = None;
    }
    out.publication = if path == Publication::Promote {
        promote_run(plan, p, &published)?
    } else {
        merge_run(plan, p, &published)?
    };
    deliver(plan, out, &p.suffix, &published)?;
    let (exit, failure) = decide::published_exit(
        path == Publication::Promote,
        p.run_exit,
        p.gate_message.as_deref(),
    );
    if path != Publication::Promote {
        out.failure = failure;
    }
    Ok(exit)
}

/// The acceptance path: live history restored (renewal allowed), the evidence and shard
/// packages downloaded and checked, then promoted into `published`. Returns the promotion's
/// result.
fn promote_run(
    plan: &Plan<'_>,
    p: &Produced<'_>,
    published: &Path,
) -> Result<Option<serde_json::Value>, JobError> {
    let Plan {
        req,
        store,
        wf,
        work,
        class,
        ..
    } = *plan;
    let live = work.join("live");
    let live_restored = restore_into(plan, &live, true, req.bootstrap)?;
    let evidence_root = work.join("evidence");
    download_evidence(store, &p.evidence, &p.evidence_digest, work, &evidence_root)?;
    let shard_archives = download_shards(store, &p.shards, work)?;
    let store_name = store.repository().trim_start_matches("local/").to_string();
    let promoted = promote::promote(&PromoteRequest {
        history_root: p.history_dir.clone(),
        evidence_root,
        run_id: p.run_id.clone(),
        requester: req.requester.clone().unwrap_or_default(),
        note: req.note.clone().unwrap_or_default(),
        workflow_run: format!("local://{store_name}/actions/runs/{}", wf.id),
        expected_git_commit: plan.git.commit.clone().unwrap_or_default(),
        expected_evidence_artifact: p.evidence_name.clone(),
        expected_evidence_digest: p.evidence_digest.clone(),
        canonical_history_root: live_restored.history_restored.then(|| live.clone()),
        output_history_root: published.to_path_buf(),
        suite_config: req.suite_config.clone(),
        repo_root: req.repo_root.clone(),
        allow_bootstrap: req.bootstrap,
        reviewers: vec![],
        allow_local_workflow_run: true,
        runner_class: class.map(str::to_string),
        shard_archives,
    })?;
    Ok(json(&promoted))
}

/// The normal path: live history restored (it must exist), then the candidate's run merged into
/// it as `published`. Returns the merge's result.
fn merge_run(
    plan: &Plan<'_>,
    p: &Produced<'_>,
    published: &Path,
) -> Result<Option<serde_json::Value>, JobError> {
    let live = plan.work.join("live");
    let live_restored = restore_into(plan, &live, false, false)?;
    if !live_restored.history_restored {
        return Err(JobError::NoCanonicalHistory);
    }
    let merged = publish::merge(
        &MergeRequest {
            candidate_root: p.history_dir.clone(),
            canonical_root: live,
            output_root: published.to_path_buf(),
            run_id: p.run_id.clone(),
            runner_class: plan.class.map(str::to_string),
        },
        p.suite,
    )?;
    Ok(json(&merged))
}

/// The published package uploaded under the workflow's name, copied to `--history-out`, and
/// its pending segments stored in the vault.
fn deliver(
    plan: &Plan<'_>,
    out: &mut NightlyOutcome,
    suffix: &str,
    published: &Path,
) -> Result<(), JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        ..
    } = *plan;
    // The workflow's name: a night of the local store publishes as the nightly's job does.
    let history_name = names.artifact_prefix.publication(suffix, wf.run_attempt);
    // The one predicate every writer of a package applies (publish and promote did already).
    would_restore_accept(published)?;
    store.upload_dir_zipped(wf.id, &history_name, published, super::RETENTION_DAYS)?;
    out.history_artifact = Some(history_name);
    if let Some(dest) = &req.history_out {
        super::history_out::replace(published, dest).map_err(|source| JobError::HistoryOut {
            path: dest.display().to_string(),
            source,
        })?;
        out.history_out = Some(dest.display().to_string());
    }
    // The vault job: the published package's pending segments stored in the vault; the next
    // restore leaves them out of the package (docs/formats.md, "A history that lasts").
    let vaulted = crate::vault::push(
        store,
        &crate::vault::VaultRequest {
            history_root: published.to_path_buf(),
            artifact_prefix: names.artifact_prefix.clone(),
            deep: false,
        },
    )?;
    out.vault = json(&vaulted);
    Ok(())
}

/// Download a sharded night's shard packages as the promotion job does (each checked against its
/// listed digest), into `<work>/shard-archives/<name>`.
fn download_shards(
    store: &LocalStore,
    shards: &[ArtifactMeta],
    work: &Path,
) -> Result<Vec<PathBuf>, JobError> {
    let dir = work.join("shard-archives");
    let mut files = Vec::new();
    for meta in shards {
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let file = dir.join(&meta.name);
        let mut f = std::fs::File::create(&file).map_err(io(&file))?;
        let got = store.download(meta, &mut f, archive::MAX_ARCHIVE_BYTES)?;
        if meta.digest.as_deref() != Some(got.digest.as_str()) {
            return Err(JobError::Verify {
                name: meta.name.clone(),
                expected: meta.digest.clone().unwrap_or_else(|| "none".into()),
                found: got.digest.to_string(),
            });
        }
        files.push(file);
    }
    Ok(files)
}

/// True when the store still has no published history (a bootstrap is still the first anchor).
fn first_history_missing(store: &LocalStore, names: &RunNames) -> Result<bool, JobError> {
    let prefix = &names.artifact_prefix;
    Ok(!store
        .load()?
        .artifacts
        .iter()
        .any(|a| prefix.history_suffix(&a.name).is_some()))
}

/// Download the uploaded evidence (the packed zip) and unpack it as the promotion job does with the
/// artifact it downloads: digest checked against the packed one, then safely extracted.
fn download_evidence(
    store: &LocalStore,
    meta: &ArtifactMeta,
    digest: &str,
    work: &Path,
    dest: &Path,
) -> Result<(), JobError> {
    let zip = work.join("evidence-download.zip");
    let mut f = std::fs::File::create(&zip).map_err(io(&zip))?;
    store.download(meta, &mut f, archive::MAX_ARCHIVE_BYTES)?;
    drop(f);
    promote::inputs::unpack_evidence_archive(&zip, digest, dest)?;
    Ok(())
}
