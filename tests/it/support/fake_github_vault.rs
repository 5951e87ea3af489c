//! The fake's vault: the served local store's `vault/` as GitHub serves a repository's releases
//! (`repos/get-release-by-tag`, `repos/create-release`, `repos/upload-release-asset`,
//! `repos/update-release`, `repos/delete-release`, `repos/get-release-asset`): every vault object
//! is a published, immutable release whose tag is the object's name, with one asset whose
//! `digest` is the SHA-256 of its bytes, as GitHub computes it. A created release is a draft (not
//! served by tag) until it is updated with `draft: false`; its asset is uploaded to its
//! `upload_url` (on the API listener here; `uploads.github.com` on GitHub), and publishing it
//! stores the object in the local store's vault. An asset's bytes are downloaded through a signed
//! redirect to the blob listener, as an artifact's. A `Fault::Status` whose `on` is in the path
//! applies to every route (`/uploads/` for the upload).

use super::{Recorded, Response, Shared, error, json_response, now_ms};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::path::Path;
use tier1::store::local::LocalStore;
use tier1::store::{ArtifactStore, VaultObject};

/// A draft release the fake holds (GitHub keeps drafts out of `releases/tags/{tag}`).
#[derive(Debug, Clone)]
pub struct Draft {
    pub id: u64,
    pub tag: String,
    pub asset: Option<(String, Vec<u8>)>,
}

/// The drafts and the next release id.
#[derive(Debug, Default)]
pub struct Drafts {
    pub list: Vec<Draft>,
    next_id: u64,
}

/// A stable id for an object name (GitHub's asset and release ids are numbers).
pub fn object_id(name: &str) -> u64 {
    let h = Sha256::digest(name.as_bytes());
    u64::from_be_bytes(h[..8].try_into().unwrap()) >> 12
}

/// Whether the fake's vault serves `path` (API listener).
pub fn is_vault_path(path: &str) -> bool {
    path.starts_with("/uploads/") || path.contains("/releases")
}

fn store(shared: &Shared) -> Result<LocalStore, Response> {
    LocalStore::open(&shared.store_dir).map_err(|e| error(500, &format!("fake store: {e}")))
}

/// The vault object `name` of the store, if any.
fn object(shared: &Shared, name: &str) -> Result<Option<VaultObject>, Response> {
    let s = store(shared)?;
    s.vault_find(&[name.to_string()])
        .map(|mut m| m.remove(name))
        .map_err(|e| error(500, &format!("fake vault: {e}")))
}

fn asset_json(shared: &Shared, repo: &str, o: &VaultObject) -> Value {
    let id = object_id(&o.name);
    json!({
        "id": id, "node_id": "RA", "name": o.file_name, "label": null,
        "state": "uploaded", "content_type": "application/gzip", "size": o.size_in_bytes,
        "digest": o.digest, "download_count": 0,
        "created_at": o.created_at, "updated_at": o.created_at,
        "url": format!("{}/repos/{repo}/releases/assets/{id}", shared.api_base),
        "browser_download_url": format!("https://github.com/{repo}/releases/download/{}/{}", o.name, o.file_name),
    })
}

fn release_json(
    shared: &Shared,
    repo: &str,
    id: u64,
    tag: &str,
    draft: bool,
    assets: Vec<Value>,
) -> Value {
    json!({
        "id": id, "node_id": "RE", "tag_name": tag, "target_commitish": "main", "name": tag,
        "body": "tier1 sealed history segment", "draft": draft, "prerelease": false,
        "immutable": !draft,
        "url": format!("{}/repos/{repo}/releases/{id}", shared.api_base),
        "upload_url": format!("{}/uploads/repos/{repo}/releases/{id}/assets{{?name,label}}", shared.api_base),
        "assets": assets,
    })
}

/// Serve a vault route, or None to let the fake's other routes answer (another repository's
/// public release, for instance).
pub(super) fn serve(shared: &Shared, rec: &Recorded, body: &[u8], repo: &str) -> Option<Response> {
    let path = rec.path().to_string();
    let uploads = format!("/uploads/repos/{repo}/releases/");
    let releases = format!("/repos/{repo}/releases");
    let rest = if let Some(r) = path.strip_prefix(&uploads) {
        format!("uploads/{r}")
    } else {
        path.strip_prefix(&releases)?
            .trim_start_matches('/')
            .to_string()
    };
    if let Some(r) = super::injected_status(shared, &path) {
        return Some(r);
    }
    if rec.header("authorization") != Some(&format!("Bearer {}", shared.token)) {
        return Some(error(401, "Bad credentials"));
    }
    let seg: Vec<&str> = rest.split('/').collect();
    Some(match (rec.method.as_str(), seg.as_slice()) {
        ("GET", ["tags", tag]) => match object(shared, tag) {
            Ok(Some(o)) => json_response(
                200,
                &release_json(
                    shared,
                    repo,
                    object_id(tag),
                    tag,
                    false,
                    vec![asset_json(shared, repo, &o)],
                ),
            ),
            Ok(None) => return None,
            Err(r) => r,
        },
        ("GET", [""]) => list(shared, rec, repo),
        ("POST", [""]) => create(shared, repo, body),
        ("POST", ["uploads", id, "assets"]) => upload(shared, rec, repo, id, body),
        ("PATCH", [id]) => publish(shared, repo, id, body),
        ("DELETE", [id]) => {
            let mut d = shared.vault.lock().expect("lock");
            let before = d.list.len();
            d.list.retain(|x| x.id.to_string() != *id);
            if d.list.len() < before {
                Response {
                    status: 204,
                    headers: vec![],
                    body: vec![],
                    stall: None,
                }
            } else {
                error(404, "Not Found")
            }
        }
        ("GET", ["assets", id]) => asset_download(shared, rec, id),
        _ => return None,
    })
}

