//! `tier1-promote --approvals-from-run` against the fake GitHub (issue 20, defects 4 and 12): an
//! approval environment without required reviewers (all a private repository gets without GitHub
//! Enterprise: the approval job runs at once and no approval is recorded) is refused with a message
//! naming the missing setting and the plan; an absent environment likewise; and a requester who is
//! the only one to approve their own promotion is refused, whatever the environment's "Prevent
//! self-review" says. Every refusal exits 3 and leaves every tree byte-identical.

use crate::history_support::*;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github::{FakeGithub, approval_record, environment_record};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use tier1::store::local::LocalStore;

const PROMOTE: &str = env!("CARGO_BIN_EXE_tier1-promote");
const TOKEN: &str = "ghs_promoteReviewsTOKEN";
const ENV: &str = "tier1-canonical-acceptance";

/// Live history with an anchor, a candidate run `c` and its evidence under `w`; the fake GitHub of
/// repository `owner/repo` (also used by github_shapes.rs).
pub(crate) fn world(w: &Path, token: &str) -> FakeGithub {
    bootstrap_live(w, &w.join("live"), &RunSpec::new("anchor", 0));
    candidate(
        Some(&w.join("live")),
        &w.join("cand"),
        &RunSpec::new("c", 1),
    );
    evidence(&w.join("ev"), &RunSpec::new("c", 1));
    let store = w.join("store");
    LocalStore::create(&store, "owner/repo").expect("store");
    FakeGithub::start(&store, token)
}

/// tier1-promote of run `c` requested by `dispatcher`, approvals read from workflow run `run`.
fn promote(fake: &FakeGithub, w: &Path, run: u64) -> Output {
    let req = promote_request(
        &w.join("cand"),
        &w.join("ev"),
        Some(&w.join("live")),
        &w.join("out"),
        "c",
    );
    let mut args = promote_args(&req);
    args.extend(["--approvals-from-run".into(), run.to_string()]);
    crate::support::command::scrubbed(PROMOTE)
        .args(&args)
        .env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "owner/repo")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("tier1-promote runs")
}

/// Refused with exit 3, `needle` in the message, nothing printed, every tree untouched.
fn assert_refused(fake: &FakeGithub, w: &Path, run: u64, needle: &str) {
    let before = snapshot(w);
    let o = promote(fake, w, run);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
    assert!(err.contains(needle), "{needle} not in {err}");
    assert!(o.stdout.is_empty());
    assert_eq!(snapshot(w), before, "every tree untouched");
    assert!(!w.join("out").exists());
}

#[test]
fn an_approval_environment_without_required_reviewers_is_refused_naming_the_setting_and_the_plan() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let fake = world(w, TOKEN);
    // What a private repository on GitHub Free, Pro or Team gets: deployment branches, no reviewers.
    fake.set_environment(environment_record(ENV, &[], false));
    assert_refused(
        &fake,
        w,
        1,
        "environment tier1-canonical-acceptance of owner/repo has no required reviewers (its protection rules: branch_policy)",
    );
    assert_refused(
        &fake,
        w,
        1,
        "required reviewers only with GitHub Enterprise (Free, Pro and Team: public repositories only)",
    );
    // No environment at all.
    let t2 = tempfile::tempdir().unwrap();
    let fake = world(t2.path(), TOKEN);
    assert_refused(
        &fake,
        t2.path(),
        1,
        "environment tier1-canonical-acceptance does not exist in owner/repo",
    );
}

#[test]
fn a_requester_who_alone_approved_their_own_promotion_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let fake = world(w, TOKEN);
    // The environment lets requesters approve their own runs ("Prevent self-review" off).
    fake.set_environment(environment_record(ENV, &["dispatcher", "bob"], false));
    fake.set_approvals(
        2,
        json!([approval_record("approved", "dispatcher", 5, ENV)]),
    );
    assert_refused(
        &fake,
        w,
        2,
        "the requester dispatcher approved their own promotion (environment tier1-canonical-acceptance, approved by dispatcher): a second person must approve",
    );
    // A second person's approval ratifies it.
    fake.set_approvals(3, json!([approval_record("approved", "bob", 6, ENV)]));
    let o = promote(&fake, w, 3);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = tier1::history_check::validate_history_root(&w.join("out")).expect("valid output");
    assert_eq!(
        v.index.runs.last().unwrap().baseline_acceptance_reviewers,
        ["bob"]
    );
}
