//! GithubStore against the fake GitHub API: pagination to the last page, the fork-named-main trap,
//! retries of transient failures, refusals of integrity faults, and the token-free redirect.

use crate::support::fake_github;

use fake_github::{FakeGithub, Fault};
use std::time::Duration;
use tier1::github::{GithubConfig, Token};
use tier1::restore::provenance::artifact_rejection;
use tier1::restore::provenance::run_rejection;
use tier1::store::github::GithubStore;
use tier1::store::local::{LocalStore, NewRun};
use tier1::store::{ArtifactMeta, ArtifactStore, StoreError, WorkflowRun};

const REPO: &str = "owner/repo";
const TOKEN: &str = "ghs_fakeTOKENvalue123";
const SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const WF: &str = "tier1-nightly.yml";

struct Env {
    tmp: tempfile::TempDir,
    local: LocalStore,
    fake: FakeGithub,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        let local = LocalStore::create(&dir, REPO).unwrap();
        let fake = FakeGithub::start(&dir, TOKEN);
        Env { tmp, local, fake }
    }

    fn store(&self) -> GithubStore {
        self.store_with(|_| {})
    }

    fn store_with(&self, tweak: impl FnOnce(&mut GithubConfig)) -> GithubStore {
        let mut cfg = GithubConfig::new(&self.fake.api_url(), REPO, Token::new(TOKEN)).unwrap();
        cfg.retry.base_delay = Duration::from_millis(5);
        cfg.retry.max_delay = Duration::from_millis(20);
        cfg.retry.max_server_wait = Duration::from_secs(2);
        cfg.read_timeout = Duration::from_secs(5);
        tweak(&mut cfg);
        GithubStore::new(cfg).unwrap()
    }

    fn run(&self, new: NewRun, conclusion: &str) -> WorkflowRun {
        let r = self.local.create_run(&new).unwrap();
        self.local.complete_run(r.id, conclusion).unwrap()
    }

    fn upload(&self, run: u64, name: &str, bytes: &[u8]) -> ArtifactMeta {
        let p = self.tmp.path().join(format!("{name}.bin"));
        std::fs::write(&p, bytes).unwrap();
        self.local.upload_file(run, name, &p, 90).unwrap()
    }
}

fn main_run() -> NewRun {
    NewRun::new(WF, "main", SHA)
}

#[test]
fn pagination_reaches_the_last_page() {
    let env = Env::new();
    env.fake.set_max_per_page(2);
    for _ in 0..5 {
        env.run(main_run(), "success");
    }
    let listing = env.store().list_runs(WF, "main", 100).unwrap();
    assert_eq!(listing.items.len(), 5);
    assert!(!listing.truncated);
    let pages = env.fake.requests_to("/runs");
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(pages[2].target.contains("page=3"));
    // Runs of every status: a run is completed seconds after its publication job released the lock.
    assert!(
        pages.iter().all(|p| !p.target.contains("status=")),
        "{pages:?}"
    );
    // Newest first.
    let ids: Vec<u64> = listing.items.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![5, 4, 3, 2, 1]);
}

#[test]
fn fork_run_named_main_and_pull_request_runs_are_rejected() {
    let env = Env::new();
    let good = env.run(main_run(), "success");
    let mut fork = main_run();
    fork.event = "push".into();
    fork.head_repository = Some("attacker/repo".into());
    env.run(fork, "success");
    let mut pr = main_run();
    pr.event = "pull_request_target".into();
    env.run(pr, "success");
    // The store reports the facts; restore's provenance rule, applied while listing, rejects.
    let store = env.store();
    let all = store.list_runs(WF, "main", 100).unwrap();
    assert_eq!(all.items.len(), 3);
    assert!(all.items.iter().all(|r| r.provenance.is_some()));
    let keep = |r: &WorkflowRun| run_rejection(r, REPO).is_none();
    let listing = store.list_runs_where(WF, "main", 100, &keep).unwrap();
    let ids: Vec<u64> = listing.items.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![good.id]);
    // The request asked for the resolved numeric workflow id, not the file name.
    let req = &env.fake.requests_to("/runs")[0];
    assert!(
        req.path().contains("/workflows/1000/runs"),
        "{}",
        req.target
    );
}

#[test]
fn workflow_id_is_resolved_once() {
    let env = Env::new();
    env.run(main_run(), "success");
    let store = env.store();
    store.list_runs(WF, "main", 10).unwrap();
    store.list_runs(WF, "main", 10).unwrap();
    let lookups = env
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.path().ends_with("/workflows/tier1-nightly.yml"))
        .count();
    assert_eq!(lookups, 1);
}

#[test]
fn transient_500_then_success_is_retried() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.inject(Fault::Status {
        on: format!("/runs/{}", run.id),
        status: 500,
        headers: vec![],
        times: 1,
    });
    let got = env.store().get_run(run.id).unwrap();
    assert_eq!(got.id, run.id);
    assert_eq!(env.fake.requests_to(&format!("/runs/{}", run.id)).len(), 2);
}

