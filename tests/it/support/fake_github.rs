//! A fake GitHub REST API for tests: an HTTP/1.1 server on 127.0.0.1 serving the real response
//! shapes from a local-store directory (docs/local-store.md), a second "blob storage" listener for
//! the artifact download redirect that rejects any `Authorization` and honours the signed URL's
//! expiry, fault injection (statuses, truncated or looping pages, bodies, and the nullable or
//! optional fields of `github/rest-api-description`), and a record of every request; a hook for test harness endpoints
//! under `/_harness/` (the workflow scenario adapters, tests/it/support/workflow_adapters.rs);
//! pull request comments (fake_github_comments.rs); and public releases of any repository
//! (`GET /repos/{o}/{r}/releases/tags/{tag}`, assets downloaded from the blob listener), which an
//! unauthenticated client may ask 60 times an hour (then 403 with `x-ratelimit-remaining: 0`);
//! and the store's vault as the repository's immutable releases (fake_github_vault.rs).
#![allow(dead_code)]

#[path = "fake_artifact_service.rs"]
pub mod artifact_service;
#[path = "fake_github_comments.rs"]
mod comments;
#[path = "fake_github_vault.rs"]
pub mod vault;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tier1::store::WorkflowRun;
use tier1::store::local::{LocalStore, StoreState, StoredArtifact, strip_ref};

/// A fault to inject. Each applies to requests whose path contains `on` (where it has one) and is
/// consumed after `times` uses.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer `status` with `headers` and a GitHub error body instead of the real response.
    Status {
        on: String,
        status: u16,
        headers: Vec<(String, String)>,
        times: u32,
    },
    /// Answer 401 on paths containing `on` with an error body that echoes the request's
    /// `Authorization` header and the bare token (a careless or hostile server).
    EchoAuthorization { on: String },
    /// Serve the page without its `Link rel="next"` although more pages exist.
    TruncatedPage { on: String },
    /// Every page's `Link rel="next"` points at page 1.
    LinkLoop { on: String },
    /// The blob body of artifact `id` is `delta` bytes shorter (<0) or longer (>0) than stored.
    BodyLength { id: u64, delta: i64 },
    /// The blob body of artifact `id` has its first byte flipped (same length, other digest).
    CorruptBody { id: u64 },
    /// The blob host answers 401 unless the request carries `Authorization`.
    BlobDemandsToken,
    /// The blob body of artifact `id` stalls for `ms` after its first half.
    SlowBody { id: u64, ms: u64 },
    /// Artifact `id` is served with `field` (a dotted path such as `workflow_run.repository_id`)
    /// set to `value`, or absent when `value` is None: the spec makes `created_at` and
    /// `workflow_run` nullable and every field of `workflow_run` optional.
    ArtifactField {
        id: u64,
        field: String,
        value: Option<Value>,
    },
    /// Run `id` is served with `field` set to `value`, or absent when `value` is None.
    RunField {
        id: u64,
        field: String,
        value: Option<Value>,
    },
}

/// One record of `GET …/runs/{id}/approvals` in the shape of the spec's "Environment Approval"
/// (no time and no attempt: the API does not record them).
pub fn approval_record(state: &str, login: &str, user_id: u64, environment: &str) -> Value {
    json!({
        "environments": [{
            "id": 161088068, "node_id": "MDExOkVudmlyb25tZW50MTYxMDg4MDY4", "name": environment,
            "url": format!("https://api.github.com/repos/o/r/environments/{environment}"),
            "html_url": format!("https://github.com/o/r/deployments/activity_log?environments_filter={environment}"),
            "created_at": "2020-11-23T22:00:40Z", "updated_at": "2020-11-23T22:00:40Z"
        }],
        "state": state,
        "user": {
            "login": login, "id": user_id, "node_id": "MDQ6VXNlcjE=", "type": "User",
            "site_admin": false, "avatar_url": "https://github.com/images/error/octocat_happy.gif",
            "url": format!("https://api.github.com/users/{login}")
        },
        "comment": format!("{state} by {login}")
    })
}

/// An environment in the shape of the spec's `environment` (`repos/get-environment`): deployments
/// from `main` only, and, when `reviewers` is not empty, a `required_reviewers` rule naming them
/// (users) with `prevent_self_review`. Without reviewers it is what a private repository without
/// GitHub Enterprise gets: no rule that waits for anyone.
pub fn environment_record(name: &str, reviewers: &[&str], prevent_self_review: bool) -> Value {
    let mut rules =
        vec![json!({"id": 3756, "node_id": "MDQ6R2F0ZTM3NTY=", "type": "branch_policy"})];
    if !reviewers.is_empty() {
        let list: Vec<Value> = reviewers
            .iter()
            .enumerate()
            .map(|(i, login)| {
                json!({"type": "User", "reviewer": {
                    "login": login, "id": 100 + i, "node_id": "MDQ6VXNlcjE=", "type": "User",
                    "site_admin": false, "url": format!("https://api.github.com/users/{login}")
                }})
            })
            .collect();
        rules.insert(
            0,
            json!({"id": 3755, "node_id": "MDQ6R2F0ZTM3NTU=", "type": "required_reviewers",
                   "prevent_self_review": prevent_self_review, "reviewers": list}),
        );
    }
    json!({
        "id": 161088068, "node_id": "MDExOkVudmlyb25tZW50MTYxMDg4MDY4", "name": name,
        "url": format!("https://api.github.com/repos/o/r/environments/{name}"),
        "html_url": format!("https://github.com/o/r/deployments/activity_log?environments_filter={name}"),
        "created_at": "2020-11-23T22:00:40Z", "updated_at": "2020-11-23T22:00:40Z",
        "protection_rules": rules,
        "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
    })
}

