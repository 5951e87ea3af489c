//! Which workflow runs can be history provenance (contract §5.3, docs/github-store.md): a run of the
//! resolved workflow, not triggered by a pull-request event, whose base and head repository are
//! both the canonical repository (a fork's branch named `main` passes the branch filter). The
//! store reports the facts ([`RunProvenance`]); this rule, applied by
//! [`discovery`](super::discovery) while the store lists runs, rejects.

use crate::store::{RunProvenance, WorkflowRun};

/// Why a listed run cannot be history provenance, or `None` when it can: the workflow id must be
/// the resolved one, the event must not be a pull-request event, and both the base and the head
/// repository must be `repository`. A run whose store reports no provenance facts (the local
/// store, which models the operator's own runs) is not judged.
pub fn run_rejection(run: &WorkflowRun, repository: &str) -> Option<String> {
    let p: &RunProvenance = run.provenance.as_ref()?;
    if let (Some(expected), Some(found)) = (p.listed_workflow_id, run.workflow_id)
        && found != expected
    {
        return Some(format!("workflow_id is {found}, expected {expected}"));
    }
    if run.event.starts_with("pull_request") {
        return Some(format!("event is {}", run.event));
    }
    if !run.repository.eq_ignore_ascii_case(repository) {
        return Some(format!(
            "repository is {}, expected {repository}",
            run.repository
        ));
    }
    match &p.head_repository {
        None => return Some("head repository is absent".into()),
        Some(h) if !h.full_name.eq_ignore_ascii_case(repository) || h.id != p.repository_id => {
            return Some(format!(
                "head repository is {} (id {}), expected {repository} (id {})",
                h.full_name, h.id, p.repository_id
            ));
        }
        Some(_) => {}
    }
    match p.head_repository_id {
        Some(id) if id != p.repository_id => Some(format!(
            "head_repository_id is {id}, expected {}",
            p.repository_id
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::types::ApiRun;

    /// The rule on the store's record of `r`, listed for workflow `listed`.
    fn judged(r: &ApiRun, listed: u64, repository: &str) -> Option<String> {
        let run = crate::store::github::workflow_run(r.clone(), Some(listed));
        run_rejection(&run, repository)
    }

    #[test]
    fn provenance_filter() {
        assert_eq!(
            judged(&ApiRun::fixture("schedule", "o/r", 1), 7, "O/R"),
            None
        );
        assert!(judged(&ApiRun::fixture("schedule", "o/r", 1), 8, "o/r").is_some());
        assert!(judged(&ApiRun::fixture("pull_request", "o/r", 1), 7, "o/r").is_some());
        assert!(judged(&ApiRun::fixture("pull_request_target", "o/r", 1), 7, "o/r").is_some());
        let fork = judged(&ApiRun::fixture("push", "evil/r", 2), 7, "o/r").unwrap();
        assert!(fork.contains("evil/r"), "{fork}");
        let mut r = ApiRun::fixture("push", "o/r", 1);
        r.head_repository = None;
        assert!(judged(&r, 7, "o/r").is_some());
        let mut r = ApiRun::fixture("push", "o/r", 1);
        r.head_repository_id = Some(2);
        assert_eq!(
            judged(&r, 7, "o/r").as_deref(),
            Some("head_repository_id is 2, expected 1")
        );
    }

    #[test]
    fn a_run_without_provenance_facts_is_not_judged() {
        let mut r = crate::store::github::workflow_run(
            ApiRun::fixture("pull_request", "evil/r", 2),
            Some(7),
        );
        r.provenance = None;
        assert_eq!(run_rejection(&r, "o/r"), None);
    }
}
