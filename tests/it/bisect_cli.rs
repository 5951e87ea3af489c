//! `tier1-bisect` over synthetic histories (computed samples, so the verdicts do not depend on the
//! machine's load): it finds the culprit of 16 commits in at most 5 builds, steps around an
//! unbuildable commit, reports suspects when a skip leaves the culprit open (exit 1), and refuses
//! a bad request (exit 3), an occupied output directory (exit 8) or an unusable good commit
//! (exit 5) with a message, writing nothing and leaving the repository as it was.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::synthetic_history::{self as sh, History, Spec};
use serde_json::Value;
use std::path::Path;

/// `commits` synthetic commits of which `culprit` doubles the work.
pub fn spec(commits: usize, culprit: usize) -> Spec {
    Spec {
        commits,
        culprit: Some(culprit),
        factor: 2.0,
        unbuildable: Vec::new(),
        crashing: Vec::new(),
        timed: false,
        noise: 0.0,
    }
}

/// A finished `tier1-bisect`.
pub struct Run {
    pub code: i32,
    pub json: Value,
    pub stderr: String,
}

/// `tier1-bisect` of `good..bad` of `h` for the target `loop`, its cache `<h>/cache`.
pub fn bisect(h: &History, good: &str, bad: &str, out: &Path, extra: &[&str]) -> Run {
    let o = command::scrubbed(command::bin("tier1-bisect"))
        .args([
            "--good",
            good,
            "--bad",
            bad,
            "--target",
            "loop",
            "--profile",
            "cpu",
        ])
        .arg("--repo-root")
        .arg(&h.repo)
        .arg("--cache-dir")
        .arg(h.tmp.path().join("cache"))
        .arg("--output-dir")
        .arg(out)
        .args(["--budget-s", "30"])
        .args(extra)
        .output()
        .expect("tier1-bisect runs");
    Run {
        code: o.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn the_culprit_of_sixteen_commits_is_found_in_at_most_five_builds() {
    let h = sh::create(&spec(16, 11));
    let before = sh::state(&h.repo);
    let out = h.tmp.path().join("out");
    let summary = h.tmp.path().join("summary.md");
    let o = command::scrubbed(env!("CARGO_BIN_EXE_tier1-bisect"))
        .args([
            "--good",
            &h.commits[0],
            "--bad",
            &h.commits[15],
            "--target",
            "loop",
        ])
        .arg("--repo-root")
        .arg(&h.repo)
        .arg("--cache-dir")
        .arg(h.tmp.path().join("cache"))
        .arg("--output-dir")
        .arg(&out)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{stderr}");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["status"], "found", "{r:#}");
    assert_eq!(r["culprit"], h.commits[11].as_str());
    assert_eq!(r["culprit_subject"], "commit 11: the culprit (work x2)");
    assert_eq!(r["commits_in_range"], 15);
    let steps = r["steps"].as_array().unwrap();
    assert!(steps.len() <= 4, "{r:#}");
    assert!(r["builds"].as_u64().unwrap() <= 5, "{r:#}");
    for s in steps {
        let i = h
            .commits
            .iter()
            .position(|c| s["commit"] == c.as_str())
            .unwrap();
        assert_eq!(s["mark"], if i >= 11 { "bad" } else { "good" }, "{s:#}");
        assert!(
            out.join(s["evidence"].as_str().unwrap())
                .join("loop/outcome.json")
                .exists()
        );
    }
    let written: Value =
        serde_json::from_slice(&std::fs::read(out.join("bisect.json")).unwrap()).unwrap();
    assert_eq!(written, r);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains(&format!(
            "First commit that shows the change: **`{}`**",
            h.commits[11]
        )),
        "{md}"
    );
    assert_eq!(sh::state(&h.repo), before, "history is only read");
}

/// Issue 36: a depth-1 clone (GitHub's default checkout) lacks the good commit and every commit
/// between: bisect fetches the good commit from the clone's remote and deepens the bad commit's
/// history only until the good one is on its first-parent chain.
#[test]
fn a_depth_1_clone_gets_the_range_it_bisects_from_its_remote() {
    let h = sh::create(&spec(8, 5));
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("clone");
    sh::git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", h.repo.display()),
            clone.to_str().unwrap(),
        ],
    );
    assert_eq!(sh::git(&clone, &["rev-list", "--count", "HEAD"]), "1");
    let shallow = History {
        tmp,
        repo: clone,
        commits: h.commits.clone(),
    };
    let out = shallow.tmp.path().join("out");
    let o = bisect(&shallow, &h.commits[0], &h.commits[7], &out, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json["culprit"], h.commits[5].as_str(), "{:#}", o.json);
    let depth: usize = sh::git(&shallow.repo, &["rev-list", "--count", "HEAD"])
        .parse()
        .unwrap();
    assert!(depth <= h.commits.len(), "deepened to {depth}");
}

