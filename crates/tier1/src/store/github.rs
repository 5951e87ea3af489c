//! `GithubStore`: the `ArtifactStore` backed by the GitHub REST API: runs with the provenance facts
//! their records report (workflow id, event, base and head repository names and ids) and the
//! provenance facts each artifact record reports (its uploading run's repository ids), judged by
//! the caller's rules (restore's, [`crate::restore::provenance`]) before anything else,
//! one unusable artifact record skipped and recorded rather than failing a listing, highest-id
//! artifacts per name, the token-free redirect download, and the approvals and the approval
//! environment's protection rules promotion needs. The vault of sealed history segments
//! (immutable releases) is `github_vault`.

use super::{
    ArtifactMeta, ArtifactProvenance, ArtifactRule, ArtifactStore, Downloaded, Listing,
    RepositoryRef, RunProvenance, Skipped, StoreError, VaultObject, WorkflowRun,
};
use crate::digest::Digest;
use crate::github::download::{Expected, download_artifact};
use crate::github::environments::{self, Environment};
use crate::github::types::{
    ApiApproval, ApiArtifact, ApiArtifactsPage, ApiJob, ApiJobsPage, ApiRun, ApiRunsPage,
    ApiWorkflow,
};
use crate::github::{GithubClient, GithubConfig, GithubError};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::Mutex;

/// Items per page asked of list endpoints (GitHub's maximum).
const PER_PAGE: u32 = 100;
/// Most pages of artifacts read for one run or one name (1,000 artifacts).
const MAX_ARTIFACT_PAGES: usize = 10;
/// Most pages of runs read (the reference's `MAX_RUN_PAGES`).
const MAX_RUN_PAGES: usize = 10;

/// One review of a run's protected-environment gate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Approval {
    /// `approved`, `rejected` or `pending`.
    pub state: String,
    /// Reviewer login.
    pub reviewer_login: String,
    /// Reviewer numeric id.
    pub reviewer_id: u64,
    /// Reviewer comment (may be empty).
    pub(crate) comment: String,
    /// Names of the environments the review covered.
    pub environments: Vec<String>,
}

/// The GitHub REST backend.
#[derive(Debug)]
pub struct GithubStore {
    client: GithubClient,
    workflow_ids: Mutex<HashMap<String, u64>>,
    now: Option<DateTime<Utc>>,
}

impl GithubStore {
    /// A store over an explicit configuration.
    pub fn new(cfg: GithubConfig) -> Result<Self, StoreError> {
        Ok(GithubStore {
            client: GithubClient::new(cfg)?,
            workflow_ids: Mutex::new(HashMap::new()),
            now: None,
        })
    }

    /// Fix the clock used for age checks (`--now`); the default is the system clock.
    pub(crate) fn with_now(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }

    /// A store configured from `GITHUB_API_URL` and `GITHUB_REPOSITORY` (unless given) and
    /// `GITHUB_TOKEN` (see [`GithubConfig::from_env`]).
    pub fn from_env(api_url: Option<&str>, repository: Option<&str>) -> Result<Self, StoreError> {
        Self::new(GithubConfig::from_env(api_url, repository)?)
    }

    fn route(&self, tail: &str) -> String {
        format!("{}{tail}", self.client.config().repo_route())
    }

    /// `/repos/{owner}/{name}<tail>` (the vault's routes).
    pub(super) fn repo_route(&self, tail: &str) -> String {
        self.route(tail)
    }

    /// The REST client (the vault's calls).
    pub(super) fn client(&self) -> &GithubClient {
        &self.client
    }

    /// Numeric id of a workflow given by file name (`tier1-nightly.yml`), resolved once.
    pub(crate) fn workflow_id(&self, workflow: &str) -> Result<u64, StoreError> {
        if let Ok(n) = workflow.parse::<u64>() {
            return Ok(n);
        }
        let file = workflow.rsplit('/').next().unwrap_or(workflow);
        if !crate::fsx::is_safe_component(file) {
            return Err(StoreError::Invalid(format!(
                "workflow must be a file name such as tier1-nightly.yml, found {workflow:?}"
            )));
        }
        if let Some(id) = self.cached_workflow(file) {
            return Ok(id);
        }
        let wf: ApiWorkflow = self
            .client
            .get_json(&self.route(&format!("/actions/workflows/{file}")), &[])
            .map_err(|e| not_found_as(e, format!("workflow {file}")))?;
        if let Ok(mut m) = self.workflow_ids.lock() {
            m.insert(file.to_string(), wf.id);
        }
        Ok(wf.id)
    }

