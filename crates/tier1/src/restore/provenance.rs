//! Which workflow runs and which artifact records can be history provenance (contract §5.3,
//! docs/github-store.md). A run: of the resolved workflow, not triggered by a pull-request event,
//! whose base and head repository are both the canonical repository (a fork's branch named `main`
//! passes the branch filter). An artifact record: one that names its uploading run with both
//! repository ids present and equal (a fork's pull-request run can upload any name). The store
//! reports the facts (`RunProvenance`, `ArtifactProvenance`); these rules, given by the caller
//! to the store's listings (by `discovery`, the anchor's evidence lookup and
//! `tier1-evidence verify`), reject.

use crate::store::{ArtifactProvenance, RunProvenance, WorkflowRun};

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

/// Why an artifact record's uploading run cannot be trusted as this repository's, or `None` when
/// the record names a run whose base and head repository ids are both present and equal. A fork's
/// pull-request run can upload artifacts with any name into the base repository, and every field
/// of `workflow_run` is optional in the API description: absent provenance is refused, never
/// trusted as "not a fork". The store applies this rule, given by its caller, to each record
/// before it picks the newest artifact per name (`crate::store::ArtifactRule`).
pub fn artifact_rejection(p: &ArtifactProvenance) -> Option<String> {
    if !p.workflow_run_reported {
        return Some("provenance unknown: workflow_run is absent or null".into());
    }
    match (p.repository_id, p.head_repository_id) {
        (Some(base), Some(head)) if base == head => None,
        (Some(base), Some(head)) => Some(format!(
            "uploaded by a fork's run: workflow_run.head_repository_id is {head}, expected {base} (workflow_run.repository_id)"
        )),
        (base, head) => Some(format!(
            "provenance unknown: workflow_run repository id is absent (repository_id {}, head_repository_id {})",
            base.map_or("absent".into(), |v| v.to_string()),
            head.map_or("absent".into(), |v| v.to_string()),
        )),
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

    /// The artifact rule, row by row: only a record naming its uploading run with both repository
    /// ids present and equal is trusted; each refusal says which field and what it held.
    #[test]
    fn artifact_provenance_table() {
        let facts = |reported: bool, base: Option<u64>, head: Option<u64>| ArtifactProvenance {
            workflow_run_reported: reported,
            repository_id: base,
            head_repository_id: head,
        };
        let fork = "uploaded by a fork's run: workflow_run.head_repository_id is 2, expected 1 (workflow_run.repository_id)";
        let table: [(ArtifactProvenance, Option<&str>); 6] = [
            (facts(true, Some(1), Some(1)), None),
            (facts(true, Some(1), Some(2)), Some(fork)),
            (
                facts(false, None, None),
                Some("provenance unknown: workflow_run is absent or null"),
            ),
            (
                facts(true, None, Some(1)),
                Some(
                    "provenance unknown: workflow_run repository id is absent (repository_id absent, head_repository_id 1)",
                ),
            ),
            (
                facts(true, Some(1), None),
                Some(
                    "provenance unknown: workflow_run repository id is absent (repository_id 1, head_repository_id absent)",
                ),
            ),
            (
                facts(true, None, None),
                Some(
                    "provenance unknown: workflow_run repository id is absent (repository_id absent, head_repository_id absent)",
                ),
            ),
        ];
        for (p, expected) in table {
            assert_eq!(artifact_rejection(&p).as_deref(), expected, "{p:?}");
        }
    }
}
