//! A plan for the unit tests of the shards module: the embedded suite's night on commit
//! `fixtures::COMMIT`, no history, the `cpu` profile, the unnamed class.

use super::plan::{Plan, PlanRequest, make};
use crate::suite::Suite;

/// The plan of `suite` in `shards` shards.
pub(crate) fn plan(suite: &Suite, shards: u32) -> Plan {
    make(PlanRequest {
        suite,
        history: None,
        run_id: "20260801_031500_tier1_nightly_01234567".into(),
        workflow_run_id: 7,
        attempt: 1,
        created_at: "2026-08-01T03:15:00Z".into(),
        commit: crate::aggregate::fixtures::COMMIT.into(),
        profile: "cpu".into(),
        runner_class: None,
        artifact_prefix: "tier1".into(),
        requested_shards: shards,
        passes: 1,
        anchor_candidate: false,
        anchor_run_id: None,
    })
    .expect("a plan without history")
}
