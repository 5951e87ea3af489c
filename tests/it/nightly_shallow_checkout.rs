//! Side by side on the checkout GitHub's default `actions/checkout` makes (issue 36, N1): a depth-1
//! clone without tags holds the night's commit only, never the anchor's. The night fetches that
//! one commit from the checkout's remote and confirms a committed slowdown side by side; when it
//! cannot (no remote, the remote cannot be reached, the commit gone from it), it says so loudly —
//! a `::warning::` annotation, the step summary and the record's `side_by_side.warning`, naming
//! the reason and the remedy — never a silent fallback to the history test.

use crate::nightly_side_by_side::{bootstrap, checkout, commit_baseline_ms, regression_summary};
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{Out, Repo, git, nightly_with, shallow_clone};
use serde_json::Value;

/// A night of the shallow clone `s` with the fixture's 2x speedup and `env` on top.
fn night(s: &Repo, env: &[(&str, String)]) -> Out {
    let mut knobs = vec![("TIER1_FAKE_SPEEDUP", "2".to_string())];
    knobs.extend(env.iter().cloned());
    nightly_with(s, &knobs, &[])
}

/// The side-by-side block of the night `o` ran in `s`.
fn block(s: &Repo, o: &Out) -> Value {
    let id = o.json["run_id"].as_str().expect("a run id");
    regression_summary(s, id)["side_by_side"].clone()
}

/// A repository whose anchor is one commit behind a committed 30 % slowdown, and a depth-1 clone
/// of it (the anchor's commit not in the clone).
fn anchored_then_slowed() -> (Repo, String, Repo) {
    let r = checkout("");
    let anchor = git(&r.root, &["rev-parse", "HEAD"]);
    bootstrap(&r);
    commit_baseline_ms(&r, "13");
    let s = shallow_clone(&r);
    let missing = std::process::Command::new("git")
        .args(["cat-file", "-e", &format!("{anchor}^{{commit}}")])
        .current_dir(&s.root)
        .status()
        .unwrap();
    assert!(
        !missing.success(),
        "the clone must lack the anchor's commit"
    );
    (r, anchor, s)
}

#[test]
fn a_shallow_checkout_fetches_the_anchor_s_commit_and_confirms_a_committed_slowdown() {
    let (_r, anchor, s) = anchored_then_slowed();
    let config_before = std::fs::read(s.root.join(".git/config")).unwrap();
    let o = night(&s, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let b = block(&s, &o);
    assert_eq!(b["enabled"], true, "{b}\n{}", o.stderr);
    assert_eq!(b["anchor_commit"], anchor.as_str());
    assert!(b.get("warning").is_none(), "{b}");
    let checks = b["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{b}");
    for c in checks {
        assert_eq!(c["verdict"], "worse", "{c}");
    }
    // Only the anchor's commit was fetched (depth 1): the checkout stays as it was otherwise.
    assert_eq!(git(&s.root, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read(s.root.join(".git/config")).unwrap(),
        config_before,
        "the checkout's git config is unchanged"
    );
    assert_eq!(git(&s.root, &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(git(&s.root, &["rev-list", "--count", &anchor]), "1");
}

/// In Actions: the `::warning::` line, the step summary and the record each name the reason and
/// the remedy.
fn assert_warned(o: &Out, b: &Value, summary: &str, reason: &str) {
    assert_eq!(b["enabled"], false, "{b}");
    let warning = b["warning"].as_str().unwrap_or_else(|| panic!("{b}"));
    assert!(warning.contains(reason), "{warning}");
    assert!(warning.contains("fetch-depth: 0"), "{warning}");
    let annotation = o
        .stderr
        .lines()
        .find(|l| l.starts_with("::warning::") && l.contains("side by side"))
        .unwrap_or_else(|| panic!("no warning annotation:\n{}", o.stderr));
    assert!(annotation.contains(reason), "{annotation}");
    assert!(summary.contains("side by side did not run"), "{summary}");
    assert!(summary.contains(reason), "{summary}");
}

fn in_actions(s: &Repo) -> (Vec<(&'static str, String)>, std::path::PathBuf) {
    let summary = s.root.join(".tier1/step-summary.md");
    std::fs::create_dir_all(summary.parent().unwrap()).unwrap();
    std::fs::write(&summary, "").unwrap();
    (
        vec![
            ("GITHUB_ACTIONS", "true".to_string()),
            ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ],
        summary,
    )
}

#[test]
fn an_anchor_commit_the_remote_cannot_serve_is_a_warning_naming_the_reason_and_the_remedy() {
    let (_r, _anchor, s) = anchored_then_slowed();
    git(
        &s.root,
        &[
            "remote",
            "set-url",
            "origin",
            "file:///nonexistent/tier1.git",
        ],
    );
    let (env, summary) = in_actions(&s);
    let o = night(&s, &env);
    assert_ne!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    let b = block(&s, &o);
    let summary = std::fs::read_to_string(summary).unwrap();
    assert_warned(&o, &b, &summary, "could not fetch");
}

#[test]
fn a_checkout_without_a_remote_is_a_warning_naming_the_reason_and_the_remedy() {
    let (_r, _anchor, s) = anchored_then_slowed();
    git(&s.root, &["remote", "remove", "origin"]);
    let (env, summary) = in_actions(&s);
    let o = night(&s, &env);
    let b = block(&s, &o);
    let summary = std::fs::read_to_string(summary).unwrap();
    assert_warned(&o, &b, &summary, "has no remote");
}

#[test]
fn an_anchor_commit_gone_from_the_remote_is_a_warning_that_a_new_anchor_is_needed() {
    let (_r, _anchor, s) = anchored_then_slowed();
    // The remote no longer holds the anchor's commit (history rewritten): another repository.
    let other = tempfile::tempdir().unwrap();
    git(other.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(other.path().join("f"), "rewritten").unwrap();
    git(other.path(), &["add", "f"]);
    git(other.path(), &["commit", "-q", "-m", "rewritten history"]);
    let url = format!("file://{}", other.path().display());
    git(&s.root, &["remote", "set-url", "origin", &url]);
    let (env, summary) = in_actions(&s);
    let o = night(&s, &env);
    let b = block(&s, &o);
    let summary = std::fs::read_to_string(summary).unwrap();
    assert_warned(&o, &b, &summary, "the remote does not have it");
    let warning = b["warning"].as_str().unwrap();
    assert!(warning.contains("accept a new anchor"), "{warning}");
}