/// Set `path` (dotted) in `v` to `value`, or remove it when `value` is None.
fn patch_field(v: &mut Value, path: &str, value: &Option<Value>) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().expect("a field name");
    let mut cur = v;
    for p in parts {
        match cur.get_mut(p) {
            Some(next) if next.is_object() => cur = next,
            _ => return,
        }
    }
    if let Some(obj) = cur.as_object_mut() {
        match value {
            Some(x) => {
                obj.insert(last.to_string(), x.clone());
            }
            None => {
                obj.remove(last);
            }
        }
    }
}

fn patched(shared: &Shared, mut v: Value, artifact: bool) -> Value {
    let id = v.get("id").and_then(Value::as_u64).unwrap_or(0);
    for f in shared.faults.lock().expect("lock").iter() {
        match f {
            Fault::ArtifactField {
                id: i,
                field,
                value,
            } if artifact && *i == id => patch_field(&mut v, field, value),
            Fault::RunField {
                id: i,
                field,
                value,
            } if !artifact && *i == id => patch_field(&mut v, field, value),
            _ => {}
        }
    }
    v
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `api` or `blob`.
    pub listener: &'static str,
    /// `GET`.
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lower-case header names with values.
    pub headers: Vec<(String, String)>,
}

impl Recorded {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

/// A handler of `POST /_harness/<path>` requests: JSON body in, JSON answer or error message out.
pub type HarnessHook =
    Arc<dyn Fn(&FakeGithub, &str, &Value) -> Result<Value, String> + Send + Sync>;

struct Shared {
    harness: Mutex<Option<HarnessHook>>,
    store_dir: PathBuf,
    token: String,
    api_base: String,
    blob_base: String,
    now: Mutex<DateTime<Utc>>,
    faults: Mutex<Vec<Fault>>,
    requests: Mutex<Vec<Recorded>>,
    approvals: Mutex<Vec<(u64, Value)>>,
    jobs: Mutex<Vec<(u64, u32, Value)>>,
    max_per_page: Mutex<usize>,
    comments: Mutex<comments::Comments>,
    location_ttl: Mutex<Duration>,
    redirects: Mutex<u64>,
    releases: Mutex<Vec<Release>>,
    unauthenticated_left: Mutex<u32>,
    environments: Mutex<Vec<Value>>,
    retention_limit_days: Mutex<Option<u32>>,
    artifact_service: Mutex<artifact_service::ServiceState>,
    vault: Mutex<vault::Drafts>,
}

/// GitHub's rate limit for unauthenticated REST requests: 60 an hour per IP address (shared by
/// every job behind that address, as on GitHub-hosted runners and behind NAT).
pub const UNAUTHENTICATED_LIMIT: u32 = 60;

/// A published release: `repo` (`owner/name`), `tag`, and its assets (name, bytes).
#[derive(Debug, Clone)]
pub struct Release {
    pub repo: String,
    pub tag: String,
    pub assets: Vec<(String, Vec<u8>)>,
}

/// The running fake: API at [`FakeGithub::api_url`], blob storage on a second port.
#[derive(Clone)]
pub struct FakeGithub {
    shared: Arc<Shared>,
}

impl FakeGithub {
    /// The draft releases of the vault (a put that failed part way leaves none once it deleted
    /// its draft).
    pub fn vault_drafts(&self) -> Vec<vault::Draft> {
        self.shared.vault.lock().expect("lock").list.clone()
    }