#[test]
fn rate_limits_honour_retry_after_and_reset() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.inject(Fault::Status {
        on: "/artifacts".into(),
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        times: 1,
    });
    let reset = (chrono::Utc::now().timestamp() + 1).to_string();
    env.fake.inject(Fault::Status {
        on: format!("/runs/{}", run.id),
        status: 403,
        headers: vec![
            ("x-ratelimit-remaining".into(), "0".into()),
            ("x-ratelimit-reset".into(), reset),
        ],
        times: 1,
    });
    let store = env.store();
    assert!(
        store
            .list_run_artifacts(run.id, &artifact_rejection)
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(store.get_run(run.id).unwrap().id, run.id);
    assert_eq!(env.fake.requests().len(), 4);
}

#[test]
fn retry_after_above_the_cap_is_an_error_not_a_sleep() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.inject(Fault::Status {
        on: format!("/runs/{}", run.id),
        status: 403,
        headers: vec![("retry-after".into(), "3600".into())],
        times: 1,
    });
    let err = env.store().get_run(run.id).unwrap_err().to_string();
    assert!(
        err.contains(&format!("GET /repos/owner/repo/actions/runs/{}", run.id)),
        "{err}"
    );
    assert!(err.contains("HTTP 403") && err.contains("3600"), "{err}");
}

#[test]
fn retries_are_bounded_and_permanent_errors_are_not_retried() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.inject(Fault::Status {
        on: format!("/runs/{}", run.id),
        status: 502,
        headers: vec![],
        times: 99,
    });
    let err = env.store().get_run(run.id).unwrap_err();
    assert!(
        matches!(err, StoreError::Remote { status: 502, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("injected HTTP 502"), "{err}");
    assert_eq!(env.fake.requests().len(), 4);

    let env = Env::new();
    let bad = env.store_with(|c| c.token = Token::new("wrong"));
    let err = bad.get_run(1).unwrap_err().to_string();
    assert!(
        err.contains("GET /repos/owner/repo/actions/runs/1: HTTP 401: Bad credentials"),
        "{err}"
    );
    assert_eq!(env.fake.requests().len(), 1);
}

#[test]
fn truncated_page_marks_the_listing_incomplete() {
    let env = Env::new();
    env.fake.set_max_per_page(2);
    for _ in 0..3 {
        env.run(main_run(), "success");
    }
    env.fake.inject(Fault::TruncatedPage { on: "/runs".into() });
    let listing = env.store().list_runs(WF, "main", 100).unwrap();
    assert!(listing.truncated);
    assert_eq!(listing.items.len(), 2);
}

#[test]
fn link_loop_is_incomplete_discovery() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.inject(Fault::LinkLoop {
        on: "/artifacts".into(),
    });
    let err = env
        .store()
        .list_run_artifacts(run.id, &artifact_rejection)
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{msg}");
    assert!(
        msg.contains("incomplete listing") && msg.contains("points back"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("/actions/runs/{}/artifacts", run.id)),
        "{msg}"
    );
    assert_eq!(env.fake.requests().len(), 2);
}

fn one_artifact(env: &Env, bytes: &[u8]) -> ArtifactMeta {
    let run = env.run(main_run(), "success");
    env.upload(run.id, "tier1-history-1-1", bytes);
    env.store()
        .list_run_artifacts(run.id, &artifact_rejection)
        .unwrap()
        .items
        .remove(0)
}

#[test]
fn download_streams_the_redirect_without_the_token() {
    let env = Env::new();
    let data = b"history archive bytes".repeat(1000);
    let meta = one_artifact(&env, &data);
    let mut sink = Vec::new();
    let got = env.store().download(&meta, &mut sink, 1 << 20).unwrap();
    assert_eq!(sink, data);
    assert_eq!(got.digest.as_str(), meta.digest.as_deref().unwrap());
    assert_eq!(got.bytes, data.len() as u64);
    let reqs = env.fake.requests();
    let zip = reqs.iter().find(|r| r.path().ends_with("/zip")).unwrap();
    assert_eq!(
        zip.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(zip.header("x-github-api-version"), Some("2026-03-10"));
    assert!(zip.header("user-agent").unwrap().starts_with("tier1/"));
    let blob: Vec<_> = reqs.iter().filter(|r| r.listener == "blob").collect();
    assert_eq!(blob.len(), 1);
    assert_eq!(blob[0].header("authorization"), None);
}

fn assert_download_refused(env: &Env, meta: &ArtifactMeta, fragment: &str) -> StoreError {
    let mut sink = Vec::new();
    let err = env.store().download(meta, &mut sink, 1 << 20).unwrap_err();
    assert!(err.to_string().contains(fragment), "{err}");
    err
}

#[test]
fn gone_artifact_is_expired() {
    let env = Env::new();
    let meta = one_artifact(&env, b"abc");
    env.local
        .update(|s| {
            s.artifacts[0].expired = true;
            Ok(())
        })
        .unwrap();
    let err = assert_download_refused(&env, &meta, "has expired");
    assert!(matches!(err, StoreError::Expired { .. }));
    assert!(env.fake.requests().iter().all(|r| r.listener == "api"));
}

#[test]
fn short_long_and_corrupt_bodies_are_integrity_failures() {
    for (fault, fragment) in [
        (
            Fault::BodyLength { id: 1, delta: -1 },
            "expected 100 bytes, found 99",
        ),
        (
            Fault::BodyLength { id: 1, delta: 1 },
            "body is longer than size_in_bytes",
        ),
        (
            Fault::CorruptBody { id: 1 },
            "digest mismatch: expected sha256:",
        ),
    ] {
        let env = Env::new();
        let meta = one_artifact(&env, &[7u8; 100]);
        env.fake.inject(fault);
        let err = assert_download_refused(&env, &meta, fragment);
        assert!(matches!(err, StoreError::Integrity { id: 1, .. }), "{err}");
        assert!(err.to_string().contains("GET http://127.0.0.1:"), "{err}");
        assert!(
            !err.to_string().contains("SIGNATURE"),
            "blob query leaked: {err}"
        );
    }
}

#[test]
fn size_above_the_cap_is_refused_before_fetching() {
    let env = Env::new();
    let meta = one_artifact(&env, &[1u8; 64]);
    let err = env
        .store()
        .download(&meta, &mut Vec::new(), 63)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("exceeds the download cap of 63 bytes"),
        "{err}"
    );
    assert!(env.fake.requests().iter().all(|r| r.listener == "api"));
}

