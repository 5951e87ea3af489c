//! The core lifecycle again through the `github` store: a history built by the real `tier1-nightly`
//! (bootstrap anchor, accepted run, confirmed regression, promotion) is served by the fake GitHub
//! API and restored through `--store github` byte for byte as through the local store; renewal at
//! 61 days and expiry at 91 days refuse through GitHub too; `tier1-promote --approvals-from-run`
//! reads the environment approvals from the API and refuses without an approval.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github;
use crate::support::nightly_repo;

use fake_github::FakeGithub;
use std::path::Path;
use std::process::Output;

const TOKEN: &str = "ghs_lifecycleTOKEN456";

fn restore(
    store_args: &[&str],
    repo: &str,
    dest: &Path,
    now: Option<String>,
    fake: Option<&FakeGithub>,
) -> Output {
    let mut c = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"));
    c.args(store_args)
        .args([
            "--repository",
            repo,
            "--branch",
            "main",
            "--current-run-id",
            "999999",
        ])
        .arg("--destination")
        .arg(dest)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("TIER1_STORE")
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5");
    if let Some(now) = now {
        c.args(["--now", &now]);
    }
    if let Some(f) = fake {
        c.env("GITHUB_API_URL", f.api_url())
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_REPOSITORY", repo);
    }
    c.output().expect("tier1-restore runs")
}

fn files(root: &Path) -> Vec<(String, Vec<u8>)> {
    tier1::fsx::list_files(root)
        .unwrap()
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

fn is_empty_or_absent(p: &Path) -> bool {
    tier1::fsx::is_absent_or_empty(p).unwrap()
}

#[test]
fn the_lifecycle_restores_identically_through_the_github_store() {
    let r = nightly_repo::repo();
    let steps: [(f64, i32, &[&str]); 4] = [
        (2.0, exit_code(Exit::Ok), &[]),
        (2.0, exit_code(Exit::Ok), &[]),
        (1.5, exit_code(Exit::Gate), &[]),
        (
            1.5,
            exit_code(Exit::Ok),
            &[
                "--accept",
                "--note",
                "Ratify after review",
                "--requester",
                "alice",
            ],
        ),
    ];
    for (speedup, code, extra) in steps {
        let o = nightly_repo::nightly(&r, speedup, extra);
        assert_eq!(o.code, code, "{}\n{}", o.json, o.stderr);
    }
    let store = r.root.join(".tier1/store");
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join("store.json")).unwrap()).unwrap();
    let repo = state["repository"].as_str().unwrap().to_string();
    let out = tempfile::tempdir().unwrap();

    let local_dest = out.path().join("local");
    let spec = format!("local:{}", store.display());
    let o = restore(&["--store", &spec], &repo, &local_dest, None, None);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let fake = FakeGithub::start(&store, TOKEN);
    let gh_dest = out.path().join("github");
    let o = restore(&["--store", "github"], &repo, &gh_dest, None, Some(&fake));
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(status["status"], "restored");
    assert_eq!(
        files(&gh_dest),
        files(&local_dest),
        "both stores restore the same bytes"
    );
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(gh_dest.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["runs"].as_array().unwrap().len(), 4);
    assert_eq!(index["runs"][3]["baseline_acceptance_actor"], "alice");
    assert!(
        fake.requests()
            .iter()
            .filter(|q| q.listener == "blob")
            .all(|q| q.header("authorization").is_none())
    );

    for (days, code, fragment) in [
        (61, exit_code(Exit::RenewalRequired), "at least 60 days old"),
        (91, exit_code(Exit::Unavailable), ""),
    ] {
        let later = chrono::Utc::now() + chrono::Duration::days(days);
        fake.set_now(later);
        let dest = out.path().join(format!("github-{days}"));
        let o = restore(
            &["--store", "github"],
            &repo,
            &dest,
            Some(later.to_rfc3339()),
            Some(&fake),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "day {days}: {err}");
        assert!(err.contains(fragment), "day {days}: {err}");
        assert!(
            is_empty_or_absent(&dest),
            "day {days}: destination untouched"
        );
    }
}

fn promote_with_approvals(fake: &FakeGithub, repo: &str, run: u64, dir: &Path) -> Output {
    crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-promote"))
        .args(["--approvals-from-run", &run.to_string()])
        .arg("--history-root")
        .arg(dir.join("candidate"))
        .arg("--evidence-root")
        .arg(dir.join("evidence"))
        .arg("--output-history-root")
        .arg(dir.join("out"))
        .args(["--run-id", "r1", "--requester", "alice", "--note", "n"])
        .args(["--workflow-run", "https://github.com/o/r/actions/runs/1"])
        .args(["--expected-git-commit", &"a".repeat(40)])
        .args(["--expected-evidence-artifact", "tier1-evidence-1-1"])
        .args(["--expected-evidence-digest", &"b".repeat(64)])
        .env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", repo)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("tier1-promote runs")
}

#[test]
fn promotion_refuses_without_an_approval_of_the_protected_environment() {
    let r = nightly_repo::repo();
    let o = nightly_repo::nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    let store = r.root.join(".tier1/store");
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join("store.json")).unwrap()).unwrap();
    let repo = state["repository"].as_str().unwrap().to_string();
    let fake = FakeGithub::start(&store, TOKEN);
    fake.set_environment(crate::support::fake_github::environment_record(
        "tier1-canonical-acceptance",
        &["bob"],
        true,
    ));
    let dir = tempfile::tempdir().unwrap();

    let o = promote_with_approvals(&fake, &repo, 1, dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
    assert!(
        err.contains("no approval record of environment tier1-canonical-acceptance"),
        "{err}"
    );

    fake.set_approvals(
        1,
        serde_json::json!([{
            "environments": [{"id": 3, "name": "tier1-canonical-acceptance"}],
            "state": "rejected", "comment": "numbers look off",
            "user": {"login": "bob", "id": 7, "type": "User"}
        }]),
    );
    let o = promote_with_approvals(&fake, &repo, 1, dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{err}");
    assert!(err.contains("\"rejected\" by bob"), "{err}");
    assert!(!dir.path().join("out").exists(), "nothing written");
    assert!(!err.contains(TOKEN) && !String::from_utf8_lossy(&o.stdout).contains(TOKEN));
}