#[test]
fn an_unbuildable_commit_is_skipped_as_git_bisect_does() {
    let h = sh::create(&Spec {
        unbuildable: vec![4],
        ..spec(8, 6)
    });
    let out = h.tmp.path().join("out");
    let r = bisect(&h, &h.commits[0], &h.commits[7], &out, &[]);
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(r.json["culprit"], h.commits[6].as_str(), "{:#}", r.json);
    let skipped: Vec<&Value> = r.json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["mark"] == "skip")
        .collect();
    assert_eq!(skipped.len(), 1, "{:#}", r.json);
    assert_eq!(skipped[0]["commit"], h.commits[4].as_str());
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("this commit does not build")
    );

    // The culprit's parent cannot be built: both remain suspects, exit 1.
    let h = sh::create(&Spec {
        unbuildable: vec![4],
        ..spec(8, 5)
    });
    let r = bisect(
        &h,
        &h.commits[0],
        &h.commits[7],
        &h.tmp.path().join("out"),
        &[],
    );
    assert_eq!(r.code, exit_code(Exit::Gate), "{}", r.stderr);
    assert_eq!(r.json["status"], "ambiguous");
    assert_eq!(r.json["culprit"], Value::Null);
    assert_eq!(
        r.json["suspects"],
        serde_json::json!([h.commits[4], h.commits[5]])
    );
}

#[test]
fn bad_requests_are_refused_with_a_message_and_nothing_written() {
    let h = sh::create(&Spec {
        unbuildable: vec![0],
        ..spec(3, 2)
    });
    let before = sh::state(&h.repo);
    let out = h.tmp.path().join("out");
    let missing = "0123456789abcdef0123456789abcdef01234567";
    for (good, bad, want) in [
        (
            missing,
            h.commits[2].as_str(),
            "--good: commit \"0123456789abcdef0123456789abcdef01234567\" is not in the repository",
        ),
        (
            h.commits[2].as_str(),
            h.commits[1].as_str(),
            "to be an ancestor of the bad commit",
        ),
        (
            h.commits[1].as_str(),
            h.commits[1].as_str(),
            "found the same commit",
        ),
    ] {
        let r = bisect(&h, good, bad, &out, &[]);
        assert_eq!(r.code, exit_code(Exit::Invalid), "{}", r.stderr);
        assert!(r.stderr.contains(want), "{want:?} not in {}", r.stderr);
        assert!(!out.exists());
    }
    let plain = tempfile::tempdir().unwrap();
    let o = command::scrubbed(env!("CARGO_BIN_EXE_tier1-bisect"))
        .args([
            "--good",
            "HEAD~1",
            "--bad",
            "HEAD",
            "--target",
            "loop",
            "--profile",
            "cpu",
        ])
        .arg("--suite-config")
        .arg(h.repo.join("configs/benchmark_suites/synthetic.yaml"))
        .arg("--repo-root")
        .arg(plain.path())
        .arg("--output-dir")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Invalid)), "{stderr}");
    assert!(stderr.contains("expected a git repository"), "{stderr}");
    assert!(!out.exists());

    // An occupied output directory: exit 8, its file untouched.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "mine").unwrap();
    let r = bisect(&h, &h.commits[1], &h.commits[2], &out, &[]);
    assert_eq!(r.code, exit_code(Exit::Conflict), "{}", r.stderr);
    assert!(
        r.stderr.contains("expected an absent or empty directory"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(out.join("mine.txt")).unwrap(),
        "mine"
    );

    // The good commit does not build: nothing to compare with, exit 5.
    let out2 = h.tmp.path().join("out2");
    let r = bisect(&h, &h.commits[0], &h.commits[2], &out2, &[]);
    assert_eq!(r.code, exit_code(Exit::Unavailable), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "the good commit {} cannot serve as the reference",
            h.commits[0]
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("this commit does not build"),
        "{}",
        r.stderr
    );
    assert!(!out2.exists(), "no partial output");
    assert_eq!(sh::state(&h.repo), before);
}

#[test]
fn a_too_noisy_commit_is_measured_once_more_then_skipped() {
    // Computed samples with a per-invocation factor of up to e^±0.5, at most 12 rounds (24 on
    // the second attempt): the unchanged commit cannot be decided, so it stays a suspect.
    let h = sh::create(&Spec {
        noise: 0.5,
        ..spec(3, 2)
    });
    let r = bisect(
        &h,
        &h.commits[0],
        &h.commits[2],
        &h.tmp.path().join("out"),
        &["--max-rounds", "12"],
    );
    assert_eq!(r.code, exit_code(Exit::Gate), "{}", r.stderr);
    let steps = r.json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{:#}", r.json);
    assert_eq!(
        (steps[0]["mark"].as_str(), steps[0]["attempts"].as_u64()),
        (Some("skip"), Some(2))
    );
    assert!(steps[0]["evidence"].as_str().unwrap().ends_with("-again"));
    assert!(
        steps[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("too noisy")
    );
    assert_eq!(r.json["builds"], 2, "the second measurement built nothing");
    assert_eq!(
        r.json["suspects"],
        serde_json::json!([h.commits[1], h.commits[2]])
    );
}