#[test]
fn blob_host_demanding_the_token_never_gets_it() {
    let env = Env::new();
    let meta = one_artifact(&env, b"abc");
    env.fake.inject(Fault::BlobDemandsToken);
    let err = assert_download_refused(&env, &meta, "HTTP 401");
    assert!(
        matches!(err, StoreError::Remote { status: 401, .. }),
        "{err}"
    );
    let blob: Vec<_> = env
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.listener == "blob")
        .collect();
    assert!(!blob.is_empty());
    assert!(blob.iter().all(|r| r.header("authorization").is_none()));
}

#[test]
fn slow_body_hits_the_read_timeout() {
    let env = Env::new();
    let meta = one_artifact(&env, &[3u8; 4096]);
    env.fake.inject(Fault::SlowBody { id: 1, ms: 1500 });
    let store = env.store_with(|c| c.read_timeout = Duration::from_millis(200));
    let err = store.download(&meta, &mut Vec::new(), 1 << 20).unwrap_err();
    assert!(matches!(err, StoreError::Remote { status: 0, .. }), "{err}");
    assert!(
        err.to_string().contains("timed out") || err.to_string().contains("body"),
        "{err}"
    );
}

#[test]
fn rerun_duplicates_keep_the_highest_id_and_find_by_name_works() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.upload(run.id, "tier1-evidence-1-1", b"first");
    env.local
        .update(|s| {
            let mut dup = s.artifacts[0].clone();
            dup.id = 7;
            s.artifacts.push(dup);
            Ok(())
        })
        .unwrap();
    let store = env.store();
    let items = store
        .list_run_artifacts(run.id, &artifact_rejection)
        .unwrap()
        .items;
    assert_eq!(items.iter().map(|a| a.id).collect::<Vec<_>>(), vec![7]);
    assert_eq!(
        store
            .find_run_artifact(run.id, "tier1-evidence-1-1", &artifact_rejection)
            .unwrap()
            .id,
        7
    );
    let by_name = store
        .find_artifacts_by_name("tier1-evidence-1-1", &artifact_rejection)
        .unwrap();
    assert_eq!(by_name.items.len(), 2);
    assert!(matches!(
        store.find_run_artifact(run.id, "nope", &artifact_rejection),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn approvals_and_attempt_jobs() {
    let env = Env::new();
    let run = env.run(main_run(), "success");
    env.fake.set_approvals(
        run.id,
        serde_json::json!([{
            "environments": [{"id": 3, "name": "tier1-canonical-acceptance"}],
            "state": "approved", "comment": "ok",
            "user": {"login": "reviewer", "id": 42, "type": "User"}
        }]),
    );
    env.fake.set_jobs(
        run.id,
        1,
        serde_json::json!([{
            "id": 11, "run_id": run.id, "run_attempt": 1, "name": "tier1",
            "status": "requested", "conclusion": null,
            "labels": ["self-hosted", "b200"], "runner_id": null, "runner_name": null
        }]),
    );
    let store = env.store();
    let a = store.run_approvals(run.id).unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(
        (
            a[0].state.as_str(),
            a[0].reviewer_login.as_str(),
            a[0].reviewer_id
        ),
        ("approved", "reviewer", 42)
    );
    assert_eq!(
        a[0].environments,
        vec!["tier1-canonical-acceptance".to_string()]
    );
    let jobs = store.attempt_jobs(run.id, 1).unwrap();
    assert_eq!(jobs[0].labels, vec!["self-hosted", "b200"]);
}
