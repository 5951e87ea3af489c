//! The Actions artifact service of the fake GitHub, for the real `@actions/artifact` client (the
//! one `actions/upload-artifact` v7 and `actions/download-artifact` v8 bundle): the Twirp service
//! `github.actions.results.api.v1.ArtifactService` at `ACTIONS_RESULTS_URL` (the API listener) and
//! the signed Azure-blob-style upload URL it hands out (the blob listener), backed by the same
//! local store the REST API serves. Contract: actions/toolkit `packages/artifact` (4b9afa4c,
//! @actions/artifact 6.2.2): `src/internal/upload/upload-artifact.ts` (CreateArtifact, the blob
//! upload, FinalizeArtifact with `hash` `sha256:<hex>` and `size`), `src/internal/shared/util.ts`
//! (run and job backend ids from the runtime token's `scp` claim
//! `Actions.Results:<run>:<job>`), `src/internal/shared/artifact-twirp-client.ts` (JSON with proto
//! field names, int64 as strings, errors `{code, msg}` read as `(<status>) <reason>: <msg>`), and
//! Azure's Put Block / Put Block List (`comp=block&blockid=…`, `comp=blocklist`).
//!
//! What GitHub does that it reproduces: a name is unique in a run across attempts — any artifact
//! the run has, finalized or only reserved by a `CreateArtifact` whose upload never finished, makes
//! `CreateArtifact` answer 409 `an artifact with this name already exists on the workflow run`
//! (the error of actions/upload-artifact#478); `ListArtifacts` (and the REST API) list only
//! finalized artifacts, so `overwrite: true` (which deletes what `ListArtifacts` finds) cannot
//! clear a reservation (apache/datafusion-comet#1544: `overwrite: true` and still 409);
//! `ListArtifacts` and `GetSignedArtifactURL` see only the token's own run; the blob keeps the
//! content type the client gave (a zip is extracted on download, any other file is written as
//! is under the name of `Content-Disposition`).
#![allow(dead_code)]

use super::{Response, Shared, error, json_response};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tier1::store::local::LocalStore;

/// The path prefix of the Twirp service.
pub const TWIRP_PREFIX: &str = "/twirp/github.actions.results.api.v1.ArtifactService/";

/// A `CreateArtifact` not (yet) finalized: the name it holds and the blocks uploaded so far.
#[derive(Debug, Clone)]
struct Reservation {
    key: u64,
    run_id: u64,
    job: String,
    name: String,
    mime: String,
    expires_at: Option<DateTime<Utc>>,
    blocks: BTreeMap<String, Vec<u8>>,
    blob: Option<Vec<u8>>,
}

/// The service's state beside the store.
#[derive(Debug, Default)]
pub struct ServiceState {
    reservations: Vec<Reservation>,
    next_key: u64,
    /// Content type of each finalized artifact the client uploaded (by artifact id).
    content_types: BTreeMap<u64, String>,
    /// The job backend id that uploaded each finalized artifact (by artifact id).
    uploaded_by: BTreeMap<u64, String>,
    /// Name prefixes whose next blob upload fails (a runner that lost its connection mid-upload).
    failing_uploads: Vec<String>,
}

impl ServiceState {
    /// The content type an artifact's blob is served with (`application/zip` unless the client
    /// said otherwise).
    pub fn content_type(&self, id: u64) -> String {
        self.content_types
            .get(&id)
            .cloned()
            .unwrap_or_else(|| "application/zip".into())
    }

    /// Make the next blob upload of an artifact whose name starts with `prefix` fail with Azure's
    /// 403 (after `CreateArtifact` reserved the name).
    pub fn fail_next_upload(&mut self, prefix: &str) {
        self.failing_uploads.push(prefix.to_string());
    }

    /// The names reserved and never finalized in run `run_id`.
    pub fn reserved(&self, run_id: u64) -> Vec<String> {
        self.reservations
            .iter()
            .filter(|r| r.run_id == run_id)
            .map(|r| r.name.clone())
            .collect()
    }
}

