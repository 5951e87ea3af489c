//! The runner-side services of the workflow scenario harness, served by the fake GitHub under
//! `POST /_harness/…`: workflow runs and their jobs and environment reviews (what GitHub records),
//! whether an environment has required reviewers (else a job runs without a review),
//! and adapters standing in for `actions/checkout`, `actions/upload-artifact` (v7, `archive`
//! included) and `actions/download-artifact` (v8) over the same local store, so artifacts get the
//! names, ids and digests the real actions produce. Unknown inputs are refused, never ignored.
#![allow(dead_code)]

use crate::support::fake_github::FakeGithub;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use tier1::restore::provenance::artifact_rejection;
use tier1::store::local::{LocalStore, NewRun};
use tier1::store::{ArtifactMeta, ArtifactStore};

/// What the adapters need besides the store: the repository checkout clones from.
#[derive(Debug)]
pub struct Adapters {
    /// A git repository holding the commit the workflow runs on.
    pub source_repo: PathBuf,
    /// Artifacts uploaded with `archive: false` (downloaded as the raw file, not extracted).
    raw_files: Mutex<BTreeSet<u64>>,
    /// Job ids handed out for the jobs API.
    next_job: Mutex<u64>,
}

impl Adapters {
    /// Adapters cloning `source_repo` for checkout.
    pub fn new(source_repo: &Path) -> Arc<Adapters> {
        Arc::new(Adapters {
            source_repo: source_repo.to_path_buf(),
            raw_files: Mutex::new(BTreeSet::new()),
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
                Ok(json!({"id": job_id}))
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
            ["actions", "checkout"] => self.checkout(body),
            ["actions", "upload-artifact"] => self.upload(&store, body, fake.retention_limit()),
            ["actions", "download-artifact"] => self.download(&store, body),
            _ => Err(format!("no harness endpoint /_harness/{path}")),
        }
    }

    /// `actions/checkout`: a clean clone of the source repository at `ref` (default the run's
    /// commit) into the workspace, without credentials.
    fn checkout(&self, body: &Value) -> Result<Value, String> {
        let with = inputs(body, &["ref", "persist-credentials", "fetch-depth"])?;
        if with.get("persist-credentials").map(String::as_str) != Some("false") {
            return Err(
                "actions/checkout: persist-credentials must be false in tier1's workflows".into(),
            );
        }
        let workspace = PathBuf::from(text(body, "workspace")?);
        let commit = with
            .get("ref")
            .filter(|r| !r.is_empty())
            .cloned()
            .unwrap_or(text(body, "sha")?);
        if workspace.exists() {
            std::fs::remove_dir_all(&workspace)
                .map_err(|e| format!("{}: {e}", workspace.display()))?;
        }
        git(
            None,
            &["clone", "-q", "--no-checkout"],
            &[&self.source_repo, &workspace],
        )?;
        git(
            Some(&workspace),
            &["checkout", "-q", "--detach", &commit],
            &[],
        )?;
        Ok(json!({"outputs": {"ref": commit, "commit": commit}}))
    }

    /// `actions/upload-artifact`: a directory as a zip, or with `archive: false` one file as is
    /// (named after the file), kept `retention-days` or the repository's retention limit if that is
    /// shorter (no error, as on GitHub); outputs `artifact-id`, bare-hex `artifact-digest`,
    /// `artifact-url`.
    fn upload(
        &self,
        store: &LocalStore,
        body: &Value,
        retention_limit: Option<u32>,
    ) -> Result<Value, String> {
        let with = inputs(
            body,
            &[
                "name",
                "path",
                "archive",
                "if-no-files-found",
                "retention-days",
            ],
        )?;
        let workspace = PathBuf::from(text(body, "workspace")?);
        let given = with.get("path").cloned().unwrap_or_default();
        if given.trim().is_empty() || given.contains('\n') || given.contains('*') {
            return Err(format!(
                "actions/upload-artifact: path {given:?}: only one path without globs is emulated"
            ));
        }
        let path = workspace.join(given.trim());
        let archive = with.get("archive").map(String::as_str) != Some("false");
        let retention: u32 = match with.get("retention-days") {
            Some(d) => d
                .parse()
                .map_err(|_| format!("retention-days: {d:?} is not a number"))?,
            None => 90,
        };
        // The repository's retention limit cuts a longer request without an error.
        let retention = retention_limit.map_or(retention, |limit| retention.min(limit));
        if !path.exists() {
            return match with.get("if-no-files-found").map(String::as_str) {
                Some("error") => Err(format!(
                    "No files were found with the provided path: {}. No artifacts will be uploaded.",
                    path.display()
                )),
                _ => Ok(json!({"outputs": {}})),
            };
        }
        let run_id = body["run_id"].as_u64().ok_or("run_id missing")?;
        let name = match with.get("name") {
            _ if !archive => path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string(),
            Some(n) => n.clone(),
            None => "artifact".into(),
        };
        // Names are unique per run across attempts: a re-run that uploads a name an earlier
        // attempt uploaded gets GitHub's 409 (the action has no overwrite input set here).
        let taken = store
            .list_run_artifacts(run_id, &artifact_rejection)
            .map_err(|e| e.to_string())?;
        if taken.items.iter().any(|a| a.name == name) {
            return Err("Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run".into());
        }
        let meta = if archive {
            if !path.is_dir() {
                return Err(format!(
                    "{}: archived uploads of single files are not emulated",
                    path.display()
                ));
            }
            store.upload_dir_zipped(run_id, &name, &path, retention)
        } else {
            if !path.is_file() {
                return Err(format!(
                    "{}: archive: false uploads exactly one file",
                    path.display()
                ));
            }
            store.upload_file(run_id, &name, &path, retention)
        }
        .map_err(|e| format!("actions/upload-artifact: {e}"))?;
        if !archive {
            self.raw_files.lock().expect("lock").insert(meta.id);
        }
        let digest = meta.digest.clone().unwrap_or_default();
        Ok(json!({"outputs": {
            "artifact-id": meta.id.to_string(),
            "artifact-digest": digest.trim_start_matches("sha256:"),
            "artifact-url": format!("https://github.com/{}/actions/runs/{run_id}/artifacts/{}", store.repository(), meta.id),
        }}))
    }

    /// `actions/download-artifact` by `artifact-ids` or `name`, from this run only (no token input):
    /// one artifact lands in `path` itself, several in `path/<name>`; the bytes must hash to the
    /// listed digest; a zip is extracted, a raw file keeps its artifact name.
    fn download(&self, store: &LocalStore, body: &Value) -> Result<Value, String> {
        let with = inputs(body, &["artifact-ids", "name", "path"])?;
        let run_id = body["run_id"].as_u64().ok_or("run_id missing")?;
        let workspace = PathBuf::from(text(body, "workspace")?);
        let dest = workspace.join(with.get("path").cloned().unwrap_or_default());
        let listing = store
            .list_run_artifacts(run_id, &artifact_rejection)
            .map_err(|e| e.to_string())?;
        let wanted: Vec<ArtifactMeta> = match (with.get("artifact-ids"), with.get("name")) {
            (Some(ids), None) => {
                let ids: Vec<u64> = ids
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        s.parse()
                            .map_err(|_| format!("Invalid artifact ID: '{s}'. Must be a number."))
                    })
                    .collect::<Result<_, _>>()?;
                if ids.is_empty() {
                    return Err("No valid artifact IDs provided in 'artifact-ids' input".into());
                }
                let found: Vec<ArtifactMeta> = listing
                    .items
                    .into_iter()
                    .filter(|a| ids.contains(&a.id))
                    .collect();
                if found.is_empty() {
                    return Err("None of the provided artifact IDs were found".into());
                }
                found
            }
            (None, Some(name)) => vec![
                listing
                    .items
                    .into_iter()
                    .find(|a| &a.name == name)
                    .ok_or_else(|| format!("Artifact '{name}' not found"))?,
            ],
            _ => {
                return Err(
                    "actions/download-artifact: give exactly one of artifact-ids and name".into(),
                );
            }
        };
        let single = wanted.len() == 1;
        for meta in &wanted {
            let into = if single {
                dest.clone()
            } else {
                dest.join(&meta.name)
            };
            std::fs::create_dir_all(&into).map_err(|e| format!("{}: {e}", into.display()))?;
            let mut bytes = Vec::new();
            let got = store
                .download(meta, &mut bytes, u64::MAX)
                .map_err(|e| format!("Unable to download artifact(s): {e}"))?;
            if meta.digest.as_deref() != Some(got.digest.as_str()) {
                return Err(format!(
                    "Artifact '{}' digest validation failed: listed {:?}, downloaded {}",
                    meta.name, meta.digest, got.digest
                ));
            }
            if self.raw_files.lock().expect("lock").contains(&meta.id) {
                let file = into.join(&meta.name);
                std::fs::write(&file, &bytes).map_err(|e| format!("{}: {e}", file.display()))?;
            } else {
                extract(&bytes, &into)?;
            }
        }
        Ok(json!({"outputs": {"download-path": dest.display().to_string()}}))
    }
}

fn extract(zip_bytes: &[u8], into: &Path) -> Result<(), String> {
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).map_err(|e| e.to_string())?;
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(|e| e.to_string())?;
        let Some(rel) = member.enclosed_name() else {
            return Err(format!("unsafe zip member {:?}", member.name()));
        };
        let out = into.join(rel);
        if member.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut f = std::fs::File::create(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        std::io::copy(&mut member, &mut f).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn git(cwd: Option<&Path>, args: &[&str], paths: &[&Path]) -> Result<(), String> {
    let mut c = Command::new("git");
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    let out = c
        .args(args)
        .args(paths)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
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

/// The step's `with:` inputs; an input the adapter does not emulate is refused by name.
fn inputs(
    body: &Value,
    known: &[&str],
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut out = std::collections::BTreeMap::new();
    for (k, v) in body["with"].as_object().into_iter().flatten() {
        if !known.contains(&k.as_str()) {
            return Err(format!(
                "input '{k}' is not emulated (known: {})",
                known.join(", ")
            ));
        }
        out.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
    }
    Ok(out)
}
