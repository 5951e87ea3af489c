//! The GitHub client against the shapes `github/rest-api-description` allows and the fake GitHub
//! now serves: artifacts whose `workflow_run` provenance is absent (refused, never trusted as "not a
//! fork"), nullable `created_at` / `workflow_run` (that artifact skipped as a recorded rejection, not
//! the whole listing), a signed download `Location` that expires (a retry asks `/zip` again), and
//! several approval records with no order (decided from the whole set).

use crate::history_support;
use crate::restore_support;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github;

use chrono::Duration as ChronoDuration;
use fake_github::{FakeGithub, Fault, approval_record};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;
use tier1::github::{GithubConfig, Token};
use tier1::restore::provenance::artifact_rejection;
use tier1::store::ArtifactStore;
use tier1::store::github::GithubStore;
use tier1::store::local::{LocalStore, NewRun};

const TOKEN: &str = "ghs_shapesTOKEN789";

fn restore_github(fake: &FakeGithub, dest: &Path) -> Output {
    crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
        .args([
            "--store",
            "github",
            "--branch",
            "main",
            "--current-run-id",
            "999999",
        ])
        .args(["--repository", restore_support::REPO])
        .arg("--now")
        .arg((restore_support::t0() + ChronoDuration::days(1)).to_rfc3339())
        .arg("--destination")
        .arg(dest)
        .env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", restore_support::REPO)
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("TIER1_STORE")
        .output()
        .expect("tier1-restore runs")
}

#[test]
fn an_artifact_without_fork_provenance_is_refused_not_trusted() {
    for (field, value) in [
        ("workflow_run.repository_id", None),
        ("workflow_run.head_repository_id", None),
        ("workflow_run.head_repository_id", Some(Value::Null)),
        ("workflow_run", None),
    ] {
        let env = restore_support::Env::new();
        let p = env.good_nightly(restore_support::t0(), 2);
        let history = p.history.as_ref().expect("history").id;
        let fake = FakeGithub::start(&env.store_dir, TOKEN);
        fake.set_now(restore_support::t0() + ChronoDuration::days(1));
        fake.set_now(restore_support::t0() + ChronoDuration::days(1));
        fake.inject(Fault::ArtifactField {
            id: history,
            field: field.into(),
            value: value.clone(),
        });
        // The store leaves the artifact out and says why.
        let cfg = GithubConfig::new(&fake.api_url(), restore_support::REPO, Token::new(TOKEN))
            .expect("config");
        let gh = GithubStore::new(cfg).expect("store");
        let listing = gh
            .list_run_artifacts(p.run.id, &artifact_rejection)
            .expect("listing");
        let name = &p.history.as_ref().expect("history").name;
        let err = gh
            .find_run_artifact(p.run.id, name, &artifact_rejection)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("its record cannot be used") && err.contains("provenance"),
            "{err}"
        );
        assert!(
            listing.items.iter().all(|a| a.id != history),
            "{field}: an artifact of unknown provenance was listed"
        );
        let skipped = listing.skipped.iter().find(|s| s.id == history);
        let reason = &skipped.expect("recorded as skipped").reason;
        assert!(reason.contains("provenance"), "{field}: {reason}");
        // Restore never installs it, and never bootstraps over it: the run's history is unknown.
        let dest = env.dest();
        let o = restore_github(&fake, &dest);
        restore_support::assert_refused(
            &o,
            exit_code(Exit::Integrity),
            "discovery was truncated",
            &dest,
        );
        restore_support::assert_stderr_has(&o, "provenance unknown");
    }
}

#[test]
fn an_artifact_with_a_null_field_is_skipped_as_a_recorded_rejection() {
    let env = restore_support::Env::new();
    let p = env.good_nightly(restore_support::t0(), 2);
    let store = env.store_at(restore_support::t0());
    let extra = env.tmp.path().join("coverage.txt");
    std::fs::write(&extra, b"coverage").expect("write");
    let a = store
        .upload_file(p.run.id, "coverage-report", &extra, 90)
        .expect("upload");
    let b = store
        .upload_file(p.run.id, "build-log", &extra, 90)
        .expect("upload");
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(restore_support::t0() + ChronoDuration::days(1));
    fake.inject(Fault::ArtifactField {
        id: a.id,
        field: "created_at".into(),
        value: Some(Value::Null),
    });
    fake.inject(Fault::ArtifactField {
        id: b.id,
        field: "workflow_run".into(),
        value: Some(Value::Null),
    });
    let dest = env.dest();
    let o = restore_github(&fake, &dest);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        restore_support::stderr(&o)
    );
    let j = restore_support::stdout_json(&o);
    assert_eq!(j["status"], "restored");
    let rejections = j["rejections"].as_array().expect("rejections");
    let find = |id: u64| {
        rejections
            .iter()
            .find(|r| r["artifact_id"] == id)
            .unwrap_or_else(|| panic!("artifact {id} recorded: {rejections:?}"))
    };
    let ra = find(a.id);
    assert_eq!(ra["artifact_name"], "coverage-report");
    assert_eq!(ra["workflow_run_id"], p.run.id);
    assert!(
        ra["reason"]
            .as_str()
            .unwrap()
            .contains("created_at is null"),
        "{ra}"
    );
    let rb = find(b.id);
    assert!(
        rb["reason"]
            .as_str()
            .unwrap()
            .contains("workflow_run is absent"),
        "{rb}"
    );
}