    /// Serve the local store at `store_dir`, accepting only `token`.
    pub fn start(store_dir: &Path, token: &str) -> FakeGithub {
        let api = TcpListener::bind("127.0.0.1:0").expect("bind api");
        let blob = TcpListener::bind("127.0.0.1:0").expect("bind blob");
        let shared = Arc::new(Shared {
            harness: Mutex::new(None),
            store_dir: store_dir.to_path_buf(),
            token: token.to_string(),
            api_base: format!("http://{}", api.local_addr().expect("addr")),
            blob_base: format!("http://{}", blob.local_addr().expect("addr")),
            now: Mutex::new(Utc::now()),
            faults: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            approvals: Mutex::new(Vec::new()),
            jobs: Mutex::new(Vec::new()),
            max_per_page: Mutex::new(100),
            comments: Mutex::new(comments::Comments::default()),
            location_ttl: Mutex::new(Duration::from_secs(60)),
            redirects: Mutex::new(0),
            releases: Mutex::new(Vec::new()),
            unauthenticated_left: Mutex::new(UNAUTHENTICATED_LIMIT),
            environments: Mutex::new(Vec::new()),
            retention_limit_days: Mutex::new(None),
            artifact_service: Mutex::new(artifact_service::ServiceState::default()),
            vault: Mutex::new(vault::Drafts::default()),
        });
        for (listener, kind) in [(api, "api"), (blob, "blob")] {
            let shared = shared.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let shared = shared.clone();
                    std::thread::spawn(move || serve(&shared, stream, kind));
                }
            });
        }
        FakeGithub { shared }
    }

    /// `http://127.0.0.1:PORT` of the API.
    pub fn api_url(&self) -> String {
        self.shared.api_base.clone()
    }

    /// The clock used for `expired`.
    pub fn set_now(&self, now: DateTime<Utc>) {
        *self.shared.now.lock().expect("lock") = now;
    }

    /// Largest page size served (GitHub: 100); small values make pagination tests cheap.
    pub fn set_max_per_page(&self, n: usize) {
        *self.shared.max_per_page.lock().expect("lock") = n.max(1);
    }

    /// How long a download redirect's signed `Location` stays valid (GitHub: one minute).
    pub fn set_location_ttl(&self, ttl: Duration) {
        *self.shared.location_ttl.lock().expect("lock") = ttl;
    }

    /// Add a fault.
    pub fn inject(&self, fault: Fault) {
        self.shared.faults.lock().expect("lock").push(fault);
    }

    /// Reviews returned by `GET …/runs/{run_id}/approvals`.
    pub fn set_approvals(&self, run_id: u64, approvals: Value) {
        self.shared
            .approvals
            .lock()
            .expect("lock")
            .push((run_id, approvals));
    }

    /// Jobs returned by `GET …/runs/{run_id}/attempts/{attempt}/jobs`.
    pub fn set_jobs(&self, run_id: u64, attempt: u32, jobs: Value) {
        self.shared
            .jobs
            .lock()
            .expect("lock")
            .push((run_id, attempt, jobs));
    }

    /// Append one review record to those `GET …/runs/{run_id}/approvals` returns.
    pub fn add_approval(&self, run_id: u64, record: Value) {
        let mut list = self.shared.approvals.lock().expect("lock");
        match list.iter_mut().find(|(r, _)| *r == run_id) {
            Some((_, Value::Array(records))) => records.push(record),
            _ => list.push((run_id, Value::Array(vec![record]))),
        }
    }

    /// Append one job to those `GET …/runs/{run_id}/attempts/{attempt}/jobs` returns.
    pub fn add_job(&self, run_id: u64, attempt: u32, job: Value) {
        let mut list = self.shared.jobs.lock().expect("lock");
        match list
            .iter_mut()
            .find(|(r, a, _)| *r == run_id && *a == attempt)
        {
            Some((_, _, Value::Array(jobs))) => jobs.push(job),
            _ => list.push((run_id, attempt, Value::Array(vec![job]))),
        }
    }

    /// Mark job `job_id` of `run_id`'s attempt `attempt` completed with `conclusion`, as GitHub
    /// does when the job ends (the jobs API then lists it `completed`).
    pub fn complete_job(&self, run_id: u64, attempt: u32, job_id: u64, conclusion: &str) {
        let mut list = self.shared.jobs.lock().expect("lock");
        for (r, a, jobs) in list.iter_mut() {
            if *r != run_id || *a != attempt {
                continue;
            }
            for j in jobs.as_array_mut().into_iter().flatten() {
                if j["id"] == job_id {
                    j["status"] = Value::from("completed");
                    j["conclusion"] = Value::from(conclusion);
                }
            }
        }
    }

    /// Publish a release: served at `GET /repos/{repo}/releases/tags/{tag}`, each asset's
    /// `browser_download_url` on the blob listener (which refuses an `Authorization` header).
    pub fn add_release(&self, release: Release) {
        self.shared.releases.lock().expect("lock").push(release);
    }

    /// How many unauthenticated API requests remain this hour (default
    /// [`UNAUTHENTICATED_LIMIT`]); at 0 they get GitHub's 403 with `x-ratelimit-remaining: 0`.
    /// Set 0 for a runner whose shared IP address already spent the hour's requests.
    pub fn set_unauthenticated_remaining(&self, n: u32) {
        *self.shared.unauthenticated_left.lock().expect("lock") = n;
    }

    /// Serve `environment` (the spec's `environment` shape, see [`environment_record`]) at
    /// `GET /repos/{o}/{r}/environments/{name}`, replacing one of the same name.
    pub fn set_environment(&self, environment: Value) {
        let mut list = self.shared.environments.lock().expect("lock");
        list.retain(|e| e["name"] != environment["name"]);
        list.push(environment);
    }

    /// The environment `name` as served, if any.
    pub fn environment(&self, name: &str) -> Option<Value> {
        let list = self.shared.environments.lock().expect("lock");
        list.iter().find(|e| e["name"] == name).cloned()
    }

    /// The repository's (or organization's) artifact retention limit, in days: uploads asking for
    /// more are kept this long, without an error, as GitHub does. None: the default 90 days cap
    /// nothing tier1 asks for.
    pub fn set_retention_limit(&self, days: Option<u32>) {
        *self.shared.retention_limit_days.lock().expect("lock") = days;
    }

    /// The retention limit set by [`FakeGithub::set_retention_limit`].
    pub fn retention_limit(&self) -> Option<u32> {
        *self.shared.retention_limit_days.lock().expect("lock")
    }

    /// `ACTIONS_RESULTS_URL`: where the artifact service (fake_artifact_service.rs) answers.
    pub fn results_url(&self) -> String {
        format!("{}/", self.shared.api_base)
    }

    /// Make the next blob upload of an artifact whose name starts with `prefix` fail after
    /// `CreateArtifact` reserved the name (the runner lost its connection mid-upload): the name
    /// stays reserved, never listed.
    pub fn fail_next_artifact_upload(&self, prefix: &str) {
        self.shared
            .artifact_service
            .lock()
            .expect("lock")
            .fail_next_upload(prefix);
    }

    /// The artifact names run `run_id` reserved with `CreateArtifact` and never finalized.
    pub fn reserved_artifact_names(&self, run_id: u64) -> Vec<String> {
        self.shared
            .artifact_service
            .lock()
            .expect("lock")
            .reserved(run_id)
    }

    /// Serve `POST /_harness/<path>` with `hook` (no token required: the harness is the runner).
    pub fn set_harness(&self, hook: HarnessHook) {
        *self.shared.harness.lock().expect("lock") = Some(hook);
    }

    /// The local-store directory served.
    pub fn store_dir(&self) -> PathBuf {
        self.shared.store_dir.clone()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// The comments of issue or pull request `number`, as `GET …/issues/{number}/comments`
    /// returns them.
    pub fn comments(&self, number: u64) -> Vec<Value> {
        let api = self.api_url();
        let list = self.shared.comments.lock().expect("lock");
        list.of(number).map(|c| c.json(&api)).collect()
    }

    /// Post a comment as `login` (another user, or the bot before the test), without a request.
    pub fn add_comment(&self, number: u64, login: &str, body: &str) -> u64 {
        let now = *self.shared.now.lock().expect("lock");
        let repo = LocalStore::open(&self.shared.store_dir)
            .and_then(|s| s.load())
            .map(|s| s.repository.clone())
            .unwrap_or_default();
        let mut list = self.shared.comments.lock().expect("lock");
        list.add(&repo, number, login, body, now)
    }

    /// Requests whose path contains `fragment`.
    pub fn requests_to(&self, fragment: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path().contains(fragment))
            .collect()
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    stall: Option<Duration>,
}

