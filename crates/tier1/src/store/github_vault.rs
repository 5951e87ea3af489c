//! The vault on GitHub: one published release per object, its tag the object's name, with one
//! asset (the file). GitHub computes each asset's SHA-256 (`digest`) itself, and with immutable
//! releases enabled neither the tag nor the asset can ever change; releases never expire. A lookup
//! reads the releases by tag, or through the listing for many (metadata only). A put creates a draft, uploads the asset to the
//! draft's `upload_url`, publishes the draft, and reads the release back: a put that fails part
//! way leaves a draft (deleted when possible), never a published release without its asset. A
//! download asks for the asset with `Accept: application/octet-stream` and follows the redirect
//! without the token.

use super::github::GithubStore;
use super::vault::{VaultObject, is_valid_object_name};
use super::{Downloaded, StoreError};
use crate::digest::Digest;
use crate::github::GithubError;
use crate::github::download::{Expected, download_release_asset};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Up to this many names are looked up by tag, one request each; more through the listing.
const BY_TAG_AT_MOST: usize = 8;
/// Most pages of releases listed (100 each).
const MAX_RELEASE_PAGES: usize = 10;

/// A release as the API returns it (the fields the vault reads).
#[derive(Debug, Deserialize)]
struct ApiRelease {
    id: u64,
    tag_name: String,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    immutable: Option<bool>,
    #[serde(default)]
    upload_url: Option<String>,
    #[serde(default)]
    assets: Vec<ApiAsset>,
}

/// A release asset as the API returns it.
#[derive(Debug, Deserialize)]
struct ApiAsset {
    id: u64,
    name: String,
    size: u64,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    state: Option<String>,
    created_at: DateTime<Utc>,
}

fn invalid_name(name: &str) -> StoreError {
    StoreError::Invalid(format!(
        "vault object name: expected 1-200 characters of [A-Za-z0-9_.-] starting with a letter or digit, found {name:?}"
    ))
}

/// The object a published release holds: its one uploaded asset (None for a draft, or a release
/// with no uploaded asset).
fn object_of(r: ApiRelease) -> Option<VaultObject> {
    if r.draft {
        return None;
    }
    let a = r
        .assets
        .into_iter()
        .find(|a| a.state.as_deref().is_none_or(|s| s == "uploaded"))?;
    Some(VaultObject {
        name: r.tag_name,
        file_name: a.name,
        size_in_bytes: a.size,
        digest: a.digest,
        created_at: a.created_at,
        id: a.id,
        immutable: r.immutable,
    })
}