#[test]
fn a_retried_download_asks_for_a_fresh_redirect() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("store");
    let local = LocalStore::create(&dir, "owner/repo").expect("store");
    let run = local
        .create_run(&NewRun::new("tier1-nightly.yml", "main", &"a".repeat(40)))
        .expect("run");
    let file = tmp.path().join("blob.bin");
    let data = b"history bytes".repeat(100);
    std::fs::write(&file, &data).expect("write");
    let meta = local
        .upload_file(run.id, "tier1-history-1-1", &file, 90)
        .expect("upload");
    local.complete_run(run.id, "success").expect("complete");
    let fake = FakeGithub::start(&dir, TOKEN);
    // The signed URL lives 150 ms; the first blob GET is throttled and the retry waits 400 ms.
    fake.set_location_ttl(Duration::from_millis(150));
    fake.inject(Fault::Status {
        on: "/blob/".into(),
        status: 503,
        headers: vec![],
        times: 1,
    });
    let mut cfg = GithubConfig::new(&fake.api_url(), "owner/repo", Token::new(TOKEN)).unwrap();
    cfg.retry.base_delay = Duration::from_millis(400);
    let store = GithubStore::new(cfg).expect("store");
    let mut sink = Vec::new();
    let got = store.download(&meta, &mut sink, 1 << 20).expect("download");
    assert_eq!(sink, data);
    assert_eq!(got.bytes, data.len() as u64);
    assert_eq!(
        fake.requests_to("/zip").len(),
        2,
        "one redirect per attempt"
    );
    let blobs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.listener == "blob")
        .collect();
    assert_eq!(blobs.len(), 2);
    assert_ne!(blobs[0].target, blobs[1].target, "a fresh signature");
    assert!(blobs.iter().all(|r| r.header("authorization").is_none()));
}

const PROMOTE: &str = env!("CARGO_BIN_EXE_tier1-promote");

#[test]
fn approvals_are_decided_from_the_whole_set_for_the_environment() {
    use history_support::*;
    let t = tempfile::tempdir().expect("tmp");
    let w = t.path();
    let fake = crate::promote_reviews::world(w, TOKEN);
    let env = "tier1-canonical-acceptance";
    fake.set_environment(fake_github::environment_record(env, &["ann", "bob"], true));
    let ann = approval_record("approved", "ann", 11, env);
    let bob_rejects = approval_record("rejected", "bob", 12, env);
    let carol_pending = approval_record("pending", "carol", 13, env);
    let other_env = approval_record("rejected", "dave", 14, "staging");
    let promote = |run: u64| {
        let req = promote_request(
            &w.join("cand"),
            &w.join("ev"),
            Some(&w.join("live")),
            &w.join("out"),
            "c",
        );
        let mut args = promote_args(&req);
        args.extend(["--approvals-from-run".into(), run.to_string()]);
        args
    };
    let run_with = |args: &[String]| {
        crate::support::command::scrubbed(PROMOTE)
            .args(args)
            .env("GITHUB_API_URL", fake.api_url())
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_REPOSITORY", "owner/repo")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_ACTOR")
            .output()
            .expect("tier1-promote runs")
    };
    for (run, records, needle) in [
        (7, json!([ann, bob_rejects]), "\"rejected\" by bob"),
        (8, json!([bob_rejects, ann]), "\"rejected\" by bob"),
        (9, json!([ann, carol_pending]), "\"pending\" by carol"),
    ] {
        fake.set_approvals(run, records);
        let before = snapshot(w);
        let o = run_with(&promote(run));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "run {run}: {err}"
        );
        assert!(err.contains(needle), "run {run}: {err}");
        assert!(
            err.contains("dispatch the promotion again"),
            "run {run}: {err}"
        );
        assert!(o.stdout.is_empty());
        assert_eq!(snapshot(w), before, "run {run}: every tree untouched");
    }
    fake.set_approvals(
        10,
        json!([ann, other_env, approval_record("approved", "bob", 12, env)]),
    );
    let o = run_with(&promote(10));
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = tier1::history_check::validate_history_root(&w.join("out")).expect("valid output");
    let row = v.index.runs.last().expect("row");
    assert_eq!(row.baseline_acceptance_reviewers, ["ann", "bob"]);
}
