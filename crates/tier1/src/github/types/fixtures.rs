//! Test fixtures of the API records: one completed run of `o/r` (repository id 1) and its head
//! repository, shared by the tests of the GitHub store and of restore's provenance rule.

use super::{ApiRepository, ApiRun};
use chrono::Utc;

impl ApiRun {
    /// A completed `tier1-nightly.yml` run (id 1, workflow 7) on `main` of `o/r` (id 1), triggered
    /// by `event`, whose head repository is `head` with id `head_id`.
    pub(crate) fn fixture(event: &str, head: &str, head_id: u64) -> ApiRun {
        ApiRun {
            id: 1,
            workflow_id: 7,
            path: Some("o/r/.github/workflows/tier1-nightly.yml@refs/heads/main".into()),
            head_branch: Some("main".into()),
            head_sha: "a".repeat(40),
            event: event.into(),
            status: Some("completed".into()),
            conclusion: Some("success".into()),
            run_attempt: None,
            created_at: Utc::now(),
            repository: ApiRepository {
                id: 1,
                full_name: "o/r".into(),
            },
            head_repository: Some(ApiRepository {
                id: head_id,
                full_name: head.into(),
            }),
            head_repository_id: Some(head_id),
        }
    }
}