    fn cached_workflow(&self, file: &str) -> Option<u64> {
        self.workflow_ids.lock().ok()?.get(file).copied()
    }

    /// Reviews of run `run_id`'s environment gates (`GET …/runs/{id}/approvals`).
    pub fn run_approvals(&self, run_id: u64) -> Result<Vec<Approval>, StoreError> {
        let list: Vec<ApiApproval> = self
            .client
            .get_json(
                &self.route(&format!("/actions/runs/{run_id}/approvals")),
                &[],
            )
            .map_err(|e| not_found_as(e, format!("run {run_id}")))?;
        Ok(list
            .into_iter()
            .map(|a| Approval {
                state: a.state,
                reviewer_login: a.user.login,
                reviewer_id: a.user.id,
                comment: a.comment.unwrap_or_default(),
                environments: a.environments.into_iter().filter_map(|e| e.name).collect(),
            })
            .collect())
    }

    /// A deployment environment and its protection rules (`GET …/environments/{name}`); a name
    /// that is not plain (letters, digits, `.`, `_`, `-`) is refused, never encoded.
    pub(crate) fn environment(&self, name: &str) -> Result<Environment, StoreError> {
        if !environments::is_plain_name(name) {
            return Err(StoreError::Invalid(format!(
                "environment name {name:?}: expected letters, digits, '.', '_' or '-'"
            )));
        }
        environments::get(&self.client, name)
            .map_err(|e| not_found_as(e, format!("environment {name}")))
    }

    /// Jobs of one attempt of a run (where each ran: labels, runner name).
    pub fn attempt_jobs(&self, run_id: u64, attempt: u32) -> Result<Vec<ApiJob>, StoreError> {
        let paged = self.client.get_paginated(
            &self.route(&format!("/actions/runs/{run_id}/attempts/{attempt}/jobs")),
            &[("per_page", PER_PAGE.to_string())],
            (MAX_ARTIFACT_PAGES, usize::MAX),
            |p: ApiJobsPage| (p.total_count, p.jobs),
        )?;
        if !paged.complete {
            return Err(incomplete(format!(
                "jobs of run {run_id} attempt {attempt}"
            )));
        }
        Ok(paged.items)
    }

    fn list_artifacts(
        &self,
        route: &str,
        query: &[(&str, String)],
        reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError> {
        let paged = self
            .client
            .get_paginated(
                route,
                query,
                (MAX_ARTIFACT_PAGES, usize::MAX),
                |p: ApiArtifactsPage| (p.total_count, p.artifacts),
            )
            .map_err(|e| not_found_as(e, route.to_string()))?;
        let mut listing = Listing::of(Vec::new(), !paged.complete);
        for a in paged.items {
            match artifact_meta(a, reject) {
                Ok(meta) => listing.items.push(meta),
                Err(skip) => {
                    tracing::warn!(
                        "artifact {} (id {}) skipped: {}",
                        skip.name,
                        skip.id,
                        skip.reason
                    );
                    listing.skipped.push(skip);
                }
            }
        }
        Ok(listing)
    }
}

impl ArtifactStore for GithubStore {
    fn repository(&self) -> &str {
        &self.client.config().repository
    }

    fn now(&self) -> DateTime<Utc> {
        self.now.unwrap_or_else(Utc::now)
    }

    fn list_runs_where(
        &self,
        workflow: &str,
        branch: &str,
        cap: usize,
        keep: &dyn Fn(&WorkflowRun) -> bool,
    ) -> Result<Listing<WorkflowRun>, StoreError> {
        let workflow_id = self.workflow_id(workflow)?;
        let paged = self.client.get_paginated(
            &self.route(&format!("/actions/workflows/{workflow_id}/runs")),
            &[
                ("branch", branch.to_string()),
                ("exclude_pull_requests", "true".to_string()),
                ("per_page", PER_PAGE.to_string()),
            ],
            (MAX_RUN_PAGES, cap),
            |p: ApiRunsPage| (p.total_count, p.workflow_runs),
        )?;
        let mut by_id = BTreeMap::new();
        for run in paged.items {
            let run = workflow_run(run, Some(workflow_id));
            if !keep(&run) || run.head_branch != branch {
                continue;
            }
            by_id.insert(run.id, run);
        }
        let runs: Vec<WorkflowRun> = by_id.into_values().collect();
        Ok(Listing::newest_runs(runs, cap, !paged.complete))
    }