/// The backend id of run `run_id` (a GUID, as in the runtime token's `scp` claim).
pub fn run_backend_id(run_id: u64) -> String {
    format!("00000000-0000-4000-8000-{run_id:012}")
}

/// The runtime token of a job of run `run_id` (`ACTIONS_RUNTIME_TOKEN`): an unsigned JWT whose
/// `scp` names the run and job backend ids.
pub fn runtime_token(run_id: u64, job: &str) -> String {
    let b64 = |v: &Value| url_safe(&serde_json::to_vec(v).expect("json"));
    let scp = format!(
        "Actions.GenericRead:00000000-0000-0000-0000-000000000000 Actions.Results:{}:{job}",
        run_backend_id(run_id)
    );
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(&json!({"typ": "JWT", "alg": "HS256"})),
        b64(&json!({"scp": scp, "iss": "fake-github"}))
    )
}

fn url_safe(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..=c.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn twirp_error(status: u16, code: &str, msg: &str) -> Response {
    json_response(status, &json!({"code": code, "msg": msg}))
}

/// The run of a backend id of [`run_backend_id`].
fn run_of(backend: &str) -> Option<u64> {
    backend
        .strip_prefix("00000000-0000-4000-8000-")
        .and_then(|n| n.parse().ok())
}

/// `(run id, job backend id)` of the request, checked against its bearer token: the token's scope
/// names the run (a job may list, download and delete what another job of its run uploaded, whose
/// job id the listing gives).
fn caller(token: Option<&str>, body: &Value) -> Result<(u64, String), Response> {
    let run = body["workflow_run_backend_id"].as_str().unwrap_or_default();
    let job = body["workflow_job_run_backend_id"]
        .as_str()
        .unwrap_or_default();
    let scope = format!("Actions.Results:{run}:");
    let granted = token
        .and_then(|t| t.strip_prefix("Bearer "))
        .and_then(|t| t.split('.').nth(1))
        .and_then(decode_url_safe)
        .and_then(|p| serde_json::from_slice::<Value>(&p).ok())
        .and_then(|p| p["scp"].as_str().map(str::to_string))
        .is_some_and(|scp| scp.split(' ').any(|s| s.starts_with(&scope)));
    if !granted {
        return Err(twirp_error(
            401,
            "unauthenticated",
            "the runtime token does not grant this run and job",
        ));
    }
    let run_id =
        run_of(run).ok_or_else(|| twirp_error(404, "not_found", "no such workflow run"))?;
    Ok((run_id, job.to_string()))
}

fn decode_url_safe(s: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
}

fn store(shared: &Shared) -> Result<LocalStore, Response> {
    LocalStore::open(&shared.store_dir).map_err(|e| error(500, &format!("fake store: {e}")))
}

/// Serve `POST /twirp/…/<method>`.
pub(super) fn serve(shared: &Shared, method: &str, auth: Option<&str>, body: &[u8]) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return twirp_error(400, "malformed", "the body is not JSON");
    };
    let (run_id, job) = match caller(auth, &body) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let store = match store(shared) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let state = match store.load() {
        Ok(s) => s,
        Err(e) => return error(500, &format!("fake store: {e}")),
    };
    let name = body["name"].as_str().unwrap_or_default().to_string();
    let finalized = |n: &str| {
        state
            .artifacts
            .iter()
            .filter(|a| a.workflow_run_id == run_id && a.name == n)
            .max_by_key(|a| a.id)
            .cloned()
    };
    let mut svc = shared.artifact_service.lock().expect("lock");
    match method {
        "CreateArtifact" => {
            if finalized(&name).is_some()
                || svc
                    .reservations
                    .iter()
                    .any(|r| r.run_id == run_id && r.name == name)
            {
                return twirp_error(
                    409,
                    "already_exists",
                    "an artifact with this name already exists on the workflow run",
                );
            }
            svc.next_key += 1;
            let key = svc.next_key;
            svc.reservations.push(Reservation {
                key,
                run_id,
                job,
                name,
                mime: body["mime_type"]
                    .as_str()
                    .unwrap_or("application/zip")
                    .to_string(),
                expires_at: body["expires_at"]
                    .as_str()
                    .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                    .map(|t| t.with_timezone(&Utc)),
                blocks: BTreeMap::new(),
                blob: None,
            });
            let se = super::now_ms() + 3_600_000;
            json_response(
                200,
                &json!({"ok": true, "signed_upload_url": format!(
                    "{}/upload/artifacts/{key}?sig=UPLOADSIGNATURE{key}&se={se}", shared.blob_base)}),
            )
        }
        "FinalizeArtifact" => {
            let Some(i) = svc
                .reservations
                .iter()
                .position(|r| r.run_id == run_id && r.name == name)
            else {
                return twirp_error(404, "not_found", "no artifact was created with this name");
            };
            let Some(bytes) = svc.reservations[i].blob.clone() else {
                return twirp_error(
                    412,
                    "failed_precondition",
                    "the artifact's blob was never committed",
                );
            };
            let size = body["size"]
                .as_str()
                .map(str::to_string)
                .or_else(|| body["size"].as_u64().map(|n| n.to_string()))
                .unwrap_or_default();
            if size != bytes.len().to_string() {
                return twirp_error(
                    400,
                    "invalid_argument",
                    &format!("size {size} is not the {} bytes uploaded", bytes.len()),
                );
            }
            let r = svc.reservations.remove(i);
            let days = retention_days(r.expires_at, shared);
            let tmp = tempfile::NamedTempFile::new().expect("temp file");
            std::fs::write(tmp.path(), &bytes).expect("write");
            let meta = match store.upload_file(run_id, &r.name, tmp.path(), days) {
                Ok(m) => m,
                Err(e) => return twirp_error(500, "internal", &e.to_string()),
            };
            if let Some(hash) = body["hash"].as_str()
                && Some(hash) != meta.digest.as_deref()
            {
                return twirp_error(
                    400,
                    "invalid_argument",
                    &format!("hash {hash} is not the uploaded bytes' {:?}", meta.digest),
                );
            }
            svc.content_types.insert(meta.id, r.mime);
            svc.uploaded_by.insert(meta.id, r.job);
            json_response(
                200,
                &json!({"ok": true, "artifact_id": meta.id.to_string()}),
            )
        }
        "ListArtifacts" => {
            let name_filter = body["name_filter"].as_str();
            let id_filter = body["id_filter"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .or_else(|| body["id_filter"].as_u64());
            let now = *shared.now.lock().expect("lock");
            let artifacts: Vec<Value> = state
                .artifacts
                .iter()
                .filter(|a| a.workflow_run_id == run_id && !a.expired && now < a.expires_at)
                .filter(|a| name_filter.is_none_or(|n| a.name == n))
                .filter(|a| id_filter.is_none_or(|id| a.id == id))
                .map(|a| {
                    let job = svc.uploaded_by.get(&a.id).cloned().unwrap_or_default();
                    json!({
                        "workflow_run_backend_id": run_backend_id(run_id),
                        "workflow_job_run_backend_id": job,
                        "database_id": a.id.to_string(), "name": a.name,
                        "size": a.size_in_bytes.to_string(),
                        "created_at": a.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        "digest": a.digest,
                    })
                })
                .collect();
            json_response(200, &json!({ "artifacts": artifacts }))
        }
        "GetSignedArtifactURL" => match finalized(&name) {
            Some(a) => json_response(
                200,
                &json!({"signed_url": super::signed_blob_url(shared, a.id)}),
            ),
            None => twirp_error(404, "not_found", "artifact not found"),
        },
        "DeleteArtifact" => {
            let Some(a) = finalized(&name) else {
                return twirp_error(404, "not_found", "artifact not found");
            };
            let removed = store.update(|s| {
                s.artifacts.retain(|x| x.id != a.id);
                Ok(())
            });
            if let Err(e) = removed {
                return twirp_error(500, "internal", &e.to_string());
            }
            let _ = std::fs::remove_file(store.artifact_path(a.id));
            json_response(200, &json!({"ok": true, "artifact_id": a.id.to_string()}))
        }
        other => twirp_error(404, "bad_route", &format!("no method {other}")),
    }
}