fn json_response(status: u16, v: &Value) -> Response {
    Response {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: serde_json::to_vec(v).expect("json"),
        stall: None,
    }
}

fn error(status: u16, message: &str) -> Response {
    json_response(
        status,
        &json!({"message": message, "documentation_url": "https://docs.github.com/rest"}),
    )
}

fn serve(shared: &Arc<Shared>, stream: TcpStream, kind: &'static str) {
    let Some(read) = crate::support::http_wire::read_request(&stream) else {
        return;
    };
    let short = read.is_err();
    let req = read.unwrap_or_else(|r| r);
    let rec = Recorded {
        listener: kind,
        method: req.method,
        target: req.target,
        headers: req.headers,
    };
    let body = req.body;
    if short {
        return write_response(
            stream,
            error(400, "request body shorter than content-length"),
        );
    }
    shared.requests.lock().expect("lock").push(rec.clone());
    let resp = if kind == "api" && rec.path().starts_with("/_harness/") {
        harness(shared, &rec, &body)
    } else if let Some(method) = rec
        .path()
        .strip_prefix(artifact_service::TWIRP_PREFIX)
        .filter(|_| kind == "api" && rec.method == "POST")
    {
        artifact_service::serve(shared, method, rec.header("authorization"), &body)
    } else if kind == "blob" && rec.method == "PUT" {
        artifact_service::upload(shared, rec.path(), &query(&rec.target), &body)
    } else if kind == "api" && comments::is_comments_path(rec.path()) {
        comments::serve(shared, &rec, &body)
    } else if kind == "api" && vault::is_vault_path(rec.path()) {
        let repo = LocalStore::open(&shared.store_dir)
            .and_then(|s| s.load())
            .map(|s| s.repository.clone())
            .unwrap_or_default();
        vault::serve(shared, &rec, &body, &repo).unwrap_or_else(|| api(shared, &rec))
    } else if kind == "api" {
        api(shared, &rec)
    } else {
        blob(shared, &rec)
    };
    write_response(stream, resp);
}

/// The reason phrase of `status` (clients show it: `(409) Conflict`).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        410 => "Gone",
        412 => "Precondition Failed",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "X",
    }
}

