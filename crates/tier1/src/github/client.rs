//! The REST client: authenticated requests with the API-version and User-Agent headers, the retry
//! loop for idempotent calls (a non-idempotent write is sent once), JSON decoding with
//! endpoint-naming errors, and `Link` pagination to the end.
//!
//! Transport is `reqwest` directly rather than octocrab: octocrab always adds its own
//! `X-GitHub-Api-Version: 2022-11-28` and `User-Agent: octocrab` (ours would be appended as second
//! values), hides the headers retries and pagination need behind its own retry layer, and follows
//! the artifact redirect itself. One client with explicit behaviour is simpler to prove.

use super::pagination::{PageWalk, Step};
use super::retry::{Decision, ResponseFacts};
use super::types::ApiErrorBody;
use super::{API_VERSION, GithubConfig, GithubError, USER_AGENT};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// One page walk's result.
#[derive(Debug, Clone)]
pub(crate) struct Paged<T> {
    /// Items of every page fetched, in order.
    pub(crate) items: Vec<T>,
    /// True when the last page was reached and the item count covers `total_count`.
    pub(crate) complete: bool,
}

/// A response whose status was final (success or a non-transient error), body not yet read.
#[derive(Debug)]
pub(crate) struct Final {
    /// The response.
    pub(crate) response: reqwest::Response,
    /// `METHOD /path?query` for messages.
    pub(crate) endpoint: String,
}