    fn get_run(&self, run_id: u64) -> Result<WorkflowRun, StoreError> {
        let run: ApiRun = self
            .client
            .get_json(&self.route(&format!("/actions/runs/{run_id}")), &[])
            .map_err(|e| not_found_as(e, format!("run {run_id}")))?;
        Ok(workflow_run(run, None))
    }

    fn list_run_artifacts(
        &self,
        run_id: u64,
        reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError> {
        let mut listing = self.list_artifacts(
            &self.route(&format!("/actions/runs/{run_id}/artifacts")),
            &[("per_page", PER_PAGE.to_string())],
            reject,
        )?;
        listing.items = latest_per_name(listing.items);
        Ok(listing)
    }

    fn find_artifacts_by_name(
        &self,
        name: &str,
        reject: ArtifactRule<'_>,
    ) -> Result<Listing<ArtifactMeta>, StoreError> {
        let mut listing = self.list_artifacts(
            &self.route("/actions/artifacts"),
            &[
                ("name", name.to_string()),
                ("per_page", PER_PAGE.to_string()),
            ],
            reject,
        )?;
        listing.items.retain(|a| a.name == name);
        listing
            .items
            .sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(listing)
    }

    fn find_run_artifact(
        &self,
        run_id: u64,
        name: &str,
        reject: ArtifactRule<'_>,
    ) -> Result<ArtifactMeta, StoreError> {
        let mut listing = self.list_artifacts(
            &self.route(&format!("/actions/runs/{run_id}/artifacts")),
            &[
                ("name", name.to_string()),
                ("per_page", PER_PAGE.to_string()),
            ],
            reject,
        )?;
        // The name query is a filter GitHub applies; the run is checked here too.
        listing.items.retain(|a| a.workflow_run_id == run_id);
        super::artifact_store::pick_run_artifact(listing, run_id, name, || {
            incomplete(format!("artifacts of run {run_id}"))
        })
    }

    fn vault_find(&self, names: &[String]) -> Result<BTreeMap<String, VaultObject>, StoreError> {
        self.github_vault_find(names)
    }

    fn vault_put(
        &self,
        name: &str,
        file_name: &str,
        path: &std::path::Path,
    ) -> Result<VaultObject, StoreError> {
        self.github_vault_put(name, file_name, path)
    }

    fn vault_download(
        &self,
        object: &VaultObject,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        self.github_vault_download(object, sink, cap)
    }

    fn download(
        &self,
        artifact: &ArtifactMeta,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        let integrity = |message: String| StoreError::Integrity {
            id: artifact.id,
            name: artifact.name.clone(),
            message,
        };
        let digest = match artifact.digest.as_deref() {
            Some(d) => Some(Digest::parse(d).map_err(|e| integrity(e.to_string()))?),
            None => None,
        };
        let expected = Expected {
            id: artifact.id,
            size_in_bytes: artifact.size_in_bytes,
            digest: digest.as_ref(),
        };
        let mut sink = crate::digest::Watched::new(sink);
        let got = download_artifact(&self.client, &expected, &mut sink, cap);
        if got.is_err()
            && let Some(source) = sink.take_error()
        {
            return Err(StoreError::Sink {
                id: artifact.id,
                name: artifact.name.clone(),
                source,
            });
        }
        match got {
            Ok((digest, bytes)) => Ok(Downloaded { digest, bytes }),
            Err(GithubError::Gone { .. }) => Err(StoreError::Expired {
                id: artifact.id,
                name: artifact.name.clone(),
            }),
            Err(GithubError::Integrity { endpoint, message }) => {
                Err(integrity(format!("{endpoint}: {message}")))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The store's record of a run, with the provenance facts the record reports; `listed_workflow_id`
/// is the workflow id the listing asked for.
pub(crate) fn workflow_run(run: ApiRun, listed_workflow_id: Option<u64>) -> WorkflowRun {
    let path = run.path.as_deref().unwrap_or_default();
    let path = path.split('@').next().unwrap_or_default();
    let path = match path.find(".github/workflows/") {
        Some(i) => &path[i..],
        None => path,
    };
    let provenance = RunProvenance {
        listed_workflow_id,
        repository_id: run.repository.id,
        head_repository: run.head_repository.as_ref().map(|h| RepositoryRef {
            id: h.id,
            full_name: h.full_name.clone(),
        }),
        head_repository_id: run.head_repository_id,
    };
    WorkflowRun {
        id: run.id,
        workflow_id: Some(run.workflow_id),
        path: path.to_string(),
        head_branch: run.head_branch.unwrap_or_default(),
        head_sha: run.head_sha,
        event: run.event,
        status: run.status.unwrap_or_default(),
        conclusion: run.conclusion,
        repository: run.repository.full_name,
        head_repository: run.head_repository.map(|h| h.full_name).unwrap_or_default(),
        run_attempt: run.run_attempt.unwrap_or(1),
        created_at: run.created_at,
        provenance: Some(provenance),
    }
}

/// The provenance facts an artifact record reports (its `workflow_run`), for the caller's rule.
fn artifact_provenance(a: &ApiArtifact) -> ArtifactProvenance {
    let run = a.workflow_run.as_ref();
    ArtifactProvenance {
        workflow_run_reported: run.is_some(),
        repository_id: run.and_then(|r| r.repository_id),
        head_repository_id: run.and_then(|r| r.head_repository_id),
    }
}

/// The artifact's metadata, or why the record is skipped: first the caller's provenance rule
/// (`reject`) on the facts the record reports, then a required field absent or null.
fn artifact_meta(a: ApiArtifact, reject: ArtifactRule<'_>) -> Result<ArtifactMeta, Skipped> {
    let skip = |reason: String| Skipped {
        id: a.id,
        name: a.name.clone(),
        workflow_run_id: a.workflow_run.as_ref().and_then(|r| r.id),
        reason,
    };
    if let Some(why) = reject(&artifact_provenance(&a)) {
        return Err(skip(why));
    }
    let run = a.workflow_run.clone().unwrap_or_default();
    let workflow_run_id = run
        .id
        .ok_or_else(|| skip("workflow_run.id is absent".into()))?;
    let created_at = a
        .created_at
        .ok_or_else(|| skip("created_at is null".into()))?;
    Ok(ArtifactMeta {
        id: a.id,
        name: a.name,
        size_in_bytes: a.size_in_bytes,
        digest: a.digest,
        expired: a.expired,
        created_at,
        expires_at: a.expires_at,
        workflow_run_id,
        workflow_run_head_branch: run.head_branch,
        workflow_run_head_sha: run.head_sha,
    })
}

/// Keep, for each name, the artifact with the highest id (a re-run attempt uploads a name again).
pub(crate) fn latest_per_name(items: Vec<ArtifactMeta>) -> Vec<ArtifactMeta> {
    let mut best: BTreeMap<String, ArtifactMeta> = BTreeMap::new();
    for a in items {
        match best.get(&a.name) {
            Some(b) if b.id >= a.id => {}
            _ => {
                best.insert(a.name.clone(), a);
            }
        }
    }
    let mut out: Vec<ArtifactMeta> = best.into_values().collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.id));
    out
}

fn not_found_as(e: GithubError, what: String) -> StoreError {
    if e.status() == 404 {
        StoreError::NotFound { what }
    } else {
        e.into()
    }
}

fn incomplete(what: String) -> StoreError {
    StoreError::Corrupt {
        path: what,
        message: "listing is incomplete (page cap, Link loop or fewer items than total_count)"
            .into(),
    }
}

/// A GitHub failure as the store reports it: configuration as invalid input, HTTP, transport and
/// body failures as remote, a gone endpoint as not found, integrity and incomplete listings as
/// corrupt.
impl From<GithubError> for StoreError {
    fn from(e: GithubError) -> Self {
        match e {
            GithubError::Config(m) => StoreError::Invalid(m),
            GithubError::Status {
                endpoint,
                status,
                message,
            } => StoreError::Remote {
                endpoint,
                status,
                message,
            },
            GithubError::Transport { endpoint, message } => StoreError::Remote {
                endpoint,
                status: 0,
                message,
            },
            GithubError::Decode { endpoint, message } => StoreError::Remote {
                endpoint,
                status: 0,
                message: format!("unexpected response body: {message}"),
            },
            GithubError::Gone { endpoint } => StoreError::NotFound {
                what: format!("{endpoint} (HTTP 410 gone)"),
            },
            GithubError::Integrity { endpoint, message } => StoreError::Corrupt {
                path: endpoint,
                message,
            },
            GithubError::Incomplete { endpoint, message } => StoreError::Corrupt {
                path: endpoint,
                message: format!("incomplete listing: {message}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::ApiArtifactRun;

    fn art(run: Option<ApiArtifactRun>) -> ApiArtifact {
        ApiArtifact {
            id: 9,
            name: "tier1-history-1-1".into(),
            size_in_bytes: 1,
            expired: false,
            digest: None,
            created_at: Some(Utc::now()),
            expires_at: None,
            workflow_run: run,
        }
    }

    fn uploaded_by(base: Option<u64>, head: Option<u64>) -> ApiArtifactRun {
        ApiArtifactRun {
            id: Some(5),
            repository_id: base,
            head_repository_id: head,
            head_branch: None,
            head_sha: None,
        }
    }

    /// The store judges no provenance itself: it hands the caller's rule the facts the record
    /// reports, and a rejection becomes a skipped record with the rule's reason.
    #[test]
    fn the_callers_rule_judges_the_facts_the_record_reports() {
        let seen = std::cell::RefCell::new(Vec::new());
        let refuse_all = |p: &ArtifactProvenance| {
            seen.borrow_mut().push(p.clone());
            Some("the caller's reason".to_string())
        };
        let skipped =
            artifact_meta(art(Some(uploaded_by(Some(1), Some(2)))), &refuse_all).unwrap_err();
        assert_eq!(
            (skipped.id, skipped.name.as_str(), skipped.workflow_run_id),
            (9, "tier1-history-1-1", Some(5))
        );
        assert_eq!(skipped.reason, "the caller's reason");
        let skipped = artifact_meta(art(None), &refuse_all).unwrap_err();
        assert_eq!(skipped.workflow_run_id, None);
        let facts = |reported, base, head| ArtifactProvenance {
            workflow_run_reported: reported,
            repository_id: base,
            head_repository_id: head,
        };
        assert_eq!(
            seen.into_inner(),
            vec![facts(true, Some(1), Some(2)), facts(false, None, None)]
        );
        // A fork's record the caller accepts is not refused here: the rule is the caller's.
        let keep_all = |_: &ArtifactProvenance| None;
        let meta = artifact_meta(art(Some(uploaded_by(Some(1), Some(2)))), &keep_all).unwrap();
        assert_eq!((meta.id, meta.workflow_run_id), (9, 5));
    }

    /// After the rule, a record missing a field the store needs is skipped, naming the field.
    #[test]
    fn a_record_without_a_required_field_is_skipped_naming_it() {
        let keep_all = |_: &ArtifactProvenance| None;
        let why = |a: ApiArtifact| artifact_meta(a, &keep_all).unwrap_err().reason;
        assert_eq!(why(art(None)), "workflow_run.id is absent");
        let mut no_id = uploaded_by(Some(1), Some(1));
        no_id.id = None;
        assert_eq!(why(art(Some(no_id))), "workflow_run.id is absent");
        let mut no_time = art(Some(uploaded_by(Some(1), Some(1))));
        no_time.created_at = None;
        assert_eq!(why(no_time), "created_at is null");
    }

    #[test]
    fn run_path_is_normalised() {
        let w = workflow_run(ApiRun::fixture("push", "o/r", 1), None);
        assert_eq!(w.path, ".github/workflows/tier1-nightly.yml");
        assert_eq!(w.run_attempt, 1);
    }

    #[test]
    fn highest_id_wins_per_name() {
        let meta = |id, name: &str| ArtifactMeta {
            id,
            name: name.into(),
            size_in_bytes: 1,
            digest: None,
            expired: false,
            created_at: Utc::now(),
            expires_at: None,
            workflow_run_id: 1,
            workflow_run_head_branch: None,
            workflow_run_head_sha: None,
        };
        let out = latest_per_name(vec![meta(3, "a"), meta(9, "a"), meta(5, "b"), meta(4, "a")]);
        let ids: Vec<u64> = out.iter().map(|a| a.id).collect();
        assert_eq!(ids, vec![9, 5]);
    }
}