fn write_response(mut stream: TcpStream, r: Response) {
    let mut head = format!("HTTP/1.1 {} {}\r\n", r.status, reason(r.status));
    for (n, v) in &r.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        r.body.len()
    ));
    let _ = stream.write_all(head.as_bytes());
    match r.stall {
        Some(d) => {
            let half = r.body.len() / 2;
            let _ = stream.write_all(&r.body[..half]);
            let _ = stream.flush();
            std::thread::sleep(d);
            let _ = stream.write_all(&r.body[half..]);
        }
        None => {
            let _ = stream.write_all(&r.body);
        }
    }
    let _ = stream.flush();
}

fn harness(shared: &Arc<Shared>, rec: &Recorded, body: &[u8]) -> Response {
    let Some(hook) = shared.harness.lock().expect("lock").clone() else {
        return error(404, "no harness hook installed");
    };
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return error(400, &format!("harness request body: {e}")),
    };
    let fake = FakeGithub {
        shared: shared.clone(),
    };
    let path = rec.path().trim_start_matches("/_harness/");
    match hook(&fake, path, &request) {
        Ok(v) => json_response(200, &v),
        Err(message) => json_response(422, &json!({ "error": message })),
    }
}

fn take_fault(shared: &Shared, pred: impl Fn(&Fault) -> bool) -> Option<Fault> {
    let mut faults = shared.faults.lock().expect("lock");
    let i = faults.iter().position(pred)?;
    let f = faults[i].clone();
    match &mut faults[i] {
        Fault::Status { times, .. } if *times > 1 => *times -= 1,
        Fault::Status { .. } => {
            faults.remove(i);
        }
        _ => {}
    }
    Some(f)
}

/// The response of an injected `Fault::Status` for `path`, consuming one use of it.
fn injected_status(shared: &Shared, path: &str) -> Option<Response> {
    let Some(Fault::Status {
        status, headers, ..
    }) = take_fault(
        shared,
        |f| matches!(f, Fault::Status { on, .. } if path.contains(on.as_str())),
    )
    else {
        return None;
    };
    let mut r = error(status, &format!("injected HTTP {status}"));
    r.headers.extend(headers);
    Some(r)
}

fn has_fault(shared: &Shared, pred: impl Fn(&Fault) -> bool) -> bool {
    shared.faults.lock().expect("lock").iter().any(pred)
}