impl GithubStore {
    fn release_by_tag(&self, tag: &str) -> Result<Option<ApiRelease>, StoreError> {
        if !is_valid_object_name(tag) {
            return Err(invalid_name(tag));
        }
        let route = self.repo_route(&format!("/releases/tags/{tag}"));
        match self.client().get_json::<ApiRelease>(&route, &[]) {
            Ok(r) => Ok(Some(r)),
            Err(e) if e.status() == 404 => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// `vault_find`: a few names by tag, one request each; more from the releases listing
    /// (100 a page, at most [`MAX_RELEASE_PAGES`] pages), and by tag only the names a listing cut
    /// short did not reach, so a long history's restore asks a few pages, not one request per
    /// segment.
    pub(crate) fn github_vault_find(
        &self,
        names: &[String],
    ) -> Result<BTreeMap<String, VaultObject>, StoreError> {
        let mut out = BTreeMap::new();
        let mut unseen: Vec<&String> = names.iter().collect();
        if names.len() > BY_TAG_AT_MOST {
            for name in names {
                if !is_valid_object_name(name) {
                    return Err(invalid_name(name));
                }
            }
            let paged = self.client().get_paginated(
                &self.repo_route("/releases"),
                &[("per_page", "100".to_string())],
                (MAX_RELEASE_PAGES, usize::MAX),
                // A bare array: complete when the last page was reached.
                |page: Vec<ApiRelease>| (0, page),
            )?;
            for r in paged.items {
                let tag = r.tag_name.clone();
                if names.contains(&tag)
                    && let Some(obj) = object_of(r)
                {
                    out.insert(tag, obj);
                }
            }
            if paged.complete {
                return Ok(out);
            }
            unseen.retain(|n| !out.contains_key(*n));
        }
        for name in unseen {
            if let Some(obj) = self.release_by_tag(name)?.and_then(object_of) {
                out.insert(name.clone(), obj);
            }
        }
        Ok(out)
    }

    /// `vault_put`: draft, upload, publish, read back (see the module documentation).
    pub(crate) fn github_vault_put(
        &self,
        name: &str,
        file_name: &str,
        path: &Path,
    ) -> Result<VaultObject, StoreError> {
        let bytes = std::fs::read(path).map_err(|source| StoreError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let digest = Digest::of_bytes(&bytes);
        let size = bytes.len() as u64;
        if let Some(existing) = self.github_vault_find(&[name.to_string()])?.remove(name) {
            return existing.must_hold(&digest, size, "the vault's release");
        }
        let client = self.client();
        let create = client.url(&self.repo_route("/releases"), &[])?;
        let body = serde_json::json!({
            "tag_name": name,
            "name": name,
            "body": format!("tier1 sealed history segment {file_name} ({size} bytes, {digest}): immutable, referenced by digest from the history index (docs/formats.md)."),
            "draft": true,
            "make_latest": "false",
        });
        let fin = client.send_api(reqwest::Method::POST, &create, Some(&body), false)?;
        let (draft, _): (ApiRelease, _) = client.decode(fin)?;
        let published = self.upload_and_publish(&draft, file_name, bytes);
        if published.is_err() {
            let del = client.url(&self.repo_route(&format!("/releases/{}", draft.id)), &[]);
            if let Ok(u) = del {
                let _ = client.send_api(reqwest::Method::DELETE, &u, None, true);
            }
        }
        published?;
        let stored = self
            .github_vault_find(&[name.to_string()])?
            .remove(name)
            .ok_or_else(|| StoreError::NotFound {
                what: format!(
                    "vault object {name} (release {}) after publishing it",
                    draft.id
                ),
            })?;
        stored.must_hold(&digest, size, "the vault's release")
    }

    fn upload_and_publish(
        &self,
        draft: &ApiRelease,
        file_name: &str,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        let client = self.client();
        let template = draft
            .upload_url
            .as_deref()
            .ok_or_else(|| StoreError::Remote {
                endpoint: "POST /releases".into(),
                status: 0,
                message: format!("the draft release {} has no upload_url", draft.id),
            })?;
        let base = template.split('{').next().unwrap_or(template);
        let mut u = url::Url::parse(base).map_err(|e| StoreError::Remote {
            endpoint: "POST /releases".into(),
            status: 0,
            message: format!("unusable upload_url: {e}"),
        })?;
        u.query_pairs_mut().append_pair("name", file_name);
        let fin = client.post_bytes(&u, "application/gzip", bytes)?;
        let _: (ApiAsset, _) = client.decode(fin)?;
        let publish = client.url(&self.repo_route(&format!("/releases/{}", draft.id)), &[])?;
        let body = serde_json::json!({"draft": false});
        let fin = client.send_api(reqwest::Method::PATCH, &publish, Some(&body), true)?;
        let _: (ApiRelease, _) = client.decode(fin)?;
        Ok(())
    }

    /// `vault_download`: the asset's bytes through the storage redirect.
    pub(crate) fn github_vault_download(
        &self,
        object: &VaultObject,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        let integrity = |message: String| StoreError::Integrity {
            id: object.id,
            name: object.name.clone(),
            message,
        };
        let digest = match object.digest.as_deref() {
            Some(d) => Some(Digest::parse(d).map_err(|e| integrity(e.to_string()))?),
            None => None,
        };
        let expected = Expected {
            id: object.id,
            size_in_bytes: object.size_in_bytes,
            digest: digest.as_ref(),
        };
        let mut sink = crate::digest::Watched::new(sink);
        let got = download_release_asset(self.client(), &expected, &mut sink, cap);
        if got.is_err()
            && let Some(source) = sink.take_error()
        {
            return Err(StoreError::Sink {
                id: object.id,
                name: object.name.clone(),
                source,
            });
        }
        match got {
            Ok((digest, bytes)) => Ok(Downloaded { digest, bytes }),
            Err(GithubError::Integrity { endpoint, message }) => {
                Err(integrity(format!("{endpoint}: {message}")))
            }
            Err(GithubError::Gone { .. }) => Err(StoreError::NotFound {
                what: format!("vault object {}", object.name),
            }),
            Err(e) => Err(e.into()),
        }
    }
}
