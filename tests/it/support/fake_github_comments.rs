//! Pull request comments in the fake GitHub (a child of fake_github.rs): `GET` (a bare array,
//! paginated with `Link`), `POST …/issues/{n}/comments` (201) and `PATCH …/issues/comments/{id}`
//! with the `issue-comment` shape, GitHub's 65,536-character limit (422), the same token check,
//! status faults (whose `on` may start with the method) and request record as the Actions
//! endpoints. The token posts as
//! `github-actions[bot]`, as a workflow's `GITHUB_TOKEN` does.

use super::{Fault, Recorded, Response, Shared, error, json_response, page_of, query, take_fault};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use tier1::store::local::LocalStore;

/// The login a workflow's `GITHUB_TOKEN` comments as.
pub const BOT: &str = "github-actions[bot]";
/// GitHub's limit on a comment body.
const MAX_BODY: usize = 65_536;

/// One stored comment.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: u64,
    pub issue: u64,
    pub repository: String,
    pub login: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Stored {
    /// The `issue-comment` JSON GitHub answers with.
    pub fn json(&self, api: &str) -> Value {
        let bot = self.login.ends_with("[bot]");
        json!({
            "id": self.id, "node_id": format!("IC_{}", self.id),
            "url": format!("{api}/repos/{}/issues/comments/{}", self.repository, self.id),
            "html_url": format!("https://github.com/{}/pull/{}#issuecomment-{}", self.repository, self.issue, self.id),
            "issue_url": format!("{api}/repos/{}/issues/{}", self.repository, self.issue),
            "body": self.body,
            "user": {"login": self.login, "id": if bot { 41898282 } else { 1000 + self.login.len() as u64 },
                     "type": if bot { "Bot" } else { "User" }, "site_admin": false},
            "created_at": self.created_at, "updated_at": self.updated_at,
            "author_association": if bot { "NONE" } else { "MEMBER" },
            "performed_via_github_app": null
        })
    }
}

/// Every comment, ids from 9001.
#[derive(Debug, Default)]
pub struct Comments {
    list: Vec<Stored>,
}

impl Comments {
    /// The comments of issue `number`, oldest first.
    pub fn of(&self, number: u64) -> impl Iterator<Item = &Stored> {
        self.list.iter().filter(move |c| c.issue == number)
    }

    /// Store a new comment; returns its id.
    pub fn add(
        &mut self,
        repository: &str,
        issue: u64,
        login: &str,
        body: &str,
        now: DateTime<Utc>,
    ) -> u64 {
        let id = 9001 + self.list.len() as u64;
        self.list.push(Stored {
            id,
            issue,
            repository: repository.to_string(),
            login: login.to_string(),
            body: body.to_string(),
            created_at: now,
            updated_at: now,
        });
        id
    }
}

/// True for `/repos/{o}/{r}/issues/…/comments…` paths.
pub fn is_comments_path(path: &str) -> bool {
    path.starts_with("/repos/") && path.contains("/issues/") && path.contains("comments")
}

/// The body's `body` field, checked as GitHub checks it.
fn body_field(body: &[u8]) -> Result<String, Response> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| error(400, &format!("Problems parsing JSON: {e}")))?;
    let Some(text) = v["body"].as_str() else {
        return Err(error(422, "Invalid request.\n\n\"body\" wasn't supplied."));
    };
    if text.chars().count() > MAX_BODY {
        return Err(json_response(
            422,
            &json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom",
                    "field": "body", "message": "body is too long (maximum is 65536 characters)"}],
                    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"}),
        ));
    }
    Ok(text.to_string())
}

/// Serve one request to a comments path.
pub fn serve(shared: &Shared, rec: &Recorded, body: &[u8]) -> Response {
    let path = rec.path().to_string();
    // A status fault's `on` may name the method too (`POST /repos/…`): a create and a listing
    // share their path.
    let request = format!("{} {path}", rec.method);
    if let Some(Fault::Status {
        status, headers, ..
    }) = take_fault(
        shared,
        |f| matches!(f, Fault::Status { on, .. } if request.contains(on.as_str())),
    ) {
        let mut r = error(status, &format!("injected HTTP {status}"));
        r.headers.extend(headers);
        return r;
    }
    if rec.header("authorization") != Some(&format!("Bearer {}", shared.token)) {
        return error(401, "Bad credentials");
    }
    let repository = match LocalStore::open(&shared.store_dir).and_then(|s| s.load()) {
        Ok(s) => s.repository.clone(),
        Err(e) => return error(500, &format!("fake store: {e}")),
    };
    let Some(rest) = path.strip_prefix(&format!("/repos/{repository}/issues/")) else {
        return error(404, "Not Found");
    };
    let seg: Vec<&str> = rest.split('/').collect();
    let now = *shared.now.lock().expect("lock");
    let mut comments = shared.comments.lock().expect("lock");
    match (rec.method.as_str(), seg.as_slice()) {
        ("GET", [n, "comments"]) => {
            let Ok(n) = n.parse::<u64>() else {
                return error(404, "Not Found");
            };
            let items: Vec<Value> = comments.of(n).map(|c| c.json(&shared.api_base)).collect();
            drop(comments);
            let (slice, link) = page_of(shared, rec, &query(&rec.target), items);
            let mut r = json_response(200, &Value::Array(slice));
            r.headers.push(("link".into(), link));
            r
        }
        ("POST", [n, "comments"]) => {
            let Ok(n) = n.parse::<u64>() else {
                return error(404, "Not Found");
            };
            let text = match body_field(body) {
                Ok(t) => t,
                Err(r) => return r,
            };
            let id = comments.add(&repository, n, BOT, &text, now);
            let stored = comments.list.iter().find(|c| c.id == id).expect("added");
            json_response(201, &stored.json(&shared.api_base))
        }
        ("PATCH", ["comments", id]) => {
            let text = match body_field(body) {
                Ok(t) => t,
                Err(r) => return r,
            };
            let Some(c) = comments.list.iter_mut().find(|c| c.id.to_string() == *id) else {
                return error(404, "Not Found");
            };
            c.body = text;
            c.updated_at = now;
            json_response(200, &c.json(&shared.api_base))
        }
        _ => error(404, "Not Found"),
    }
}