fn query(target: &str) -> Vec<(String, String)> {
    let q = target.split_once('?').map(|x| x.1).unwrap_or_default();
    url::form_urlencoded::parse(q.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param(q: &[(String, String)], name: &str) -> Option<String> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn api(shared: &Shared, rec: &Recorded) -> Response {
    let path = rec.path().to_string();
    if let Some(r) = injected_status(shared, &path) {
        return r;
    }
    if has_fault(
        shared,
        |f| matches!(f, Fault::EchoAuthorization { on } if path.contains(on.as_str())),
    ) {
        let sent = rec.header("authorization").unwrap_or_default().to_string();
        let bare = sent.rsplit(' ').next().unwrap_or_default().to_string();
        return error(
            401,
            &format!(
                "Bad credentials: you sent Authorization: {sent} (the token {bare} is revoked)"
            ),
        );
    }
    if let Some(resp) = release_api(shared, rec, &path) {
        return resp;
    }
    if !authorized(shared, rec) {
        return error(401, "Bad credentials");
    }
    let state = match LocalStore::open(&shared.store_dir).and_then(|s| s.load()) {
        Ok(s) => s,
        Err(e) => return error(500, &format!("fake store: {e}")),
    };
    if let Some(name) = path.strip_prefix(&format!("/repos/{}/environments/", state.repository)) {
        let list = shared.environments.lock().expect("lock");
        return match list.iter().find(|e| e["name"] == name) {
            Some(e) => json_response(200, e),
            None => error(404, "Not Found"),
        };
    }
    let prefix = format!("/repos/{}/actions/", state.repository);
    let Some(rest) = path.strip_prefix(&prefix) else {
        return error(404, "Not Found");
    };
    let seg: Vec<&str> = rest.split('/').collect();
    let q = query(&rec.target);
    let now = *shared.now.lock().expect("lock");
    match seg.as_slice() {
        ["workflows", wf] => match workflow_id(&state, wf) {
            Some(id) => json_response(
                200,
                &json!({"id": id, "node_id": "W", "name": wf, "path": format!(".github/workflows/{}", file_of(&state, id)), "state": "active"}),
            ),
            None => error(404, "Not Found"),
        },
        ["workflows", wf, "runs"] => {
            let Some(id) = workflow_id(&state, wf) else {
                return error(404, "Not Found");
            };
            let mut runs: Vec<&WorkflowRun> = state
                .runs
                .iter()
                .filter(|r| run_workflow_id(&state, r) == id)
                .filter(|r| param(&q, "branch").is_none_or(|b| r.head_branch == b))
                .filter(|r| {
                    param(&q, "status").is_none_or(|s| {
                        r.status == s || r.conclusion.as_deref() == Some(s.as_str())
                    })
                })
                .collect();
            runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
            let items: Vec<Value> = runs
                .iter()
                .map(|r| patched(shared, run_json(&state, r), false))
                .collect();
            paginate(shared, rec, &q, "workflow_runs", items)
        }
        ["runs", id] => match find_run(&state, id) {
            Some(r) => json_response(200, &patched(shared, run_json(&state, r), false)),
            None => error(404, "Not Found"),
        },
        ["runs", id, "artifacts"] => {
            let Some(run) = find_run(&state, id) else {
                return error(404, "Not Found");
            };
            let items = artifacts(shared, &state, now, |a| {
                a.workflow_run_id == run.id && param(&q, "name").is_none_or(|n| a.name == n)
            });
            paginate(shared, rec, &q, "artifacts", items)
        }
        ["runs", id, "approvals"] => {
            let Ok(id) = id.parse::<u64>() else {
                return error(404, "Not Found");
            };
            let list = shared.approvals.lock().expect("lock");
            let v = list
                .iter()
                .find(|(r, _)| *r == id)
                .map(|(_, v)| v.clone())
                .unwrap_or(json!([]));
            json_response(200, &v)
        }
        ["runs", id, "attempts", n, "jobs"] => {
            let (Ok(id), Ok(n)) = (id.parse::<u64>(), n.parse::<u32>()) else {
                return error(404, "Not Found");
            };
            let list = shared.jobs.lock().expect("lock");
            let items = list
                .iter()
                .find(|(r, a, _)| *r == id && *a == n)
                .and_then(|(_, _, v)| v.as_array().cloned())
                .unwrap_or_default();
            paginate(shared, rec, &q, "jobs", items)
        }
        ["artifacts"] => {
            let items = artifacts(shared, &state, now, |a| {
                param(&q, "name").is_none_or(|n| a.name == n)
            });
            paginate(shared, rec, &q, "artifacts", items)
        }
        ["artifacts", id] => {
            let found = artifacts(shared, &state, now, |a| a.id.to_string() == *id);
            match found.into_iter().next() {
                Some(a) => json_response(200, &a),
                None => error(404, "Not Found"),
            }
        }
        ["artifacts", id, "zip"] => {
            let Some(a) = state.artifacts.iter().find(|a| a.id.to_string() == *id) else {
                return error(404, "Not Found");
            };
            if a.expired || now >= a.expires_at {
                return error(410, "Artifact has expired");
            }
            Response {
                status: 302,
                headers: vec![("location".into(), signed_blob_url(shared, a.id))],
                body: Vec::new(),
                stall: None,
            }
        }
        _ => error(404, "Not Found"),
    }
}

/// A signed download URL of artifact `id` on the blob listener, valid for the location TTL.
fn signed_blob_url(shared: &Shared, id: u64) -> String {
    let n = {
        let mut r = shared.redirects.lock().expect("lock");
        *r += 1;
        *r
    };
    let ttl = *shared.location_ttl.lock().expect("lock");
    let expiry = now_ms() + ttl.as_millis();
    format!(
        "{}/blob/{id}?sig=SIGNATURE{n}&se={expiry}",
        shared.blob_base
    )
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis()
}

/// `GET /repos/{o}/{r}/releases/tags/{tag}` of a public release (no token needed; a wrong one is
/// refused as GitHub does); None for every other path.
fn release_api(shared: &Shared, rec: &Recorded, path: &str) -> Option<Response> {
    let seg: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ["repos", owner, name, "releases", "tags", tag] = seg.as_slice() else {
        return None;
    };
    match rec.header("authorization") {
        Some(_) if !authorized(shared, rec) => {
            return Some(error(401, "Bad credentials"));
        }
        Some(_) => {}
        None => {
            if let Some(limited) = unauthenticated_rate_limit(shared) {
                return Some(limited);
            }
        }
    }
    let repo = format!("{owner}/{name}");
    let releases = shared.releases.lock().expect("lock");
    let Some(r) = releases.iter().find(|r| r.repo == repo && r.tag == *tag) else {
        return Some(error(404, "Not Found"));
    };
    let assets: Vec<Value> = r
        .assets
        .iter()
        .enumerate()
        .map(|(i, (n, bytes))| {
            json!({
                "id": i + 1, "name": n, "size": bytes.len(), "state": "uploaded",
                "content_type": "application/octet-stream",
                "url": format!("{}/repos/{repo}/releases/assets/{}", shared.api_base, i + 1),
                "browser_download_url": format!("{}/releases/{repo}/{tag}/{n}", shared.blob_base),
            })
        })
        .collect();
    Some(json_response(
        200,
        &json!({"id": 1, "tag_name": tag, "name": format!("tier1 {tag}"), "draft": false,
            "prerelease": false, "assets": assets}),
    ))
}

/// Whether the request carries the token, as GitHub accepts it: `Bearer <token>` or
/// `token <token>` (what Octokit sends for an installation token such as `GITHUB_TOKEN`).
fn authorized(shared: &Shared, rec: &Recorded) -> bool {
    rec.header("authorization").is_some_and(|a| {
        a.split_once(' ').is_some_and(|(scheme, t)| {
            (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token"))
                && t == shared.token
        })
    })
}

/// Spend one unauthenticated request; GitHub's 403 once none is left this hour.
fn unauthenticated_rate_limit(shared: &Shared) -> Option<Response> {
    let mut left = shared.unauthenticated_left.lock().expect("lock");
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 3600;
    if *left == 0 {
        let mut r = error(
            403,
            "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)",
        );
        r.headers.extend([
            (
                "x-ratelimit-limit".into(),
                UNAUTHENTICATED_LIMIT.to_string(),
            ),
            ("x-ratelimit-remaining".into(), "0".into()),
            ("x-ratelimit-used".into(), UNAUTHENTICATED_LIMIT.to_string()),
            ("x-ratelimit-reset".into(), reset.to_string()),
            ("x-ratelimit-resource".into(), "core".into()),
        ]);
        return Some(r);
    }
    *left -= 1;
    None
}

fn blob(shared: &Shared, rec: &Recorded) -> Response {
    if let Some(r) = injected_status(shared, rec.path()) {
        return r;
    }
    // Release downloads are public and unsigned; artifact blobs carry a signed expiry.
    let release = rec.path().starts_with("/releases/");
    let expiry = param(&query(&rec.target), "se").and_then(|v| v.parse::<u128>().ok());
    if !release && expiry.is_none_or(|se| now_ms() > se) {
        return error(
            403,
            "AuthenticationFailed: Signature not valid in the specified time frame",
        );
    }
    let auth = rec.header("authorization").is_some();
    if has_fault(shared, |f| matches!(f, Fault::BlobDemandsToken)) {
        if !auth {
            return error(401, "Server failed to authenticate the request");
        }
    } else if auth {
        return error(400, "Authorization header must not be sent to blob storage");
    }
    if let Some(name) = rec.path().strip_prefix("/vault/") {
        return vault::blob(shared, name);
    }
    if let Some(rest) = rec.path().strip_prefix("/releases/") {
        let releases = shared.releases.lock().expect("lock");
        let found = releases.iter().find_map(|r| {
            let name = rest.strip_prefix(&format!("{}/{}/", r.repo, r.tag))?;
            r.assets
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
        });
        return match found {
            Some(body) => Response {
                status: 200,
                headers: vec![("content-type".into(), "application/octet-stream".into())],
                body,
                stall: None,
            },
            None => error(404, "Not Found"),
        };
    }
    let Some(id) = rec
        .path()
        .strip_prefix("/blob/")
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return error(404, "BlobNotFound");
    };
    let Ok(mut body) = std::fs::read(shared.store_dir.join("artifacts").join(format!("{id}.bin")))
    else {
        return error(404, "BlobNotFound");
    };
    let mut stall = None;
    for f in shared.faults.lock().expect("lock").iter() {
        match f {
            Fault::BodyLength { id: i, delta } if *i == id => {
                if *delta < 0 {
                    body.truncate(body.len().saturating_sub(delta.unsigned_abs() as usize));
                } else {
                    body.extend(std::iter::repeat_n(0u8, *delta as usize));
                }
            }
            Fault::CorruptBody { id: i } if *i == id && !body.is_empty() => body[0] ^= 0xff,
            Fault::SlowBody { id: i, ms } if *i == id => stall = Some(Duration::from_millis(*ms)),
            _ => {}
        }
    }
    // The blob keeps the content type its upload gave; a file that is no zip is downloaded
    // under the name Content-Disposition gives (@actions/artifact's streamExtractExternal).
    let content_type = shared
        .artifact_service
        .lock()
        .expect("lock")
        .content_type(id);
    let mut headers = vec![("content-type".into(), content_type.clone())];
    if content_type != "application/zip"
        && let Some(name) = LocalStore::open(&shared.store_dir)
            .and_then(|s| s.load())
            .ok()
            .and_then(|s| {
                s.artifacts
                    .iter()
                    .find(|a| a.id == id)
                    .map(|a| a.name.clone())
            })
    {
        headers.push((
            "content-disposition".into(),
            format!("attachment; filename=\"{name}\"; filename*=UTF-8''{name}"),
        ));
    }
    Response {
        status: 200,
        headers,
        body,
        stall,
    }
}

/// Workflow files the fake knows: those of the store's runs plus `tier1-nightly.yml`.
fn workflow_files(state: &StoreState) -> Vec<String> {
    let mut set: BTreeSet<String> = BTreeSet::new();
    set.insert("tier1-nightly.yml".into());
    for r in &state.runs {
        let p = strip_ref(&r.path);
        set.insert(p.rsplit('/').next().unwrap_or(p).to_string());
    }
    set.into_iter().collect()
}

fn workflow_id(state: &StoreState, wf: &str) -> Option<u64> {
    if let Ok(n) = wf.parse::<u64>() {
        return (n >= 1000 && ((n - 1000) as usize) < workflow_files(state).len()).then_some(n);
    }
    workflow_files(state)
        .iter()
        .position(|f| f == wf)
        .map(|i| 1000 + i as u64)
}

fn file_of(state: &StoreState, id: u64) -> String {
    workflow_files(state)
        .get((id - 1000) as usize)
        .cloned()
        .unwrap_or_default()
}

fn run_workflow_id(state: &StoreState, r: &WorkflowRun) -> u64 {
    r.workflow_id.unwrap_or_else(|| {
        let p = strip_ref(&r.path);
        workflow_id(state, p.rsplit('/').next().unwrap_or(p)).unwrap_or(0)
    })
}

fn repo_id(state: &StoreState, full_name: &str) -> u64 {
    if full_name.eq_ignore_ascii_case(&state.repository) {
        1
    } else {
        2 + full_name.len() as u64
    }
}

fn find_run<'a>(state: &'a StoreState, id: &str) -> Option<&'a WorkflowRun> {
    state.runs.iter().find(|r| r.id.to_string() == id)
}

