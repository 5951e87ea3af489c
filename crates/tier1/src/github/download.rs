//! Artifact and release asset download: `GET …/artifacts/{id}/zip` (or `…/releases/assets/{id}`
//! with `Accept: application/octet-stream`) with the token and WITHOUT following the redirect,
//! then the pre-signed `Location` fetched with NO `Authorization` (a retry asks `/zip` for a fresh
//! one: the URL expires after a minute), streamed through `digest::copy_hashed` under the size
//! cap, its length and digest checked against the metadata.

use super::GithubError;
use super::client::{GithubClient, transport_message};
use crate::digest::{Digest, copy_hashed};
use std::io::{self, Read, Write};

/// What the caller knows about the artifact before downloading it.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    /// Artifact id.
    pub(crate) id: u64,
    /// `size_in_bytes` from the listing.
    pub(crate) size_in_bytes: u64,
    /// `digest` from the listing, when it has one.
    pub(crate) digest: Option<&'a Digest>,
}

/// Stream artifact `expected.id` into `sink` (at most `cap` bytes). Returns the digest and length
/// of what was written. 410 => `Gone`; length or digest disagreement => `Integrity`.
pub(crate) fn download_artifact(
    client: &GithubClient,
    expected: &Expected<'_>,
    sink: &mut dyn Write,
    cap: u64,
) -> Result<(Digest, u64), GithubError> {
    let route = format!(
        "{}/actions/artifacts/{}/zip",
        client.config().repo_route(),
        expected.id
    );
    download_redirected(client, &route, None, expected, sink, cap)
}

/// Stream release asset `expected.id` into `sink` (at most `cap` bytes): `GET
/// …/releases/assets/{id}` with `Accept: application/octet-stream` answers with a redirect to
/// storage, fetched without the token, as an artifact's.
pub(crate) fn download_release_asset(
    client: &GithubClient,
    expected: &Expected<'_>,
    sink: &mut dyn Write,
    cap: u64,
) -> Result<(Digest, u64), GithubError> {
    let route = format!(
        "{}/releases/assets/{}",
        client.config().repo_route(),
        expected.id
    );
    let accept = Some("application/octet-stream");
    download_redirected(client, &route, accept, expected, sink, cap)
}

/// The download of `route`'s redirect target (see the module documentation).
fn download_redirected(
    client: &GithubClient,
    route: &str,
    accept: Option<&'static str>,
    expected: &Expected<'_>,
    sink: &mut dyn Write,
    cap: u64,
) -> Result<(Digest, u64), GithubError> {
    let api_url = client.url(route, &[])?;
    let fin = client.get_blob(|| locate(client, &api_url, accept, expected, cap))?;
    let status = fin.response.status().as_u16();
    if status != 200 {
        return Err(GithubError::Status {
            endpoint: fin.endpoint,
            status,
            message: client.error_message(fin.response),
        });
    }
    stream_checked(client, fin, expected, sink)
}

/// Ask `api_url` (the artifact's `/zip` route) for the redirect and return its signed `Location`;
/// 410 => `Gone`; a size above `cap` is refused before any blob is fetched.
fn locate(
    client: &GithubClient,
    api_url: &url::Url,
    accept: Option<&'static str>,
    expected: &Expected<'_>,
    cap: u64,
) -> Result<url::Url, GithubError> {
    let fin = match accept {
        Some(a) => client.get_api_accept(api_url, a)?,
        None => client.get_api(api_url)?,
    };
    let endpoint = fin.endpoint.clone();
    let status = fin.response.status().as_u16();
    if status == 410 {
        return Err(GithubError::Gone { endpoint });
    }
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        let message = if (200..300).contains(&status) {
            "expected a redirect to the artifact's storage URL".to_string()
        } else {
            client.error_message(fin.response)
        };
        return Err(GithubError::Status {
            endpoint,
            status,
            message,
        });
    }
    let location = fin
        .response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| GithubError::Status {
            endpoint: endpoint.clone(),
            status,
            message: "redirect without a Location header".into(),
        })?;
    let blob_url = api_url.join(location).map_err(|e| GithubError::Status {
        endpoint: endpoint.clone(),
        status,
        message: format!("unusable Location header: {e}"),
    })?;
    if expected.size_in_bytes > cap {
        return Err(GithubError::Integrity {
            endpoint,
            message: format!(
                "size_in_bytes {} exceeds the download cap of {cap} bytes",
                expected.size_in_bytes
            ),
        });
    }
    Ok(blob_url)
}

/// Stream the located blob's body into `sink` and check it against `expected`.
fn stream_checked(
    client: &GithubClient,
    fin: super::client::Final,
    expected: &Expected<'_>,
    sink: &mut dyn Write,
) -> Result<(Digest, u64), GithubError> {
    let blob_endpoint = fin.endpoint.clone();
    let mut body = BodyReader {
        client,
        response: fin.response,
        pending: Vec::new(),
    };
    let (digest, n) = match copy_hashed(&mut body, sink, expected.size_in_bytes) {
        Ok(x) => x,
        Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
            return Err(GithubError::Integrity {
                endpoint: blob_endpoint,
                message: format!(
                    "body is longer than size_in_bytes: expected {} bytes, found more",
                    expected.size_in_bytes
                ),
            });
        }
        Err(e) => {
            return Err(GithubError::Transport {
                endpoint: blob_endpoint,
                message: e.to_string(),
            });
        }
    };
    if n != expected.size_in_bytes {
        return Err(GithubError::Integrity {
            endpoint: blob_endpoint,
            message: format!(
                "body length differs from size_in_bytes: expected {} bytes, found {n}",
                expected.size_in_bytes
            ),
        });
    }
    if let Some(want) = expected.digest
        && *want != digest
    {
        return Err(GithubError::Integrity {
            endpoint: blob_endpoint,
            message: format!("digest mismatch: expected {want}, found {digest}"),
        });
    }
    Ok((digest, n))
}

/// A blocking `Read` over the async response body, chunk by chunk.
struct BodyReader<'a> {
    client: &'a GithubClient,
    response: reqwest::Response,
    pending: Vec<u8>,
}

impl Read for BodyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            match self.client.block_on(self.response.chunk()) {
                Ok(Some(chunk)) => self.pending = chunk.to_vec(),
                Ok(None) => return Ok(0),
                Err(e) => return Err(io::Error::other(transport_message(&e))),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}
