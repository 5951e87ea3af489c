//! The GitHub behaviours the emulator learned from issue 20, run on the real workflows: a run is
//! completed seconds after its last job (a publisher queued on the lock must still see the night
//! just published), "Re-run this job" is a new attempt of the same run whose artifact names are
//! unique across attempts (HTTP 409), and an environment without required reviewers (a private
//! repository without GitHub Enterprise) lets its job run at once and records no approval, and
//! the repository's artifact retention limit silently cuts `retention-days`. Issue 36: a re-run
//! keeps `github.actor` (the run's first actor); who started the attempt is
//! `github.triggering_actor`, and that is who asks for the promotion.
//! Helpers come from workflow_scenarios.rs.

use crate::support::workflow_harness;
use crate::workflow_scenarios::{at, bootstrap, conclusion, result, rows};

use serde_json::Value;
use workflow_harness::{RunSpec, harness_or_skip};

/// Issue 20, defect 7: the publication lock is released when the publishing job ends, seconds
/// before GitHub marks its run completed. The next publisher, queued on the lock, restores at once:
/// it must still see the night just published, or that night is lost (a lost update).
#[test]
fn a_publisher_queued_on_the_lock_sees_the_night_published_just_before_it() {
    let Some(h) = harness_or_skip("a_publisher_queued_on_the_lock_sees_the_night_just_published")
    else {
        return;
    };
    bootstrap(&h);
    let first = RunSpec::nightly().hold_until_queued("publish-history", 1, "publish-history");
    let r = h.run(&[first, RunSpec::nightly()]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    let trace = &r.0["trace"];
    let released = at(trace, 0, "publish-history", "finished");
    assert!(
        at(trace, 1, "publish-history", "started") < at_run(trace, 0, "completed"),
        "the second publisher started before the first run was completed: {trace:#}"
    );
    assert!(released <= at(trace, 1, "publish-history", "started"));
    assert_published(&h, &r, "night");
}

/// Issue 20, defect 10: artifact names are unique per run across attempts, so re-running a
/// succeeded promotion or publication ("Re-run this job") meets the history artifact its earlier
/// attempt uploaded (upload-artifact: HTTP 409). The re-run publishes nothing twice and succeeds;
/// the history stays as the first attempt left it.
#[test]
fn re_running_a_succeeded_promotion_or_publication_publishes_nothing_twice() {
    let Some(h) = harness_or_skip("re_running_a_succeeded_promotion_or_publication") else {
        return;
    };
    let history_artifacts = |run_id: &Value| -> Vec<String> {
        h.store_state()["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| &a["workflow_run_id"] == run_id)
            .filter_map(|a| a["name"].as_str())
            .filter(|n| n.starts_with("tier1-history-"))
            .map(str::to_string)
            .collect()
    };
    let r = h.run(&[
        RunSpec::bootstrap(),
        RunSpec::rerun(0, "promote-history-anchor"),
    ]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    assert_eq!(r.run(1)["id"], r.run(0)["id"], "the same run");
    assert_eq!(r.run(1)["attempt"], 2);
    assert_eq!(
        r.job(1, "tier1")["carried"],
        true,
        "the producer is not re-run"
    );
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    assert_eq!(history_artifacts(&r.run(0)["id"]).len(), 1);
    let anchored = h.restored_index().expect("the bootstrap anchor");

    let r = h.run(&[RunSpec::nightly(), RunSpec::rerun(0, "publish-history")]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    let published = h.restored_index().unwrap();
    assert_eq!(rows(&published).len(), 2);
    assert_eq!(rows(&published)[0], rows(&anchored)[0]);
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    assert_eq!(history_artifacts(&r.run(0)["id"]).len(), 1);
    assert_eq!(
        h.restored_index().unwrap(),
        published,
        "history unchanged by the re-run"
    );
}

/// Issue 20, defect 10: re-running the producer of a published night measures again under new
/// names (`<run>-<attempt>`). That night is published on top of the run's own earlier publication,
/// which is live history: the publication's restore must not skip its own run, or the earlier
/// attempt's night is lost.
#[test]
fn re_running_a_published_night_keeps_the_earlier_attempt_s_night() {
    let Some(h) = harness_or_skip("re_running_a_published_night_keeps_the_earlier_attempt") else {
        return;
    };
    bootstrap(&h);
    let r = h.run(&[RunSpec::nightly(), RunSpec::rerun(0, "tier1")]);
    assert_eq!(conclusion(&r, 0), "success", "{}", r.diagnose(0));
    assert_eq!(conclusion(&r, 1), "success", "{}", r.diagnose(1));
    assert_eq!(r.run(1)["attempt"], 2);
    assert_published(&h, &r, "attempt");
}

/// Issue 20, defect 4: a private repository without GitHub Enterprise cannot give the acceptance
/// environment required reviewers. GitHub then runs the approval job at once and records no
/// approval; the promotion must say which setting and plan are missing, and publish nothing.
#[test]
fn an_acceptance_environment_without_required_reviewers_is_refused_by_name() {
    let Some(h) = harness_or_skip("an_acceptance_environment_without_required_reviewers") else {
        return;
    };
    h.fake
        .set_environment(crate::support::fake_github::environment_record(
            workflow_harness::ACCEPTANCE_ENVIRONMENT,
            &[],
            false,
        ));
    let r = h.run(&[RunSpec::bootstrap()]);
    assert_eq!(result(&r, 0, "authorize-history-anchor"), "success");
    assert_eq!(
        result(&r, 0, "promote-history-anchor/promote"),
        "failure",
        "{}",
        r.diagnose(0)
    );
    let log = r.log(
        0,
        "promote-history-anchor/promote",
        "Ratify the new history anchor",
    );
    assert!(
        log.contains("has no required reviewers")
            && log.contains("required reviewers only with GitHub Enterprise"),
        "{log}"
    );
    assert!(h.restored_index().is_none(), "no anchor was made");
}

/// The position in the trace of run `run`'s `kind` event that names no job (`completed`).
fn at_run(trace: &Value, run: u64, kind: &str) -> u64 {
    trace
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["run"] == run && e["job"].is_null() && e["kind"] == kind)
        .and_then(|e| e["seq"].as_u64())
        .unwrap_or_else(|| panic!("no {kind} event of run {run}: {trace:#}"))
}

/// Issue 20, suspected defect 9 (confirmed): a repository or organization whose artifact retention
/// is below what tier1 asks for cuts `retention-days: 90` without an error. Evidence kept 30 days
/// would expire before its anchor can be renewed (day 60): the producer's verification refuses it
/// by name, and no candidate history is uploaded or published.
#[test]
fn evidence_the_retention_limit_would_expire_before_renewal_is_refused() {
    let Some(h) = harness_or_skip("evidence_the_retention_limit_would_expire") else {
        return;
    };
    let before = bootstrap(&h);
    h.fake.set_retention_limit(Some(30));
    let r = h.run(&[RunSpec::nightly()]);
    assert_eq!(
        r.step(0, "tier1", "verify_evidence")["outcome"],
        "failure",
        "{}",
        r.diagnose(0)
    );
    let log = r.log(0, "tier1", "verify_evidence");
    assert!(
        log.contains("effective retention (expires_at - created_at): expected more than 60 days (the anchor renewal age), found 30 days"),
        "{log}"
    );
    assert_eq!(r.step(0, "tier1", "upload_candidate")["outcome"], "skipped");
    assert_eq!(result(&r, 0, "publish-history"), "skipped");
    assert_eq!(h.restored_index().unwrap(), before, "history unchanged");
}

/// The restored history holds the anchor and the nights of runs 0 and 1 of `r` (`what` names
/// them in the failure message), none lost.
fn assert_published(h: &workflow_harness::Harness, r: &workflow_harness::Report, what: &str) {
    let index = h.restored_index().unwrap();
    let published: Vec<&str> = rows(&index)
        .iter()
        .map(|x| x["run_id"].as_str().unwrap())
        .collect();
    for i in [0, 1] {
        let id = r.job(i, "tier1")["outputs"]["run_id"].as_str().unwrap();
        assert!(
            published.contains(&id),
            "{what} {i} ({id}) lost: {published:?}"
        );
    }
    assert_eq!(published.len(), 3, "the anchor and both: {published:?}");
}

/// Issue 36, N11: on a re-run GitHub keeps `github.actor` (`$GITHUB_ACTOR`), the user who started
/// the run's first attempt; the user who re-ran it is `github.triggering_actor`
/// (`$GITHUB_TRIGGERING_ACTOR`; https://docs.github.com/en/actions/reference/workflows-and-actions/contexts#github-context).
/// alice dispatches an acceptance whose producer fails before anything is uploaded (a runner
/// below the version floor); bob re-runs it and approves its deployment himself. bob both asked
/// for this promotion and approved it: refused, and no anchor is made. With `$GITHUB_ACTOR` as the
/// requester, alice would have been recorded and bob's approval counted as a second person's.
#[test]
fn a_re_run_by_the_approver_cannot_approve_its_own_promotion() {
    let Some(h) = harness_or_skip("a_re_run_by_the_approver_cannot_approve_its_own_promotion")
    else {
        return;
    };
    let first = RunSpec::bootstrap().env("TIER1_RUNNER_VERSION", "2.300.0");
    let again = RunSpec::rerun(0, "tier1")
        .by("bob")
        .env("TIER1_RUNNER_VERSION", "2.327.1")
        .review("approved");
    let r = h.run(&[first, again]);
    assert_eq!(result(&r, 0, "tier1"), "failure", "{}", r.diagnose(0));
    assert_eq!(result(&r, 0, "authorize-history-anchor"), "skipped");
    assert_eq!(r.run(1)["attempt"], 2);
    assert_eq!(result(&r, 1, "tier1"), "success", "{}", r.diagnose(1));
    assert_eq!(result(&r, 1, "authorize-history-anchor"), "success");
    assert_eq!(
        result(&r, 1, "promote-history-anchor/promote"),
        "failure",
        "{}",
        r.diagnose(1)
    );
    let log = r.log(
        1,
        "promote-history-anchor/promote",
        "Ratify the new history anchor",
    );
    assert!(
        log.contains("the requester bob approved their own promotion"),
        "{log}"
    );
    assert!(h.restored_index().is_none(), "no anchor was made");
}
