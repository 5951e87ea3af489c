//! The job's credentials for the anchor's commit (issue 36, N1), over HTTP against git's own server
//! (`git http-backend`, support/git_http.rs) that answers as GitHub does for a private repository.
//! The token travels as actions/checkout sends it — `Authorization: basic
//! base64(x-access-token:<token>)` for `GITHUB_SERVER_URL` — but through git's environment: it is
//! never in `.git/config` or in any output, a header the checkout persisted is replaced (exactly
//! one `Authorization` reaches the server) or, without a token, used as is; with no credentials at
//! all the night warns, naming the permission to grant.

use crate::nightly_side_by_side::{bootstrap, checkout, commit_baseline_ms, regression_summary};
use crate::support::exit_code::{Exit, exit_code};
use crate::support::git_http::{GitHttp, base64_of};
use crate::support::nightly_repo::{Out, Repo, git, nightly_with, shallow_clone_from};
use serde_json::Value;

const TOKEN: &str = "ghs_fetchTheAnchorTOKEN";

/// A repository whose anchor is one commit behind a committed slowdown, served over HTTP.
struct World {
    _served: tempfile::TempDir,
    source: Repo,
    server: GitHttp,
}

fn world() -> World {
    let source = checkout("");
    bootstrap(&source);
    commit_baseline_ms(&source, "13");
    let served = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(served.path().join("o")).unwrap();
    git(
        served.path(),
        &[
            "clone",
            "-q",
            "--bare",
            source.root.to_str().unwrap(),
            "o/r",
        ],
    );
    let server = GitHttp::start(served.path(), TOKEN);
    World {
        _served: served,
        source,
        server,
    }
}

fn header() -> String {
    format!(
        "AUTHORIZATION: basic {}",
        base64_of(&format!("x-access-token:{TOKEN}"))
    )
}

impl World {
    /// A depth-1 clone as actions/checkout makes it; with `persist`, its credentials file is left
    /// included by the local config (`persist-credentials: true`, the action's default).
    fn clone(&self, persist: bool) -> Repo {
        let key = format!("http.{}/.extraheader", self.server.url);
        let c = shallow_clone_from(
            &self.source,
            &format!("{}/o/r", self.server.url),
            &[format!("{key}={}", header())],
        );
        if persist {
            let file = c.root.join("../git-credentials.config");
            std::fs::write(
                &file,
                format!(
                    "[http \"{}/\"]\n\textraheader = {}\n",
                    self.server.url,
                    header()
                ),
            )
            .unwrap();
            let gitdir = c.root.join(".git");
            git(
                &c.root,
                &[
                    "config",
                    "--local",
                    &format!("includeIf.gitdir:{}.path", gitdir.display()),
                    file.to_str().unwrap(),
                ],
            );
        }
        c
    }

    /// A night of `c` with `GITHUB_SERVER_URL` the server's and `token` as `GITHUB_TOKEN`.
    fn night(&self, c: &Repo, token: Option<&str>) -> (Out, Vec<Vec<String>>) {
        let before = self.server.authorizations().len();
        let mut env = vec![
            ("TIER1_FAKE_SPEEDUP", "2".to_string()),
            ("GITHUB_SERVER_URL", self.server.url.clone()),
        ];
        if let Some(t) = token {
            env.push(("GITHUB_TOKEN", t.to_string()));
        }
        let o = nightly_with(c, &env, &[]);
        let after = self.server.authorizations()[before..].to_vec();
        (o, after)
    }
}

fn block(c: &Repo, o: &Out) -> Value {
    let id = o.json["run_id"].as_str().expect("a run id");
    regression_summary(c, id)["side_by_side"].clone()
}

fn assert_compared(c: &Repo, o: &Out, requests: &[Vec<String>]) {
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let b = block(c, o);
    assert_eq!(b["enabled"], true, "{b}\n{}", o.stderr);
    assert!(
        !requests.is_empty(),
        "the anchor's commit was fetched over HTTP"
    );
    let expected = header()["AUTHORIZATION: ".len()..].to_string();
    for r in requests {
        assert_eq!(
            r,
            std::slice::from_ref(&expected),
            "exactly one Authorization, the job's: {requests:?}"
        );
    }
}

/// Nothing the night wrote or printed, and not the checkout's config, holds the token.
fn assert_never_written(c: &Repo, o: &Out) {
    let b64 = base64_of(&format!("x-access-token:{TOKEN}"));
    let config = std::fs::read_to_string(c.root.join(".git/config")).unwrap();
    for secret in [TOKEN, b64.as_str()] {
        assert!(!config.contains(secret), ".git/config: {config}");
        assert!(!o.stderr.contains(secret), "stderr: {}", o.stderr);
        assert!(!o.json.to_string().contains(secret), "stdout: {}", o.json);
        let summary = block(c, o).to_string();
        assert!(!summary.contains(secret), "{summary}");
    }
}

#[test]
fn the_job_s_token_fetches_the_anchor_s_commit_without_being_written_anywhere() {
    let w = world();
    let c = w.clone(false);
    let (o, requests) = w.night(&c, Some(TOKEN));
    assert_compared(&c, &o, &requests);
    assert_never_written(&c, &o);
}

#[test]
fn a_header_the_checkout_persisted_is_replaced_not_doubled_and_used_alone_without_a_token() {
    let w = world();
    let with_token = w.clone(true);
    let (o, requests) = w.night(&with_token, Some(TOKEN));
    assert_compared(&with_token, &o, &requests);
    let persisted_only = w.clone(true);
    let (o, requests) = w.night(&persisted_only, None);
    assert_compared(&persisted_only, &o, &requests);
}

#[test]
fn without_credentials_the_night_warns_naming_the_permission_to_grant() {
    let w = world();
    let c = w.clone(false);
    let (o, requests) = w.night(&c, None);
    assert!(!requests.is_empty(), "the fetch was tried");
    assert!(requests.iter().all(Vec::is_empty), "{requests:?}");
    let b = block(&c, &o);
    assert_eq!(b["enabled"], false, "{b}");
    let warning = b["warning"].as_str().unwrap_or_else(|| panic!("{b}"));
    assert!(warning.contains("no token was given"), "{warning}");
    assert!(warning.contains("contents: read"), "{warning}");
    assert!(warning.contains("fetch-depth: 0"), "{warning}");
    assert!(
        o.stderr.contains("side by side did not run"),
        "{}",
        o.stderr
    );
}
