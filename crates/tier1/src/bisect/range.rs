//! The range a bisection searches: the request checked against the suite and the budget, the
//! good and the bad commit resolved (fetching what a shallow checkout lacks from its remote,
//! [`crate::sidebyside::fetch`]), and the commits between them on the bad commit's first-parent
//! chain.

use super::request::{BisectError, BisectRequest};
use crate::sidebyside::fetch;
use crate::sidebyside::remote::Access;
use crate::sidebyside::{self, git};
use std::path::PathBuf;

/// The resolved range of a bisection.
pub(crate) struct Range {
    /// The repository's top level.
    pub(crate) repo: PathBuf,
    /// The good commit, in full.
    pub(crate) good: String,
    /// The bad commit, in full.
    pub(crate) bad: String,
    /// The candidates: the commits after the good one up to the bad one, oldest first (never
    /// empty).
    pub(crate) commits: Vec<String>,
}

/// The target and profile are the suite's and the budget is usable.
pub(crate) fn check_request(req: &BisectRequest) -> Result<(), BisectError> {
    if req.suite.target(req.target_key).is_none() {
        return Err(BisectError::Invalid(format!(
            "target {:?} is not in suite {}",
            req.target_key, req.suite.suite_name
        )));
    }
    if req.suite.profile(req.profile).is_none() {
        return Err(BisectError::Invalid(format!(
            "profile {:?} is not in suite {}",
            req.profile, req.suite.suite_name
        )));
    }
    req.budget.check().map_err(BisectError::Invalid)
}

/// The repository, both commits and the candidates between them.
pub(crate) fn resolve(req: &BisectRequest) -> Result<Range, BisectError> {
    let invalid = |m: String| BisectError::Invalid(m);
    let repo = git::toplevel(req.repo_root).map_err(|p| invalid(p.message))?;
    // A shallow checkout (GitHub's default depth 1) lacks the good commit and the commits between:
    // fetch what the range needs from the checkout's remote.
    let access = Access::from_env();
    let has_remote = sidebyside::remote::checkout_remote(&repo).is_some();
    for (flag, rev) in [("--good", req.good), ("--bad", req.bad)] {
        if has_remote && git::is_full_commit(rev) {
            fetch::ensure_commit(&repo, rev, &access)
                .map_err(|u| invalid(format!("{flag}: {u}")))?;
        }
    }
    let good = git::resolve(&repo, req.good, None)
        .map_err(|p| invalid(format!("--good: {}", p.message)))?;
    let bad =
        git::resolve(&repo, req.bad, None).map_err(|p| invalid(format!("--bad: {}", p.message)))?;
    fetch::ensure_range(&repo, &good, &bad, &access).map_err(|u| invalid(u.to_string()))?;
    let commits = git::first_parent_range(&repo, &good, &bad)
        .map_err(invalid)?
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            invalid(format!(
                "expected the good commit {good} to be an ancestor of the bad commit {bad} on its \
                 first-parent chain, found {}",
                if good == bad {
                    "the same commit"
                } else {
                    "it is not"
                }
            ))
        })?;
    Ok(Range {
        repo,
        good,
        bad,
        commits,
    })
}
