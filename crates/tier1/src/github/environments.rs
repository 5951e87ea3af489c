//! A deployment environment's protection rules (`GET /repos/{o}/{r}/environments/{name}`,
//! operation `repos/get-environment`; schema `environment`, whose `protection_rules` is optional
//! and an `anyOf` of `wait_timer`, `required_reviewers` (with `prevent_self_review` and up to six
//! `reviewers`, users or teams) and `branch_policy`). The promotion reads it to tell "no required
//! reviewers" (GitHub Free, Pro and Team offer them on public repositories only) from a missing
//! approval.

use super::{GithubClient, GithubError};
use serde::Deserialize;

/// One protection rule, the fields tier1 reads (unknown types are kept by name).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ProtectionRule {
    /// `required_reviewers`, `wait_timer`, `branch_policy`, ...
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// With `required_reviewers`: whether the user who started the run may approve it.
    #[serde(default)]
    pub(crate) prevent_self_review: Option<bool>,
    /// With `required_reviewers`: the users and teams who may approve.
    #[serde(default)]
    pub(crate) reviewers: Option<Vec<Reviewer>>,
}

/// A required reviewer: a user (`reviewer.login`) or a team (`reviewer.slug`, `reviewer.name`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Reviewer {
    /// `User` or `Team`.
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
    /// The user or team (only its names are read).
    #[serde(default)]
    pub(crate) reviewer: Option<ReviewerName>,
}

/// The naming fields of a user or a team.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ReviewerName {
    /// A user's login.
    #[serde(default)]
    pub(crate) login: Option<String>,
    /// A team's slug.
    #[serde(default)]
    pub(crate) slug: Option<String>,
}

/// An environment as the API returns it (the fields tier1 reads).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Environment {
    /// Its name.
    pub(crate) name: String,
    /// Its protection rules (absent: none).
    #[serde(default)]
    pub(crate) protection_rules: Option<Vec<ProtectionRule>>,
}

impl Environment {
    /// The rules, none when the field is absent.
    pub(crate) fn rules(&self) -> &[ProtectionRule] {
        self.protection_rules.as_deref().unwrap_or_default()
    }

    /// The `required_reviewers` rule, when the environment has one.
    pub(crate) fn required_reviewers(&self) -> Option<&ProtectionRule> {
        self.rules().iter().find(|r| r.kind == "required_reviewers")
    }
}

/// True when `name` can be put in the URL path as it is (letters, digits, `.`, `_`, `-`).
pub(crate) fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `GET /repos/{o}/{r}/environments/{name}`. A 404 is `GithubError` with status 404.
pub(crate) fn get(client: &GithubClient, name: &str) -> Result<Environment, GithubError> {
    let route = format!("{}/environments/{name}", client.config().repo_route());
    client.get_json(&route, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `login`, or `team:<slug>`, or `?` when the record names neither.
    fn label(r: &Reviewer) -> String {
        let r = r.reviewer.as_ref();
        match (
            r.and_then(|r| r.login.clone()),
            r.and_then(|r| r.slug.clone()),
        ) {
            (Some(login), _) => login,
            (None, Some(slug)) => format!("team:{slug}"),
            (None, None) => "?".into(),
        }
    }

    #[test]
    fn the_spec_example_parses_and_names_its_reviewers() {
        let v = serde_json::json!({
            "id": 161088068, "node_id": "MDExOkVudmlyb25tZW50MTYxMDg4MDY4", "name": "staging",
            "url": "u", "html_url": "h", "created_at": "2020-11-23T22:00:40Z",
            "updated_at": "2020-11-23T22:00:40Z",
            "protection_rules": [
                {"id": 3736, "node_id": "A", "type": "wait_timer", "wait_timer": 30},
                {"id": 3755, "node_id": "B", "prevent_self_review": false, "type": "required_reviewers",
                 "reviewers": [{"type": "User", "reviewer": {"login": "octocat", "id": 1}},
                               {"type": "Team", "reviewer": {"id": 1, "name": "Justice League", "slug": "justice-league"}}]},
                {"id": 3756, "node_id": "C", "type": "branch_policy"}
            ],
            "deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true}
        });
        let e: Environment = serde_json::from_value(v).unwrap();
        let r = e.required_reviewers().expect("required reviewers");
        assert_eq!(r.prevent_self_review, Some(false));
        let names: Vec<String> = r.reviewers.iter().flatten().map(label).collect();
        assert_eq!(names, ["octocat", "team:justice-league"]);
        let bare: Environment = serde_json::from_value(serde_json::json!({"name": "x"})).unwrap();
        assert!(bare.required_reviewers().is_none() && bare.rules().is_empty());
    }

    #[test]
    fn only_plain_names_go_into_the_path() {
        assert!(is_plain_name("tier1-canonical-acceptance"));
        for bad in ["", "a/b", "a b", "..%2F", "é"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }
}
