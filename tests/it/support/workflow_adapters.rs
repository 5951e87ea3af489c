//! The runner-side services of the workflow scenario harness, served by the fake GitHub under
//! `POST /_harness/…`: workflow runs and their jobs (each with its runtime token for the artifact
//! service, fake_artifact_service.rs) and environment reviews (what GitHub records), whether an
//! environment has required reviewers (else a job runs without a review), and the
//! `actions/checkout` adapter (workflow_checkout.rs). The artifact actions are no adapters: the
//! harness runs them over GitHub's own `@actions/artifact` client (tests/workflows/harness/actions).
#![allow(dead_code)]

use crate::support::fake_github::FakeGithub;
use crate::support::workflow_checkout::CheckoutRemote;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tier1::store::local::{LocalStore, NewRun};

/// What the adapters need besides the store: the repository checkout clones from.
#[derive(Debug)]
pub struct Adapters {
    /// A git repository holding the commit the workflow runs on.
    pub source_repo: PathBuf,
    /// Its remote, which `actions/checkout` fetches from (support/workflow_checkout.rs).
    pub remote: CheckoutRemote,
    /// Job ids handed out for the jobs API.
    next_job: Mutex<u64>,
}

impl Adapters {
    /// Adapters cloning `source_repo` for checkout.
    pub fn new(source_repo: &Path) -> Arc<Adapters> {
        let bare = source_repo.with_file_name(format!(
            "{}-remote.git",
            source_repo
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        Arc::new(Adapters {
            source_repo: source_repo.to_path_buf(),
            remote: CheckoutRemote::new(source_repo, &bare),
            next_job: Mutex::new(41_000_000_001),
        })
    }

    /// Install these adapters as `fake`'s harness hook.
    pub fn install(self: &Arc<Self>, fake: &FakeGithub) {
        let me = self.clone();
        fake.set_harness(Arc::new(move |fake, path, body| {
            me.handle(fake, path, body)
        }));
    }

    /// Serve `POST /_harness/<path>` with JSON `body`.
    pub fn handle(&self, fake: &FakeGithub, path: &str, body: &Value) -> Result<Value, String> {
        let store = LocalStore::open(&fake.store_dir()).map_err(|e| e.to_string())?;
        let seg: Vec<&str> = path.split('/').collect();
        match seg.as_slice() {
            ["runs"] => {
                let mut new =
                    NewRun::new("x", &text(body, "head_branch")?, &text(body, "head_sha")?);
                new.workflow_path = text(body, "workflow_path")?;
                new.event = text(body, "event")?;
                // A pull request from a fork runs with the fork as its head repository.
                new.head_repository = body["head_repository"].as_str().map(str::to_string);
                let run = store.create_run(&new).map_err(|e| e.to_string())?;
                Ok(json!({"id": run.id, "run_attempt": run.run_attempt}))
            }
            ["runs", id, "complete"] => {
                let id = number(id)?;
                store
                    .complete_run(id, &text(body, "conclusion")?)
                    .map_err(|e| e.to_string())?;
                Ok(json!({}))
            }
            ["runs", id, "rerun"] => {
                let id = number(id)?;
                let run = store
                    .update(|state| {
                        let run = state.runs.iter_mut().find(|r| r.id == id).ok_or_else(|| {
                            tier1::store::StoreError::NotFound {
                                what: format!("run {id}"),
                            }
                        })?;
                        run.run_attempt += 1;
                        run.status = "in_progress".into();
                        run.conclusion = None;
                        Ok(run.clone())
                    })
                    .map_err(|e| e.to_string())?;
                Ok(json!({"id": run.id, "run_attempt": run.run_attempt}))
            }
            ["runs", id, "jobs"] => {
                let id = number(id)?;
                let attempt = body["attempt"].as_u64().unwrap_or(1) as u32;
                let job_id = {
                    let mut n = self.next_job.lock().expect("lock");
                    *n += 1;
                    *n
                };
                fake.add_job(
                    id,
                    attempt,
                    json!({
                        "id": job_id, "run_id": id, "run_attempt": attempt, "status": "in_progress",
                        "conclusion": null, "name": text(body, "name")?, "steps": [],
                        "labels": body["labels"].clone(), "runner_name": text(body, "runner_name")?,
                        "runner_id": 1, "runner_group_name": "Default", "head_branch": "main",
                        "workflow_name": "Tier-1 Nightly"
                    }),
                );
                // The job's backend id in the runtime token's scope (fake_artifact_service.rs).
                let backend = format!("00000000-0000-4000-8000-{job_id:012}");
                Ok(json!({"id": job_id, "runtime_token":
                    crate::support::fake_github::artifact_service::runtime_token(id, &backend)}))
            }
            ["runs", id, "jobs", job, "complete"] => {
                let attempt = body["attempt"].as_u64().unwrap_or(1) as u32;
                fake.complete_job(
                    number(id)?,
                    attempt,
                    number(job)?,
                    &text(body, "conclusion")?,
                );
                Ok(json!({}))
            }
            ["runs", id, "approvals"] => {
                let id = number(id)?;
                fake.add_approval(
                    id,
                    json!({
                        "environments": [{"id": 3, "name": text(body, "environment")?}],
                        "state": text(body, "state")?,
                        "comment": body["comment"].as_str().unwrap_or_default(),
                        "user": {"login": text(body, "reviewer")?, "id": 7, "type": "User"}
                    }),
                );
                Ok(json!({}))
            }
            ["environments", name] => {
                // GitHub creates an environment a job names without protection rules.
                let rules = fake.environment(name).unwrap_or_default();
                let required = rules["protection_rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| {
                        r["type"] == "required_reviewers"
                            && r["reviewers"].as_array().is_some_and(|l| !l.is_empty())
                    });
                Ok(json!({"required_reviewers": required}))
            }
            ["actions", "checkout"] => self.remote.checkout(body),
            _ => Err(format!("no harness endpoint /_harness/{path}")),
        }
    }
}

fn text(body: &Value, key: &str) -> Result<String, String> {
    body[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("harness request: field {key} missing"))
}

fn number(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("harness request: {s:?} is not a run id"))
}
