//! Who reviewed a promotion, read from GitHub for `--approvals-from-run`: the approval environment
//! must have required reviewers (without them GitHub runs the approval job at once and records no
//! approval; on private and internal repositories only GitHub Enterprise offers them), every
//! approval record of the run must be `approved` (`inputs::approving_reviewers`), and someone
//! other than the requester must have approved (two persons, whatever the environment's
//! "Prevent self-review" setting says).

use super::PromoteError;
use super::inputs::approving_reviewers;
use crate::github::environments::Environment;
use crate::store::StoreError;
use crate::store::github::GithubStore;

/// Refuse an approval environment without a `required_reviewers` rule naming someone.
pub(crate) fn require_required_reviewers(
    env: &Environment,
    repository: &str,
) -> Result<(), PromoteError> {
    let named = env
        .required_reviewers()
        .and_then(|r| r.reviewers.as_ref())
        .is_some_and(|list| !list.is_empty());
    if named {
        return Ok(());
    }
    let rules: Vec<&str> = env.rules().iter().map(|r| r.kind.as_str()).collect();
    Err(PromoteError::Invalid(format!(
        "environment {name} of {repository} has no required reviewers (its protection rules: {found}): GitHub ran the approval job without waiting for a reviewer and recorded no approval, so no anchor can be ratified. Add at least one required reviewer (Settings → Environments → {name} → Required reviewers). On a private or internal repository GitHub offers required reviewers only with GitHub Enterprise (Free, Pro and Team: public repositories only); tier1 has no unreviewed path to an anchor (docs/runbook.md §0)",
        name = env.name,
        found = if rules.is_empty() {
            "none".to_string()
        } else {
            rules.join(", ")
        }
    )))
}

/// Refuse when nobody but `requester` approved (logins compare case-insensitively, as GitHub's).
pub(crate) fn require_second_person(
    reviewers: &[String],
    requester: &str,
    environment: &str,
) -> Result<(), PromoteError> {
    let requester = requester.trim();
    if reviewers.iter().any(|r| !r.eq_ignore_ascii_case(requester)) {
        return Ok(());
    }
    Err(PromoteError::Invalid(format!(
        "the requester {requester} approved their own promotion (environment {environment}, approved by {}): a second person must approve. Tick \"Prevent self-review\" on the environment so that GitHub refuses it as well, and dispatch the promotion again",
        reviewers.join(", ")
    )))
}

/// The reviewers who approved `environment` for workflow run `run_id`, after every rule above.
pub fn reviewers_from_run(
    store: &GithubStore,
    run_id: u64,
    environment: &str,
    requester: &str,
) -> Result<Vec<String>, PromoteError> {
    let env = store.environment(environment).map_err(|e| match e {
        StoreError::NotFound { .. } => PromoteError::Invalid(format!(
            "environment {environment} does not exist in {}: create it with required reviewers (docs/adoption.md §2)",
            crate::store::ArtifactStore::repository(store)
        )),
        other => PromoteError::Store(other),
    })?;
    require_required_reviewers(&env, crate::store::ArtifactStore::repository(store))?;
    let reviewers = approving_reviewers(&store.run_approvals(run_id)?, environment)?;
    require_second_person(&reviewers, requester, environment)?;
    Ok(reviewers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(rules: serde_json::Value) -> Environment {
        serde_json::from_value(
            serde_json::json!({"name": "tier1-canonical-acceptance", "protection_rules": rules}),
        )
        .unwrap()
    }

    #[test]
    fn an_environment_without_required_reviewers_is_refused_naming_the_plan() {
        for rules in [
            serde_json::json!([]),
            serde_json::json!([{"id": 1, "node_id": "n", "type": "branch_policy"}]),
            serde_json::json!([{"id": 1, "node_id": "n", "type": "required_reviewers", "reviewers": []}]),
        ] {
            let e = require_required_reviewers(&env(rules.clone()), "acme/kernels")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("environment tier1-canonical-acceptance of acme/kernels has no required reviewers")
                    && e.contains("only with GitHub Enterprise"),
                "{rules}: {e}"
            );
        }
        let e = require_required_reviewers(
            &env(serde_json::json!([{"id": 1, "node_id": "n", "type": "branch_policy"}])),
            "o/r",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("(its protection rules: branch_policy)"), "{e}");
        let ok = env(
            serde_json::json!([{"id": 1, "node_id": "n", "type": "required_reviewers",
            "reviewers": [{"type": "User", "reviewer": {"login": "bob"}}]}]),
        );
        require_required_reviewers(&ok, "o/r").unwrap();
    }

    #[test]
    fn the_requester_alone_never_approves_their_own_promotion() {
        let env = "tier1-canonical-acceptance";
        let e = require_second_person(&["alice".into()], "Alice", env)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the requester Alice approved their own promotion")
                && e.contains("Prevent self-review"),
            "{e}"
        );
        require_second_person(&["bob".into()], "alice", env).unwrap();
        require_second_person(&["alice".into(), "bob".into()], "alice", env).unwrap();
        assert!(require_second_person(&[], "alice", env).is_err());
    }
}