/// `GET /repos/{o}/{r}/releases`: the published vault objects (newest first, by name here), as
/// a bare array with `Link` pagination.
fn list(shared: &Shared, rec: &Recorded, repo: &str) -> Response {
    let s = match store(shared) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let mut names: Vec<String> = std::fs::read_dir(shared.store_dir.join("vault"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".json"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let found = s.vault_find(&names).unwrap_or_default();
    let items: Vec<Value> = found
        .values()
        .map(|o| {
            release_json(
                shared,
                repo,
                object_id(&o.name),
                &o.name,
                false,
                vec![asset_json(shared, repo, o)],
            )
        })
        .collect();
    let q = super::query(&rec.target);
    let (slice, link) = super::page_of(shared, rec, &q, items);
    let mut r = json_response(200, &Value::Array(slice));
    r.headers.push(("link".into(), link));
    r
}

fn create(shared: &Shared, repo: &str, body: &[u8]) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(body) else {
        return error(400, "Problems parsing JSON");
    };
    let Some(tag) = req["tag_name"].as_str() else {
        return error(422, "Validation Failed: tag_name is missing");
    };
    match object(shared, tag) {
        Ok(Some(_)) => {
            return json_response(
                422,
                &json!({"message": "Validation Failed", "errors": [{"resource": "Release", "code": "already_exists", "field": "tag_name"}]}),
            );
        }
        Ok(None) => {}
        Err(r) => return r,
    }
    if req["draft"] != json!(true) {
        return error(
            422,
            "the fake vault only creates drafts (immutable releases take their assets as drafts)",
        );
    }
    let mut d = shared.vault.lock().expect("lock");
    d.next_id += 1;
    let id = 9_000 + d.next_id;
    d.list.push(Draft {
        id,
        tag: tag.to_string(),
        asset: None,
    });
    json_response(201, &release_json(shared, repo, id, tag, true, vec![]))
}

fn upload(shared: &Shared, rec: &Recorded, repo: &str, id: &str, body: &[u8]) -> Response {
    let Some(name) = super::param(&super::query(&rec.target), "name") else {
        return error(422, "name is required");
    };
    let mut d = shared.vault.lock().expect("lock");
    let Some(draft) = d.list.iter_mut().find(|x| x.id.to_string() == id) else {
        return error(404, "Not Found");
    };
    if draft.asset.is_some() {
        return json_response(
            422,
            &json!({"message": "Validation Failed", "errors": [{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}]}),
        );
    }
    draft.asset = Some((name.clone(), body.to_vec()));
    json_response(
        201,
        &json!({"id": object_id(&draft.tag), "name": name, "state": "uploaded", "size": body.len(),
            "digest": format!("sha256:{:x}", Sha256::digest(body)), "created_at": chrono::Utc::now(),
            "url": format!("{}/repos/{repo}/releases/assets/{}", shared.api_base, object_id(&draft.tag))}),
    )
}

fn publish(shared: &Shared, repo: &str, id: &str, body: &[u8]) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(body) else {
        return error(400, "Problems parsing JSON");
    };
    if req["draft"] != json!(false) {
        return error(422, "the fake vault only publishes drafts");
    }
    let draft = {
        let mut d = shared.vault.lock().expect("lock");
        let Some(i) = d.list.iter().position(|x| x.id.to_string() == id) else {
            return error(404, "Not Found");
        };
        d.list.remove(i)
    };
    let Some((file, bytes)) = draft.asset else {
        return error(422, "a release is published with its asset");
    };
    let s = match store(shared) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let tmp = tempfile::NamedTempFile::new().expect("temp");
    std::fs::write(tmp.path(), &bytes).expect("write");
    match s.vault_put(&draft.tag, &file, Path::new(tmp.path())) {
        Ok(o) => json_response(
            200,
            &release_json(
                shared,
                repo,
                draft.id,
                &draft.tag,
                false,
                vec![asset_json(shared, repo, &o)],
            ),
        ),
        Err(e) => error(422, &format!("fake vault: {e}")),
    }
}

/// `GET …/releases/assets/{id}` with `Accept: application/octet-stream`: a signed redirect to
/// the blob listener (`/vault/<name>`); with the JSON media type, the asset's record.
fn asset_download(shared: &Shared, rec: &Recorded, id: &str) -> Response {
    let s = match store(shared) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let names: Vec<String> = std::fs::read_dir(shared.store_dir.join("vault"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".json"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(name) = names.into_iter().find(|n| object_id(n).to_string() == id) else {
        return error(404, "Not Found");
    };
    if rec.header("accept") != Some("application/octet-stream") {
        let Ok(Some(o)) = s
            .vault_find(std::slice::from_ref(&name))
            .map(|mut m| m.remove(&name))
        else {
            return error(404, "Not Found");
        };
        let repo = s.repository().to_string();
        return json_response(200, &asset_json(shared, &repo, &o));
    }
    let ttl = *shared.location_ttl.lock().expect("lock");
    let expiry = now_ms() + ttl.as_millis();
    Response {
        status: 302,
        headers: vec![(
            "location".into(),
            format!(
                "{}/vault/{name}?sig=SIGNATURE&se={expiry}",
                shared.blob_base
            ),
        )],
        body: Vec::new(),
        stall: None,
    }
}

/// The blob listener's `/vault/<name>`: the object's bytes.
pub(super) fn blob(shared: &Shared, name: &str) -> Response {
    match std::fs::read(shared.store_dir.join("vault").join(format!("{name}.bin"))) {
        Ok(body) => Response {
            status: 200,
            headers: vec![("content-type".into(), "application/gzip".into())],
            body,
            stall: None,
        },
        Err(_) => error(404, "BlobNotFound"),
    }
}
