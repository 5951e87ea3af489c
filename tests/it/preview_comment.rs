//! `tier1-compare comment` against the fake GitHub: the preview comment is created once and
//! updated in place on the next run (found by its marker and author, across pages), comments of
//! anyone else are never touched, a `POST` is never repeated while a `PATCH` is retried, and a
//! body that GitHub would refuse is refused before any request.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github;

use fake_github::{FakeGithub, Fault};
use serde_json::Value;
use std::path::Path;

const TOKEN: &str = "ghs_previewCommentTOKEN";
const REPO: &str = "octo/gpu";
const MARKER: &str = "<!-- tier1-preview -->";

struct World {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    fake: FakeGithub,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    tier1::store::local::LocalStore::create(&store, REPO).unwrap();
    let fake = FakeGithub::start(&store, TOKEN);
    World {
        dir: tmp.path().to_path_buf(),
        _tmp: tmp,
        fake,
    }
}

struct Out {
    code: i32,
    json: Value,
    stderr: String,
}

fn comment(w: &World, args: &[&str]) -> Out {
    comment_with_token(w, args, Some(TOKEN))
}

/// `tier1-compare comment` as a workflow step runs it (without a token when `token` is None).
fn comment_with_token(w: &World, args: &[&str], token: Option<&str>) -> Out {
    let mut cmd = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-compare"));
    match token {
        Some(t) => cmd.env("GITHUB_TOKEN", t),
        None => cmd.env_remove("GITHUB_TOKEN"),
    };
    let out = cmd
        .arg("comment")
        .args(args)
        .env("GITHUB_API_URL", w.fake.api_url())
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "4242")
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("TIER1_PR_NUMBER")
        .env_remove("TIER1_COMMENT_AUTHOR")
        .output()
        .expect("tier1-compare runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn body_file(w: &World, name: &str, text: &str) -> String {
    let p = w.dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Requests the fake received with this method.
fn sent(w: &World, method: &str) -> usize {
    w.fake
        .requests()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

/// One HTTP 502 answering the next request that matches `on` (`METHOD /path`).
fn bad_gateway_once(w: &World, on: String) {
    w.fake.inject(Fault::Status {
        on,
        status: 502,
        headers: vec![],
        times: 1,
    });
}

fn bodies(w: &World, pr: u64) -> Vec<(String, String)> {
    w.fake
        .comments(pr)
        .iter()
        .map(|c| {
            (
                c["user"]["login"].as_str().unwrap().to_string(),
                c["body"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_comment_is_created_once_then_updated_in_place() {
    let w = world();
    // Other people's comments, one of them quoting the marker, and a bot comment of another tool.
    w.fake
        .add_comment(7, "alice", &format!("{MARKER}\nquoting the preview"));
    w.fake
        .add_comment(7, "github-actions[bot]", "coverage: 93 %");
    let first = body_file(&w, "first.md", &format!("{MARKER}\n### first run\n"));
    let o = comment(&w, &["--pr", "7", "--body-file", &first]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json["action"], "created");
    assert_eq!(o.json["comments_listed"], 2);
    let id = o.json["comment_id"].as_u64().unwrap();
    assert!(
        o.json["html_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/pull/7#issuecomment-{id}"))
    );

    let second = body_file(&w, "second.md", &format!("{MARKER}\n### second run\n"));
    let o = comment(&w, &["--pr", "7", "--body-file", &second]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json["action"], "updated");
    assert_eq!(o.json["comment_id"].as_u64(), Some(id), "the same comment");
    assert_eq!(
        bodies(&w, 7),
        [
            ("alice".into(), format!("{MARKER}\nquoting the preview")),
            ("github-actions[bot]".into(), "coverage: 93 %".into()),
            (
                "github-actions[bot]".into(),
                format!("{MARKER}\n### second run\n")
            ),
        ],
        "one preview comment; nobody else's comment changed"
    );
    let posts = sent(&w, "POST");
    let patches = sent(&w, "PATCH");
    assert_eq!((posts, patches), (1, 1));
    // Another pull request gets its own comment.
    let o = comment(&w, &["--pr", "8", "--body-file", &first]);
    assert_eq!(o.json["action"], "created", "{}", o.stderr);
}

#[test]
fn the_comment_is_found_on_a_later_page() {
    let w = world();
    w.fake.set_max_per_page(10);
    let body = body_file(&w, "b.md", &format!("{MARKER}\n### run\n"));
    for i in 0..25 {
        w.fake.add_comment(3, "bob", &format!("comment {i}"));
    }
    let o = comment(&w, &["--pr", "3", "--body-file", &body]);
    assert_eq!(o.json["action"], "created", "{}", o.stderr);
    let o = comment(&w, &["--pr", "3", "--body-file", &body]);
    assert_eq!(o.json["action"], "updated", "{}", o.stderr);
    assert_eq!(o.json["comments_listed"], 26, "all three pages were read");
    assert_eq!(w.fake.comments(3).len(), 26);
}

#[test]
fn a_failed_preview_posts_its_notice_into_the_same_comment() {
    let w = world();
    let body = body_file(&w, "b.md", &format!("{MARKER}\n### run\n"));
    let o = comment(&w, &["--pr", "5", "--body-file", &body]);
    assert_eq!(o.json["action"], "created", "{}", o.stderr);
    let o = comment(&w, &["--pr", "5", "--preview-failed"]);
    assert_eq!(o.json["action"], "updated", "{}", o.stderr);
    let all = bodies(&w, 5);
    assert_eq!(all.len(), 1);
    assert!(
        all[0].1.starts_with(&format!(
            "{MARKER}\n### ⚠️ Tier-1 preview, not canonical: the preview did not complete"
        )),
        "{}",
        all[0].1
    );
    assert!(
        all[0]
            .1
            .contains("[the workflow run](https://github.com/octo/gpu/actions/runs/4242)")
    );
}

#[test]
fn a_create_is_sent_once_and_an_update_is_retried() {
    let w = world();
    let body = body_file(&w, "b.md", &format!("{MARKER}\n### run\n"));
    // A 502 answering the POST: reported (exit 9), not resent (it may have been created).
    bad_gateway_once(&w, format!("POST /repos/{REPO}/issues/9/comments"));
    let o = comment(&w, &["--pr", "9", "--body-file", &body]);
    assert_eq!(o.code, exit_code(Exit::Remote), "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("POST /repos/{REPO}/issues/9/comments: HTTP 502")),
        "{}",
        o.stderr
    );
    let posts = sent(&w, "POST");
    assert_eq!(posts, 1, "the POST was sent once");
    // The next run creates it; an update that meets a 502 is retried and succeeds.
    assert_eq!(
        comment(&w, &["--pr", "9", "--body-file", &body]).json["action"],
        "created"
    );
    bad_gateway_once(&w, format!("PATCH /repos/{REPO}/issues/comments/"));
    let o = comment(&w, &["--pr", "9", "--body-file", &body]);
    assert_eq!(o.json["action"], "updated", "{}", o.stderr);
    let patches = sent(&w, "PATCH");
    assert_eq!(patches, 2, "the PATCH was retried once");
    assert_eq!(w.fake.comments(9).len(), 1);
}

#[test]
fn bad_requests_are_refused_before_any_request() {
    let w = world();
    let long = body_file(&w, "long.md", &format!("{MARKER}\n{}", "x".repeat(65_536)));
    let unmarked = body_file(&w, "plain.md", "### no marker\n");
    let cases: [(Vec<&str>, i32, &str); 5] = [
        (
            vec!["--pr", "7", "--body-file", &long],
            3,
            "expected at most 65536 characters (GitHub's comment limit), found 65559",
        ),
        (
            vec!["--pr", "7", "--body-file", &unmarked],
            3,
            "expected the first line \"<!-- tier1-preview -->\"",
        ),
        (
            vec!["--pr", "0", "--preview-failed"],
            3,
            "--pr: expected a pull request number >= 1, found 0",
        ),
        (vec!["--pr", "7"], 2, "--body-file"),
        (
            vec!["--pr", "7", "--body-file", &unmarked, "--preview-failed"],
            2,
            "cannot be used with",
        ),
    ];
    for (args, code, message) in cases {
        let o = comment(&w, &args);
        assert_eq!(o.code, code, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(message), "{args:?}: {}", o.stderr);
    }
    assert!(w.fake.requests().is_empty(), "no request was sent");
    // A listing that cannot reach its last page: refused rather than risk a second comment.
    w.fake.inject(Fault::LinkLoop {
        on: "/issues/7/comments".into(),
    });
    let ok = body_file(&w, "looped.md", &format!("{MARKER}\n"));
    let o = comment(&w, &["--pr", "7", "--body-file", &ok]);
    assert_eq!(o.code, exit_code(Exit::Integrity), "{}", o.stderr);
    assert!(o.stderr.contains("incomplete listing"), "{}", o.stderr);
    assert!(
        w.fake.requests().iter().all(|r| r.method == "GET"),
        "nothing was posted"
    );
    assert!(w.fake.comments(7).is_empty());
    let gets = w.fake.requests().len();

    let missing = w.dir.join("missing.md");
    let o = comment(&w, &["--pr", "7", "--body-file", missing.to_str().unwrap()]);
    assert_eq!(o.code, exit_code(Exit::Io), "{}", o.stderr);
    assert_eq!(w.fake.requests().len(), gets, "no request was sent");
    assert!(Path::new(&long).is_file());

    // Without a token: a configuration error naming it, still no request.
    let ok = body_file(&w, "ok.md", &format!("{MARKER}\n"));
    let o = comment_with_token(&w, &["--pr", "7", "--body-file", &ok], None);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(o.stderr.contains("GITHUB_TOKEN is not set"), "{}", o.stderr);
    assert_eq!(w.fake.requests().len(), gets);
}