/// Days an artifact is kept: until `expires_at` (rounded up), the repository default of 90 when
/// none is asked, and never beyond the repository's limit.
fn retention_days(expires_at: Option<DateTime<Utc>>, shared: &Shared) -> u32 {
    let asked = expires_at.map_or(90, |t| {
        let secs = (t - Utc::now()).num_seconds().max(1);
        u32::try_from((secs + 86_399) / 86_400).unwrap_or(90)
    });
    let limit = *shared.retention_limit_days.lock().expect("lock");
    limit.map_or(asked, |l| asked.min(l)).max(1)
}

/// `PUT /upload/artifacts/<key>?…` on the blob listener: Put Block, Put Block List, Put Blob.
pub(super) fn upload(
    shared: &Shared,
    path: &str,
    query: &[(String, String)],
    body: &[u8],
) -> Response {
    let Some(key) = path
        .strip_prefix("/upload/artifacts/")
        .and_then(|k| k.parse::<u64>().ok())
    else {
        return error(404, "BlobNotFound");
    };
    let expiry = super::param(query, "se").and_then(|v| v.parse::<u128>().ok());
    if expiry.is_none_or(|se| super::now_ms() > se) {
        return error(
            403,
            "AuthenticationFailed: Signature not valid in the specified time frame",
        );
    }
    let mut svc = shared.artifact_service.lock().expect("lock");
    let Some(i) = svc.reservations.iter().position(|r| r.key == key) else {
        return error(404, "BlobNotFound");
    };
    let name = svc.reservations[i].name.clone();
    if let Some(f) = svc
        .failing_uploads
        .iter()
        .position(|p| name.starts_with(p.as_str()))
    {
        svc.failing_uploads.remove(f);
        return error(
            403,
            "AuthorizationFailure: This request is not authorized to perform this operation.",
        );
    }
    let r = &mut svc.reservations[i];
    match super::param(query, "comp").as_deref() {
        Some("block") => {
            let id = super::param(query, "blockid").unwrap_or_default();
            r.blocks.insert(id, body.to_vec());
        }
        Some("blocklist") => {
            let xml = String::from_utf8_lossy(body);
            let mut blob = Vec::new();
            for part in xml.split('<').skip(1) {
                let Some((tag, text)) = part.split_once('>') else {
                    continue;
                };
                if matches!(tag, "Latest" | "Uncommitted" | "Committed") {
                    match r.blocks.get(text.trim()) {
                        Some(b) => blob.extend_from_slice(b),
                        None => return error(400, "InvalidBlockList"),
                    }
                }
            }
            r.blob = Some(blob);
        }
        None => r.blob = Some(body.to_vec()),
        Some(other) => return error(400, &format!("comp={other} is not emulated")),
    }
    let mut resp = Response {
        status: 201,
        headers: vec![
            ("etag".into(), format!("\"0x{key:X}\"")),
            (
                "last-modified".into(),
                Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
            ),
            ("x-ms-request-id".into(), format!("fake-{key}")),
            ("x-ms-version".into(), "2025-11-05".into()),
            ("x-ms-request-server-encrypted".into(), "true".into()),
        ],
        body: Vec::new(),
        stall: None,
    };
    resp.headers
        .push(("content-type".into(), "application/xml".into()));
    resp
}