/// A request body.
enum Body<'a> {
    /// JSON.
    Json(&'a serde_json::Value),
    /// Raw bytes of a content type.
    Bytes(&'static str, Vec<u8>),
}

/// Synchronous facade over an async `reqwest` client and a private current-thread runtime.
#[derive(Debug)]
pub struct GithubClient {
    cfg: GithubConfig,
    api: reqwest::Client,
    blob: reqwest::Client,
    api_origin: url::Origin,
    rt: tokio::runtime::Runtime,
}

impl GithubClient {
    /// Build the client. The API client never follows redirects (the artifact download needs the
    /// `Location`); the blob client never carries the token.
    pub fn new(cfg: GithubConfig) -> Result<Self, GithubError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GithubError::Config(format!("cannot start the async runtime: {e}")))?;
        let api_origin = url::Url::parse(&cfg.api_url)
            .map_err(|e| GithubError::Config(format!("GITHUB_API_URL {:?}: {e}", cfg.api_url)))?
            .origin();
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "x-github-api-version",
            HeaderValue::from_static(API_VERSION),
        );
        let build = |headers: HeaderMap, redirects: reqwest::redirect::Policy| {
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .default_headers(headers)
                .redirect(redirects)
                .connect_timeout(cfg.connect_timeout)
                .read_timeout(cfg.read_timeout)
                .build()
                .map_err(|e| GithubError::Config(format!("cannot build the HTTP client: {e}")))
        };
        let (api, blob) = {
            let _guard = rt.enter();
            (
                build(headers, reqwest::redirect::Policy::none())?,
                build(HeaderMap::new(), reqwest::redirect::Policy::limited(5))?,
            )
        };
        Ok(GithubClient {
            cfg,
            api,
            blob,
            api_origin,
            rt,
        })
    }

    /// The configuration in use.
    pub(crate) fn config(&self) -> &GithubConfig {
        &self.cfg
    }

    /// Run a future on the client's runtime.
    pub(crate) fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Absolute URL of an API route (`/repos/...`) with a query.
    pub(crate) fn url(
        &self,
        route: &str,
        query: &[(&str, String)],
    ) -> Result<url::Url, GithubError> {
        let mut u = url::Url::parse(&format!("{}{route}", self.cfg.api_url))
            .map_err(|e| GithubError::Config(format!("bad route {route:?}: {e}")))?;
        if !query.is_empty() {
            u.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        Ok(u)
    }

    /// `METHOD /path?query` (never the host's credentials; blob URLs lose their query).
    pub(crate) fn endpoint(method: &str, u: &url::Url, with_query: bool) -> String {
        match (with_query, u.query()) {
            (true, Some(q)) => format!("{method} {}?{q}", u.path()),
            _ => format!("{method} {}", u.path()),
        }
    }

    /// GET `u` on the API host with the token, retrying transient failures; returns the first
    /// non-transient response (any status) or an error once retries are exhausted.
    pub(crate) fn get_api(&self, u: &url::Url) -> Result<Final, GithubError> {
        self.send_api(reqwest::Method::GET, u, None, true)
    }

    /// Send `method` to `u` on the API host with the token and an optional JSON body. With
    /// `retry` transient failures are retried (idempotent calls only); without it the request is
    /// sent once (a `POST` that creates something must never be sent twice). Returns the final
    /// response (any status) or an error.
    pub(crate) fn send_api(
        &self,
        method: reqwest::Method,
        u: &url::Url,
        body: Option<&serde_json::Value>,
        retry: bool,
    ) -> Result<Final, GithubError> {
        let body = body.map(Body::Json);
        self.send_with(method, u, body, retry, None)
    }

    /// GET `u` on the API host with the token and this `Accept` (a release asset's bytes:
    /// `application/octet-stream`, answered with a redirect), retrying transient failures.
    pub(crate) fn get_api_accept(
        &self,
        u: &url::Url,
        accept: &'static str,
    ) -> Result<Final, GithubError> {
        self.send_with(reqwest::Method::GET, u, None, true, Some(accept))
    }

    /// POST raw `bytes` of `content_type` to `u` with the token, once (an upload that creates
    /// something is never sent twice). `u` must be on the API host or on its uploads host
    /// (`uploads.github.com` beside `api.github.com`, as a release's `upload_url` names it).
    pub(crate) fn post_bytes(
        &self,
        u: &url::Url,
        content_type: &'static str,
        bytes: Vec<u8>,
    ) -> Result<Final, GithubError> {
        let body = Body::Bytes(content_type, bytes);
        self.send_with(reqwest::Method::POST, u, Some(body), false, None)
    }

    /// Whether the token may be sent to `u`'s origin: the API host, or its uploads host.
    fn token_origin(&self, u: &url::Url) -> bool {
        let origin = u.origin();
        if origin == self.api_origin {
            return true;
        }
        let uploads = url::Url::parse("https://uploads.github.com").map(|x| x.origin());
        let api_is_github = url::Url::parse("https://api.github.com").map(|x| x.origin());
        matches!((uploads, api_is_github), (Ok(up), Ok(api)) if origin == up && self.api_origin == api)
    }

    fn send_with(
        &self,
        method: reqwest::Method,
        u: &url::Url,
        body: Option<Body>,
        retry: bool,
        accept: Option<&'static str>,
    ) -> Result<Final, GithubError> {
        let endpoint = Self::endpoint(method.as_str(), u, true);
        if !self.token_origin(u) {
            return Err(GithubError::Config(format!(
                "{endpoint}: refusing to send the token to {}, which is not the API host",
                u.origin().ascii_serialization()
            )));
        }
        let req = || {
            let mut r = self
                .api
                .request(method.clone(), u.clone())
                .header(AUTHORIZATION, format!("Bearer {}", self.cfg.token.expose()));
            if let Some(a) = accept {
                r = r.header(ACCEPT, a);
            }
            match &body {
                Some(Body::Json(b)) => r.json(b),
                Some(Body::Bytes(ct, b)) => {
                    r.header(reqwest::header::CONTENT_TYPE, *ct).body(b.clone())
                }
                None => r,
            }
        };
        if retry {
            return self.send_with_retry(|| Ok((req(), endpoint.clone())));
        }
        let response =
            self.block_on(async { req().send().await })
                .map_err(|e| GithubError::Transport {
                    endpoint: endpoint.clone(),
                    message: transport_message(&e),
                })?;
        Ok(Final { response, endpoint })
    }

    /// GET a pre-signed blob URL with no `Authorization`, retrying transient failures. `locate`
    /// yields the URL and is called again before every attempt: a signed URL expires (an artifact's
    /// download `Location` lives one minute), so a retry must not reuse it.
    pub(crate) fn get_blob(
        &self,
        mut locate: impl FnMut() -> Result<url::Url, GithubError>,
    ) -> Result<Final, GithubError> {
        self.send_with_retry(|| {
            let u = locate()?;
            let endpoint = format!(
                "GET {}{}",
                u.origin().ascii_serialization(),
                Self::endpoint("", &u, false).trim_start()
            );
            Ok((self.blob.get(u), endpoint))
        })
    }

    /// Send what `next` builds (asked anew for every attempt), retrying transient failures.
    fn send_with_retry(
        &self,
        mut next: impl FnMut() -> Result<(reqwest::RequestBuilder, String), GithubError>,
    ) -> Result<Final, GithubError> {
        let policy = &self.cfg.retry;
        let mut attempt = 1u32;
        loop {
            let (req, endpoint) = next()?;
            let response =
                self.block_on(async { req.send().await })
                    .map_err(|e| GithubError::Transport {
                        endpoint: endpoint.clone(),
                        message: transport_message(&e),
                    })?;
            let facts = facts_of(&response);
            match policy.decide(attempt, &facts, chrono::Utc::now().timestamp()) {
                Decision::Stop => return Ok(Final { response, endpoint }),
                Decision::RetryAfter(wait) => {
                    tracing::warn!(
                        "{endpoint}: HTTP {}; retry {attempt} in {} ms",
                        facts.status,
                        wait.as_millis()
                    );
                    std::thread::sleep(wait.max(Duration::from_millis(1)));
                    attempt += 1;
                }
                Decision::GiveUp(why) => {
                    let message = self.error_message(response);
                    return Err(GithubError::Status {
                        endpoint,
                        status: facts.status,
                        message: format!("{message} ({why})"),
                    });
                }
            }
        }
    }

    /// Read GitHub's `message` from an error response (or a short excerpt of the body), with any
    /// credential the server echoed redacted ([`crate::text::redact_secrets`]).
    pub(crate) fn error_message(&self, response: reqwest::Response) -> String {
        let message = self.raw_error_message(response);
        crate::text::redact_secrets(&message).into_owned()
    }

    fn raw_error_message(&self, response: reqwest::Response) -> String {
        let bytes = self.block_on(response.bytes()).unwrap_or_default();
        match serde_json::from_slice::<ApiErrorBody>(&bytes) {
            Ok(b) => b.message,
            Err(_) => {
                let text = String::from_utf8_lossy(&bytes);
                let text: String = text.chars().take(200).collect();
                if text.trim().is_empty() {
                    "no message".into()
                } else {
                    text
                }
            }
        }
    }

    /// Turn a final response into `T`, or an error naming the endpoint, status and message.
    pub(crate) fn decode<T: DeserializeOwned>(
        &self,
        fin: Final,
    ) -> Result<(T, Option<String>), GithubError> {
        let status = fin.response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(GithubError::Status {
                endpoint: fin.endpoint,
                status,
                message: self.error_message(fin.response),
            });
        }
        let link = fin
            .response
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = self
            .block_on(fin.response.bytes())
            .map_err(|e| GithubError::Transport {
                endpoint: fin.endpoint.clone(),
                message: transport_message(&e),
            })?;
        let value = serde_json::from_slice(&bytes).map_err(|e| GithubError::Decode {
            endpoint: fin.endpoint,
            message: e.to_string(),
        })?;
        Ok((value, link))
    }

    /// GET a route and decode its JSON body.
    pub(crate) fn get_json<T: DeserializeOwned>(
        &self,
        route: &str,
        query: &[(&str, String)],
    ) -> Result<T, GithubError> {
        let u = self.url(route, query)?;
        let fin = self.get_api(&u)?;
        Ok(self.decode(fin)?.0)
    }

    /// Walk a list endpoint through `Link rel="next"` to the last page (at most `max_pages`, and
    /// no further once more than `max_items` items are collected). `split` takes one page body
    /// apart into `(total_count, items)`. A `Link` loop is an error; a cap or a short last page
    /// yields `complete: false`.
    pub(crate) fn get_paginated<P: DeserializeOwned, T>(
        &self,
        route: &str,
        query: &[(&str, String)],
        (max_pages, max_items): (usize, usize),
        split: impl Fn(P) -> (u64, Vec<T>),
    ) -> Result<Paged<T>, GithubError> {
        let first = self.url(route, query)?;
        let mut walk = PageWalk::new(first.as_str(), max_pages);
        let mut next = first;
        let mut items = Vec::new();
        loop {
            let fin = self.get_api(&next)?;
            let endpoint = fin.endpoint.clone();
            let (page, link): (P, _) = self.decode(fin)?;
            let (total_count, page_items) = split(page);
            items.extend(page_items);
            let step = match walk.step(link.as_deref()) {
                Step::Next(_) if items.len() > max_items => Step::Capped,
                other => other,
            };
            match step {
                Step::Next(u) => {
                    next = url::Url::parse(&u).map_err(|e| GithubError::Incomplete {
                        endpoint: endpoint.clone(),
                        message: format!("unparsable Link rel=\"next\" {u:?}: {e}"),
                    })?;
                }
                Step::Done => {
                    let complete = items.len() as u64 >= total_count;
                    if !complete {
                        tracing::warn!(
                            "{endpoint}: last page reached with {} items but total_count is {total_count}",
                            items.len()
                        );
                    }
                    return Ok(Paged { items, complete });
                }
                Step::Capped => {
                    tracing::warn!("{endpoint}: stopped after {} pages", walk.pages());
                    return Ok(Paged {
                        items,
                        complete: false,
                    });
                }
                Step::Loop(u) => {
                    let target = url::Url::parse(&u)
                        .map(|x| Self::endpoint("GET", &x, true))
                        .unwrap_or(u);
                    return Err(GithubError::Incomplete {
                        endpoint,
                        message: format!(
                            "Link rel=\"next\" points back to an already fetched page ({target})"
                        ),
                    });
                }
            }
        }
    }
}

fn facts_of(r: &reqwest::Response) -> ResponseFacts {
    let h = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    ResponseFacts {
        status: r.status().as_u16(),
        retry_after: h("retry-after"),
        ratelimit_remaining: h("x-ratelimit-remaining"),
        ratelimit_reset: h("x-ratelimit-reset"),
    }
}

/// A transport error's text without the URL's query (blob URLs carry signatures).
pub(crate) fn transport_message(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "body read failed"
    } else {
        "request failed"
    };
    let mut cause = String::new();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        cause = s.to_string();
        src = s.source();
    }
    if cause.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {cause}")
    }
}