fn run_json(state: &StoreState, r: &WorkflowRun) -> Value {
    let repo =
        json!({"id": repo_id(state, &r.repository), "full_name": r.repository, "private": false});
    let head = json!({"id": repo_id(state, &r.head_repository), "full_name": r.head_repository, "private": false});
    json!({
        "id": r.id, "node_id": "R", "name": "tier1-nightly", "display_title": "tier1-nightly",
        "head_branch": r.head_branch, "head_sha": r.head_sha,
        "path": format!("{}@refs/heads/{}", strip_ref(&r.path), r.head_branch),
        "run_number": r.id, "run_attempt": r.run_attempt, "event": r.event,
        "status": r.status, "conclusion": r.conclusion,
        "workflow_id": run_workflow_id(state, r),
        "url": "u", "html_url": "h", "created_at": r.created_at, "updated_at": r.created_at,
        "repository": repo, "head_repository": head,
        "head_repository_id": repo_id(state, &r.head_repository),
        "pull_requests": [], "referenced_workflows": []
    })
}

fn artifacts(
    shared: &Shared,
    state: &StoreState,
    now: DateTime<Utc>,
    keep: impl Fn(&StoredArtifact) -> bool,
) -> Vec<Value> {
    let mut out: Vec<&StoredArtifact> = state.artifacts.iter().filter(|a| keep(a)).collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.id));
    out.into_iter()
        .map(|a| {
            let run = state.runs.iter().find(|r| r.id == a.workflow_run_id);
            json!({
                "id": a.id, "node_id": "A", "name": a.name, "size_in_bytes": a.size_in_bytes,
                "url": format!("u/{}", a.id),
                "archive_download_url": format!("u/{}/zip", a.id),
                "expired": a.expired || now >= a.expires_at,
                "created_at": a.created_at, "expires_at": a.expires_at, "updated_at": a.created_at,
                "digest": a.digest,
                "workflow_run": run.map(|r| json!({
                    "id": r.id, "repository_id": repo_id(state, &r.repository),
                    "head_repository_id": repo_id(state, &r.head_repository),
                    "head_branch": r.head_branch, "head_sha": r.head_sha
                }))
            })
        })
        .map(|v| patched(shared, v, true))
        .collect()
}

