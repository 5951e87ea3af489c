//! The job chain of the local main job, step by step as the workflow runs it.

use super::{NightlyOutcome, NightlyRequest, RETENTION_DAYS};
use crate::archive;
use crate::evidence::git::GitInfo;
use crate::evidence::{EvidenceError, bind, pack};
use crate::exit::{Classify, Exit};
use crate::history_check::restorable::{PackageRefused, would_restore_accept};
use crate::promote::{self, PromoteRequest};
use crate::publish::{self, MergeRequest};
use crate::restore::{self, RestoreOptions, RestoreOutcome};
use crate::run::{self, RunRequest};
use crate::store::local::LocalStore;
use crate::store::{ArtifactMeta, ArtifactStore, StoreError, WorkflowRun};
use crate::suite::{RunNames, Suite};
use serde_json::Value;
use std::path::Path;

/// A step of the chain that failed; the chain stops there, as a failed job step does.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JobError {
    /// Restore refused.
    #[error("restore: {0}")]
    Restore(#[from] restore::RestoreError),
    /// The run could not start or complete.
    #[error("run: {0}")]
    Run(#[from] run::RunError),
    /// Bind or pack refused.
    #[error("evidence: {0}")]
    Evidence(#[from] EvidenceError),
    /// The store refused an upload or download.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// Publication refused.
    #[error("publish: {0}")]
    Publish(#[from] publish::PublishError),
    /// Promotion refused.
    #[error("promote: {0}")]
    Promote(#[from] promote::PromoteError),
    /// A sharded night's plan or combine step refused.
    #[error("shard: {0}")]
    Shard(#[from] crate::shard::ShardError),
    /// The package to upload is one restore would refuse (publish and promote check it too).
    #[error("publish: {0}")]
    Package(#[from] PackageRefused),
    /// The published history's sealed segments could not be stored in the vault (the history is
    /// published; its segments stay in the package until a later vault step stores them).
    #[error("vault: the history was published, its sealed segments stay in the package: {0}")]
    Vault(#[from] crate::vault::VaultError),
    /// The uploaded evidence is not what was packed.
    #[error("verify: uploaded evidence {name} has digest {found}, packed {expected}")]
    Verify {
        /// Artifact name.
        name: String,
        /// Packed digest.
        expected: String,
        /// Digest the store reports.
        found: String,
    },
    /// The publication job found no canonical history to merge into.
    #[error(
        "publish: no canonical history exists yet; establish the first anchor with --bootstrap --accept --note"
    )]
    NoCanonicalHistory,
    /// SIGINT or SIGTERM arrived between two steps.
    #[error("{0}")]
    Cancelled(crate::process::Cancelled),
    /// A concurrency group could not be taken (or the job was cancelled while queued on it).
    #[error("{0}")]
    Lock(#[from] super::locks::LockError),
    /// The published history could not be copied to `--history-out` (the history is published;
    /// the previous copy, if any, is unchanged).
    #[error(
        "--history-out {path}: the history was published but could not be copied here: {source}"
    )]
    HistoryOut {
        /// The destination.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Local I/O of the job's work directory.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

impl Classify for JobError {
    fn exit(&self) -> Exit {
        match self {
            JobError::Restore(e) => e.exit(),
            JobError::Run(e) => e.exit(),
            JobError::Evidence(e) => e.exit(),
            JobError::Store(e) => e.exit(),
            JobError::Publish(e) => e.exit(),
            JobError::Promote(e) => e.exit(),
            JobError::Shard(e) => e.exit(),
            JobError::Package(e) => e.exit(),
            JobError::Vault(e) => e.exit(),
            JobError::Verify { .. } => Exit::Integrity,
            JobError::NoCanonicalHistory => Exit::Unavailable,
            JobError::Io { source, .. } => crate::exit::of_io(source),
            JobError::Cancelled(_) => Exit::Cancelled,
            JobError::Lock(super::locks::LockError::Cancelled(..)) => Exit::Cancelled,
            JobError::Lock(super::locks::LockError::Store(e)) => e.exit(),
            JobError::HistoryOut { source, .. } => match source.kind() {
                std::io::ErrorKind::AlreadyExists => Exit::Conflict,
                _ => crate::exit::of_io(source),
            },
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Stop between steps when a cancellation was requested, as a cancelled job does.
fn checkpoint() -> Result<(), JobError> {
    crate::process::requested().map_or(Ok(()), |c| Err(JobError::Cancelled(c)))
}

fn json<T: serde::Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok()
}

/// Restore the class's live history into `dest`, as the workflow's restore steps do.
pub(super) fn restore_into(
    plan: &Plan<'_>,
    dest: &Path,
    renewal: bool,
    bootstrap: bool,
) -> Result<RestoreOutcome, JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        class,
        ..
    } = *plan;
    let opts = RestoreOptions {
        repository: store.repository().to_string(),
        workflow: names.workflow.clone(),
        branch: req.branch.clone(),
        current_run_id: Some(wf.id),
        destination: dest.to_path_buf(),
        allow_bootstrap: bootstrap,
        allow_anchor_renewal: renewal,
        artifact_prefix: names.artifact_prefix.clone(),
        runner_class: class.map(str::to_string),
    };
    Ok(restore::restore(store, &opts)?)
}

/// What the chain works with.
pub(super) struct Plan<'a> {
    /// The request (bootstrap and acceptance resolved).
    pub(crate) req: &'a NightlyRequest,
    /// The workflow and artifact names of this suite's runs.
    pub(crate) names: &'a RunNames,
    /// The store.
    pub(crate) store: &'a LocalStore,
    /// This job's recorded run.
    pub(crate) wf: &'a WorkflowRun,
    /// The checkout.
    pub(crate) git: &'a GitInfo,
    /// The job's work directory.
    pub(crate) work: &'a Path,
    /// The bootstrap was chosen automatically (no history was published when the job started).
    pub(crate) auto_bootstrap: bool,
    /// The runner class (docs/sharding.md); `names` carry its artifact prefix already.
    pub(crate) class: Option<&'a str>,
}

/// Producer job, then publication or promotion. Returns the job's verdict.
pub(super) fn chain(plan: &Plan<'_>, out: &mut NightlyOutcome) -> Result<Exit, JobError> {
    let Plan {
        req,
        names,
        store,
        wf,
        git,
        work,
        class,
        ..
    } = *plan;
    checkpoint()?;
    let mut producer = super::locks::acquire(&req.store_dir, super::locks::PRODUCER)?;
    let suffix = format!("{}-{}", wf.id, wf.run_attempt);
    let evidence_name = names.artifact_prefix.evidence(&suffix);
    let history_dir = work.join("history");
    let runs_dir = work.join("runs");

    // Producer: restore before anything runs.
    checkpoint()?;
    let restored = restore_into(plan, &history_dir, req.accept, req.bootstrap)?;
    out.restore = json(&restored);
    std::fs::create_dir_all(&history_dir).map_err(io(&history_dir))?;

    // Run the suite (continue-on-error on the acceptance path, as the workflow does).
    let commit = git.commit.clone().unwrap_or_default();
    let discovered = Suite::discover(
        req.suite_config.as_deref(),
        &req.repo_root,
        Some(&history_dir),
    )
    .map_err(run::RunError::from)?;
    let suite = discovered.suite;
    let profile = suite
        .class_profile(class, req.profile.as_deref())
        .map_err(|message| run::RunError::from(crate::suite::SuiteError::Choice { message }))?
        .unwrap_or_else(|| run::default_profile(&suite));
    let run_id = fresh_run_id(&history_dir, &producer.note(), &commit);
    producer.set_note(&run_id).map_err(io(work))?;
    out.run_id = Some(run_id.clone());
    let backend = run::backend_for(&suite, &profile).map_err(run::RunError::from)?;
    let run_req = RunRequest {
        suite: &suite,
        suite_source: discovered.source,
        profile,
        run_id: run_id.clone(),
        history_root: history_dir.clone(),
        evidence_root: runs_dir.clone(),
        backend,
        anchor_candidate: req.accept,
        attestation: None,
        git: git.clone(),
        repo_root: req.repo_root.clone(),
        allow_dirty: false,
        evidence_artifact_name: Some(evidence_name.clone()),
        hook: None,
        passes: None,
        runner_class: class.map(str::to_string),
        shard: None,
    };
    checkpoint()?;
    let ran = run::run(&run_req)?;
    let run_exit = ran.exit();
    out.run = json(&ran);
    out.ending = Some(ran.ending.clone());
    checkpoint()?;

    // Bind, pack, upload evidence, verify its digest; the candidate only after that.
    bind::bind(&bind::BindRequest {
        run_id: &run_id,
        evidence_root: &runs_dir,
        history_root: &history_dir,
        commit: &commit,
        dirty: git.dirty.unwrap_or(true),
        dirty_files: &git.dirty_files,
        evidence_artifact_name: Some(&evidence_name),
    })?;
    let zip = work.join(format!("{evidence_name}.zip"));
    let packed = pack::pack(&runs_dir, &run_id, &zip)?;
    let uploaded = upload_verified(store, wf.id, &evidence_name, &zip, &packed.digest)?;
    out.evidence = Some(
        serde_json::json!({"name": evidence_name, "id": uploaded.id, "digest": packed.digest, "bytes": packed.bytes}),
    );
    store.upload_dir_zipped(
        wf.id,
        &names.artifact_prefix.candidate_history(&suffix),
        &history_dir,
        RETENTION_DAYS,
    )?;

    drop(producer);
    publish(
        plan,
        out,
        &Produced {
            history_dir,
            run_id,
            evidence_name,
            evidence: uploaded,
            evidence_digest: packed.digest.to_string(),
            suffix,
            suite: &suite,
            run_exit,
            gate_message: ran.gate_message(),
            shards: Vec::new(),
        },
    )
}

/// What the producer (or a sharded night's combine step) left for the publication job.
pub(super) struct Produced<'a> {
    /// The candidate history.
    pub(super) history_dir: std::path::PathBuf,
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
        wf,
        work,
        auto_bootstrap,
        class,
        ..
    } = *plan;
    let Produced {
        history_dir,
        run_id,
        evidence_name,
        suffix,
        suite,
        run_exit,
        ..
    } = p;
    let commit = plan.git.commit.clone().unwrap_or_default();
    checkpoint()?;
    let _publication =
        super::locks::acquire(&req.store_dir, &super::locks::publication_group(class))?;
    let live = work.join("live");
    let published = work.join("published");
    // An automatic first anchor whose store got its first history from another job meanwhile
    // (two first nights at once) is published as evidence against that anchor, not lost.
    let accept = if req.accept && auto_bootstrap && !first_history_missing(store, names)? {
        tracing::warn!(
            "another job published the first history while this one ran: publishing this run as evidence against that anchor instead of as a second first anchor"
        );
        out.accept = false;
        out.requester = None;
        false
    } else {
        req.accept
    };
    if accept {
        let live_restored = restore_into(plan, &live, true, req.bootstrap)?;
        let evidence_root = work.join("evidence");
        download_evidence(store, &p.evidence, &p.evidence_digest, work, &evidence_root)?;
        let shard_archives = download_shards(store, &p.shards, work)?;
        let store_name = store.repository().trim_start_matches("local/").to_string();
        let promoted = promote::promote(&PromoteRequest {
            history_root: history_dir.clone(),
            evidence_root,
            run_id: run_id.clone(),
            requester: req.requester.clone().unwrap_or_default(),
            note: req.note.clone().unwrap_or_default(),
            workflow_run: format!("local://{store_name}/actions/runs/{}", wf.id),
            expected_git_commit: commit.clone(),
            expected_evidence_artifact: evidence_name.clone(),
            expected_evidence_digest: p.evidence_digest.clone(),
            canonical_history_root: live_restored.history_restored.then(|| live.clone()),
            output_history_root: published.clone(),
            suite_config: req.suite_config.clone(),
            repo_root: req.repo_root.clone(),
            allow_bootstrap: req.bootstrap,
            reviewers: vec![],
            allow_local_workflow_run: true,
            runner_class: class.map(str::to_string),
            shard_archives,
        })?;
        out.publication = json(&promoted);
    } else {
        let live_restored = restore_into(plan, &live, false, false)?;
        if !live_restored.history_restored {
            return Err(JobError::NoCanonicalHistory);
        }
        let merged = publish::merge(
            &MergeRequest {
                candidate_root: history_dir.clone(),
                canonical_root: live.clone(),
                output_root: published.clone(),
                run_id: run_id.clone(),
                runner_class: class.map(str::to_string),
            },
            suite,
        )?;
        out.publication = json(&merged);
    }
    // The workflow's name: a night of the local store publishes as the nightly's job does.
    let history_name = names.artifact_prefix.publication(suffix, wf.run_attempt);
    // The one predicate every writer of a package applies (publish and promote did already).
    would_restore_accept(&published)?;
    store.upload_dir_zipped(wf.id, &history_name, &published, RETENTION_DAYS)?;
    out.history_artifact = Some(history_name);
    if let Some(dest) = &req.history_out {
        super::history_out::replace(&published, dest).map_err(|source| JobError::HistoryOut {
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
            history_root: published.clone(),
            artifact_prefix: names.artifact_prefix.clone(),
            deep: false,
        },
    )?;
    out.vault = json(&vaulted);
    if !accept {
        out.failure = p.gate_message.clone();
    }
    // On the acceptance path a failing gate does not stop promotion (continue-on-error), but
    // promotion itself re-checks everything; the job's verdict is then the promotion's.
    Ok(if accept { Exit::Ok } else { *run_exit })
}

/// Upload `file` as the artifact `name` of run `run` (as is, like `archive: false`) and require the
/// digest the store records to be the packed one (the workflow's verify step).
pub(super) fn upload_verified(
    store: &LocalStore,
    run: u64,
    name: &str,
    file: &Path,
    packed: &crate::digest::Digest,
) -> Result<ArtifactMeta, JobError> {
    let uploaded = store.upload_file(run, name, file, RETENTION_DAYS)?;
    if uploaded.digest.as_deref() != Some(packed.as_str()) {
        return Err(JobError::Verify {
            name: name.to_string(),
            expected: packed.to_string(),
            found: uploaded.digest.unwrap_or_else(|| "none".into()),
        });
    }
    Ok(uploaded)
}

/// Download a sharded night's shard packages as the promotion job does (each checked against its
/// listed digest), into `<work>/shard-archives/<name>`.
fn download_shards(
    store: &LocalStore,
    shards: &[ArtifactMeta],
    work: &Path,
) -> Result<Vec<std::path::PathBuf>, JobError> {
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

/// The reference run id `YYYYMMDD_HHMMSS_tier1_nightly_<sha8>`; it has one-second resolution, so
/// when the restored history already holds this second's id, or the previous producer took it
/// (back-to-back or queued local runs), wait for the next second rather than change the format.
pub(super) fn fresh_run_id(history_dir: &Path, previous: &str, commit: &str) -> String {
    let mut id = run::default_run_id_now(Some(commit));
    for _ in 0..3 {
        if id != previous && !history_dir.join(&id).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1000));
        id = run::default_run_id_now(Some(commit));
    }
    id
}
