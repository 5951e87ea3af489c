//! Credentials never reach the output, even when the server echoes them: a GitHub API that answers
//! with the request's `Authorization` header and the bare token in its error body has both
//! redacted by every binary that talks to it (restore, evidence verify, attest, promote); an API
//! URL with a query string or credentials is refused before any request, its secret redacted.

use crate::restore_support::{Env, REPO, t0};
use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github::{FakeGithub, Fault};
use std::process::{Command, Output};

const TOKEN: &str = "ghs_echoedTOKENvalue789";

fn github_cmd(bin: &str, fake: &FakeGithub) -> Command {
    let mut c = command::scrubbed(command::bin(bin));
    c.env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5");
    c
}

fn assert_redacted(what: &str, o: &Output) {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(exit_code(Exit::Ok)), "{what}: {err}");
    assert!(
        !out.contains(TOKEN) && !err.contains(TOKEN),
        "{what} printed the token: {out}\n{err}"
    );
    assert!(
        !err.contains("echoedTOKEN"),
        "{what} printed part of the token: {err}"
    );
    assert!(
        err.contains("Bad credentials"),
        "{what}: the server's message is kept: {err}"
    );
    assert!(err.contains("[redacted]"), "{what}: {err}");
}

#[test]
fn a_token_echoed_by_the_server_is_redacted_by_every_binary() {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + chrono::Duration::days(1));
    fake.inject(Fault::EchoAuthorization {
        on: "/repos/".into(),
    });
    let dir = env.tmp.path();
    let restore = github_cmd("tier1-restore", &fake)
        .args([
            "--store",
            "github",
            "--repository",
            REPO,
            "--branch",
            "main",
        ])
        .arg("--destination")
        .arg(dir.join("restored"))
        .output()
        .unwrap();
    assert_redacted("tier1-restore", &restore);
    let file = dir.join(format!("evidence-{}.zip", p.run.id));
    let verify = github_cmd("tier1-evidence", &fake)
        .args([
            "verify",
            "--workflow-run-id",
            &p.run.id.to_string(),
            "--file",
        ])
        .arg(&file)
        .args(["--artifact-name", &format!("tier1-evidence-{}-1", p.run.id)])
        .args(["--expected-digest", &"a".repeat(64)])
        .output()
        .unwrap();
    assert_redacted("tier1-evidence verify", &verify);
    let attest = github_cmd("tier1-attest", &fake)
        .args([
            "--workflow-run-id",
            &p.run.id.to_string(),
            "--runner-version",
            "2.330.0",
        ])
        .args(["--runner-name", "b200-node-01", "--runner-os", "Linux"])
        .args([
            "--runner-arch",
            "X64",
            "--runner-environment",
            "self-hosted",
        ])
        .output()
        .unwrap();
    assert_redacted("tier1-attest", &attest);
    let promote = github_cmd("tier1-promote", &fake)
        .args(["--approvals-from-run", &p.run.id.to_string()])
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
        .output()
        .unwrap();
    assert_redacted("tier1-promote", &promote);
}

#[test]
fn an_api_url_with_a_query_or_credentials_is_refused_and_redacted() {
    let env = Env::new();
    let _ = env.good_nightly(t0(), 1);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    for (url, secret) in [
        (format!("{}/?sig=SEKRETsig", fake.api_url()), "SEKRETsig"),
        (format!("{}/#frag=SEKRETfrag", fake.api_url()), "SEKRETfrag"),
        (
            fake.api_url().replacen("://", "://user:SEKRETpass@", 1),
            "SEKRETpass",
        ),
    ] {
        let o = github_cmd("tier1-restore", &fake)
            .env("GITHUB_API_URL", &url)
            .args([
                "--store",
                "github",
                "--repository",
                REPO,
                "--branch",
                "main",
            ])
            .arg("--destination")
            .arg(env.tmp.path().join("restored"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "{url}: {err}"
        );
        assert!(!err.contains(secret), "{url}: {err}");
        assert!(err.contains("GITHUB_API_URL"), "{url}: {err}");
        assert!(!env.tmp.path().join("restored").exists());
    }
}