fn paginate(
    shared: &Shared,
    rec: &Recorded,
    q: &[(String, String)],
    key: &str,
    items: Vec<Value>,
) -> Response {
    let total = items.len();
    let (slice, link) = page_of(shared, rec, q, items);
    let mut r = json_response(200, &json!({"total_count": total, key: slice}));
    r.headers.push(("link".into(), link));
    r
}

/// One page of `items` as `per_page` and `page` ask, and its `Link` header (with the faults).
fn page_of(
    shared: &Shared,
    rec: &Recorded,
    q: &[(String, String)],
    items: Vec<Value>,
) -> (Vec<Value>, String) {
    let path = rec.path();
    let per_page = param(q, "per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, *shared.max_per_page.lock().expect("lock"));
    let page = param(q, "page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let page_url = |n: usize| {
        let mut pairs: Vec<(String, String)> =
            q.iter().filter(|(k, _)| k != "page").cloned().collect();
        pairs.push(("page".into(), n.to_string()));
        let qs = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        format!("{}{path}?{qs}", shared.api_base)
    };
    let mut links = Vec::new();
    let looped = has_fault(
        shared,
        |f| matches!(f, Fault::LinkLoop { on } if path.contains(on.as_str())),
    );
    let cut = has_fault(
        shared,
        |f| matches!(f, Fault::TruncatedPage { on } if path.contains(on.as_str())),
    );
    if looped {
        links.push(format!("<{}>; rel=\"next\"", page_url(1)));
    } else if page < last && !cut {
        links.push(format!("<{}>; rel=\"next\"", page_url(page + 1)));
    }
    links.push(format!("<{}>; rel=\"last\"", page_url(last)));
    (slice, links.join(", "))
}

/// Read a whole stream (helper for tests that poke the fake directly).
pub fn read_all(mut r: impl Read) -> Vec<u8> {
    let mut v = Vec::new();
    let _ = r.read_to_end(&mut v);
    v
}
