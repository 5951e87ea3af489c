//! The `ArtifactStore` trait: read access to runs and artifacts, what restore and the publication
//! jobs need, the vault of sealed history segments, and the reference's bootstrap hint.

use super::error::{StoreError, skipped_error};
use super::records::{ArtifactMeta, ArtifactRule, Downloaded, Listing, WorkflowRun};
use super::vault::VaultObject;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Read access to runs and artifacts: everything restore and the publication jobs need.
/// Implementations are synchronous; the GitHub backend drives its own runtime.
pub trait ArtifactStore {
    /// `owner/name` this store serves.
    fn repository(&self) -> &str;

    /// "Now" for age checks (the local store allows a fixed clock for tests).
    fn now(&self) -> DateTime<Utc>;

    /// Runs of `workflow` (file name, e.g. `tier1-nightly.yml`) on `branch` of every status (in
    /// progress and completed, failed ones included), newest first, at most `cap`; `truncated`
    /// when more may exist. Restore judges a run by its artifacts, not its status: a publishing
    /// job's run is completed only seconds after the job released the publication lock
    /// (docs/github-store.md, "Why runs of every status").
    fn list_runs(
        &self,
        workflow: &str,
        branch: &str,
        cap: usize,
    ) -> Result<Listing<WorkflowRun>, StoreError> {
        self.list_runs_where(workflow, branch, cap, &|_| true)
    }

    /// [`list_runs`](ArtifactStore::list_runs) of the runs `keep` accepts, applied before the
    /// cap: the caller's rule (restore's provenance rule) decides which runs count.
    fn list_runs_where(
        &self,
        workflow: &str,
        branch: &str,
        cap: usize,
        keep: &dyn Fn(&WorkflowRun) -> bool,
    ) -> Result<Listing<WorkflowRun>, StoreError>;

    /// One run by id.
    fn get_run(&self, run_id: u64) -> Result<WorkflowRun, StoreError>;

    /// Artifacts uploaded by a run (expired ones included, flagged), the newest per name of the
    /// records `reject` accepts (the caller's provenance rule: `ArtifactRule`; a record it
    /// rejects is listed as skipped, with its reason).
    fn list_run_artifacts(
        &self,
        run_id: u64,
        reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError>;

    /// Artifacts of the repository with exactly this name, newest first, of the records `reject`
    /// accepts (`ArtifactRule`).
    fn find_artifacts_by_name(
        &self,
        name: &str,
        reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError>;

    /// The artifact named `name` uploaded by run `run_id`, of the records `reject` accepts
    /// (`ArtifactRule`); where a re-run uploaded the name twice, the one with the highest id.
    /// `NotFound` when the run has none.
    fn find_run_artifact(
        &self,
        run_id: u64,
        name: &str,
        reject: ArtifactRule<'_>,
    ) -> Result<ArtifactMeta, StoreError> {
        let listing = self.list_run_artifacts(run_id, reject)?;
        pick_run_artifact(listing, run_id, name, || StoreError::Corrupt {
            path: format!("artifacts of run {run_id}"),
            message: format!("listing is incomplete and does not contain {name:?}"),
        })
    }

    /// Stream an artifact's bytes into `sink`, hashing as they pass, refusing more than `cap` bytes.
    /// The caller compares the returned digest with the metadata's.
    fn download(
        &self,
        artifact: &ArtifactMeta,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError>;

    /// The vault objects named `names` that exist, by name: metadata only (size and the SHA-256
    /// the store computed), nothing downloaded (docs/formats.md, "A history that lasts").
    fn vault_find(&self, names: &[String]) -> Result<BTreeMap<String, VaultObject>, StoreError>;

    /// Store the file at `path` as the vault object `name` holding the file `file_name`. An
    /// object is never replaced: one that exists with the same bytes (by the store's size and
    /// digest) is returned as it is, one with other bytes is an integrity error.
    fn vault_put(
        &self,
        name: &str,
        file_name: &str,
        path: &Path,
    ) -> Result<VaultObject, StoreError>;

    /// Stream a vault object's bytes into `sink`, hashing as they pass, refusing more than `cap`
    /// bytes or a length other than the object's recorded size. The caller compares the digest.
    fn vault_download(
        &self,
        object: &VaultObject,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError>;

    /// How an operator establishes the first anchor in this store; restore ends its "no history"
    /// refusal with it.
    fn bootstrap_hint(&self) -> String {
        GITHUB_BOOTSTRAP_HINT.to_string()
    }

    /// The store's own files and directories, for a store on this machine: an output root may
    /// neither lie inside nor contain any of them. Empty for a remote store.
    fn own_paths(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

/// The reference's bootstrap instruction for GitHub Actions.
pub(crate) const GITHUB_BOOTSTRAP_HINT: &str = "Run one manual main-branch dispatch with bootstrap_history enabled to establish the canonical B200 anchor.";

/// Run `run_id`'s artifact named `name` out of `listing` (the highest id where a re-run uploaded
/// it twice), or why there is none: a skipped record of that name, an incomplete listing
/// (`incomplete`), or none at all.
pub(super) fn pick_run_artifact(
    listing: Listing<ArtifactMeta>,
    run_id: u64,
    name: &str,
    incomplete: impl FnOnce() -> StoreError,
) -> Result<ArtifactMeta, StoreError> {
    let found = listing
        .items
        .into_iter()
        .filter(|a| a.name == name)
        .max_by_key(|a| a.id);
    match found {
        Some(a) => Ok(a),
        None if listing.skipped.iter().any(|s| s.name == name) => {
            Err(skipped_error(&listing.skipped, run_id, name))
        }
        None if listing.truncated => Err(incomplete()),
        None => Err(StoreError::NotFound {
            what: format!("artifact {name:?} of run {run_id}"),
        }),
    }
}
