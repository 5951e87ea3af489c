//! Issue comments (a pull request's conversation): list to the last page, create, update, and
//! "post or update one comment" found again by a hidden marker on its first line and its author.
//! Shapes follow `github/rest-api-description` (`issues/list-comments`, `issues/create-comment`,
//! `issues/update-comment`; schema `issue-comment`, whose `body` is optional and `user` nullable).

use super::types::ApiUser;
use super::{GithubClient, GithubError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// GitHub's limit on a comment body, in characters (a longer body is refused with HTTP 422).
pub(crate) const COMMENT_BODY_MAX_CHARS: usize = 65_536;

/// Page size of the listing (GitHub's maximum).
const PER_PAGE: usize = 100;
/// At most this many pages are read (10,000 comments); more is an incomplete listing.
const MAX_PAGES: usize = 100;

/// An issue comment (`issue-comment`), the fields tier1 reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ApiIssueComment {
    /// Comment id.
    pub(crate) id: u64,
    /// Markdown body (optional in the spec).
    #[serde(default)]
    pub(crate) body: Option<String>,
    /// The author (nullable: a deleted account).
    #[serde(default)]
    pub(crate) user: Option<ApiUser>,
    /// Link to the comment.
    pub(crate) html_url: String,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
}

impl ApiIssueComment {
    /// True when the first line of the body is `marker` and `author` wrote it.
    pub(crate) fn is_marked(&self, marker: &str, author: &str) -> bool {
        let first = self
            .body
            .as_deref()
            .and_then(|b| b.lines().next())
            .unwrap_or_default();
        let by = self.user.as_ref().map(|u| u.login.as_str());
        first.trim() == marker && by.is_some_and(|l| l.eq_ignore_ascii_case(author))
    }
}

/// Every comment of issue or pull request `number`, oldest first. A listing that could not reach
/// its last page is an error: the caller could not tell whether a comment exists.
pub(crate) fn list(
    client: &GithubClient,
    number: u64,
) -> Result<Vec<ApiIssueComment>, GithubError> {
    let route = format!("{}/issues/{number}/comments", client.config().repo_route());
    let paged = client.get_paginated(
        &route,
        &[("per_page", PER_PAGE.to_string())],
        (MAX_PAGES, MAX_PAGES * PER_PAGE),
        // A bare array: no total_count, so completeness is "the last page was reached".
        |page: Vec<ApiIssueComment>| (0, page),
    )?;
    if !paged.complete {
        return Err(GithubError::Incomplete {
            endpoint: format!("GET {route}"),
            message: format!(
                "stopped after {} comments ({MAX_PAGES} pages of {PER_PAGE}) before the last page",
                paged.items.len()
            ),
        });
    }
    Ok(paged.items)
}

/// Create a comment on issue or pull request `number` (sent once, never retried: a retry after a
/// lost answer would post twice).
pub(crate) fn create(
    client: &GithubClient,
    number: u64,
    body: &str,
) -> Result<ApiIssueComment, GithubError> {
    let route = format!("{}/issues/{number}/comments", client.config().repo_route());
    let u = client.url(&route, &[])?;
    let payload = serde_json::json!({ "body": body });
    let fin = client.send_api(reqwest::Method::POST, &u, Some(&payload), false)?;
    Ok(client.decode(fin)?.0)
}

/// Replace the body of comment `id` (idempotent, so transient failures are retried).
pub(crate) fn update(
    client: &GithubClient,
    id: u64,
    body: &str,
) -> Result<ApiIssueComment, GithubError> {
    let route = format!("{}/issues/comments/{id}", client.config().repo_route());
    let u = client.url(&route, &[])?;
    let payload = serde_json::json!({ "body": body });
    let fin = client.send_api(reqwest::Method::PATCH, &u, Some(&payload), true)?;
    Ok(client.decode(fin)?.0)
}

/// What [`upsert_marked`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Posted {
    /// No marked comment existed: one was created.
    Created,
    /// The marked comment was updated in place.
    Updated,
}

/// The comment `upsert_marked` left on the pull request.
#[derive(Debug, Clone, Serialize)]
pub struct Upserted {
    /// Created or updated.
    pub(crate) action: Posted,
    /// The comment's id.
    pub(crate) comment_id: u64,
    /// Its link.
    pub(crate) html_url: String,
    /// Comments of the pull request read to find it.
    pub(crate) comments_listed: usize,
    /// Other comments by the same author with the same marker (older duplicates are left alone).
    pub(crate) other_marked: usize,
}

/// Post `body` (whose first line is `marker`) on `number`, or update the oldest comment `author`
/// wrote with that marker, so a pull request carries one such comment however often it runs.
/// Comments by anyone else are never touched, even when they quote the marker.
pub(crate) fn upsert_marked(
    client: &GithubClient,
    number: u64,
    marker: &str,
    author: &str,
    body: &str,
) -> Result<Upserted, GithubError> {
    let comments = list(client, number)?;
    let mut marked: Vec<&ApiIssueComment> = comments
        .iter()
        .filter(|c| c.is_marked(marker, author))
        .collect();
    marked.sort_by_key(|c| (c.created_at, c.id));
    let (action, posted) = match marked.first() {
        Some(existing) => (Posted::Updated, update(client, existing.id, body)?),
        None => (Posted::Created, create(client, number, body)?),
    };
    Ok(Upserted {
        action,
        comment_id: posted.id,
        html_url: posted.html_url,
        comments_listed: comments.len(),
        other_marked: marked.len().saturating_sub(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(body: Option<&str>, login: Option<&str>) -> ApiIssueComment {
        serde_json::from_value(serde_json::json!({
            "id": 1, "node_id": "IC", "url": "u", "html_url": "h", "issue_url": "i",
            "body": body, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "author_association": "NONE", "performed_via_github_app": null,
            "user": login.map(|l| serde_json::json!({"login": l, "id": 41898282, "type": "Bot"})),
        }))
        .unwrap()
    }

    #[test]
    fn marked_means_first_line_and_author() {
        let m = "<!-- tier1-preview -->";
        let bot = "github-actions[bot]";
        assert!(comment(Some("<!-- tier1-preview -->\n### x"), Some(bot)).is_marked(m, bot));
        assert!(
            comment(Some("<!-- tier1-preview -->"), Some("GitHub-Actions[bot]")).is_marked(m, bot)
        );
        // A human quoting the marker, the marker further down, no body, a deleted author.
        assert!(!comment(Some("<!-- tier1-preview -->\nme too"), Some("alice")).is_marked(m, bot));
        assert!(!comment(Some("hi\n<!-- tier1-preview -->"), Some(bot)).is_marked(m, bot));
        assert!(!comment(None, Some(bot)).is_marked(m, bot));
        assert!(!comment(Some("<!-- tier1-preview -->"), None).is_marked(m, bot));
    }
}
