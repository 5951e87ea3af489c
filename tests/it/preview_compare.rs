//! `tier1-compare run` against a local store: the canonical anchor is established by the real
//! `tier1-nightly`, then a preview measures the checkout (deterministic fixture targets) and
//! compares with that anchor. The store and the canonical history stay byte-identical, the outputs
//! say "preview, not canonical", the exit code is the nightly gate's, the comparison is the one
//! the nightly makes, and every refusal leaves every byte untouched.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use nightly_repo::{Repo, nightly, repo};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const REPOSITORY: &str = "local/store";

struct Out {
    code: i32,
    json: Value,
    stderr: String,
}

/// `tier1-compare run` in the checkout with the fixture target's speedup knob, the fixture suite.
fn compare(r: &Repo, speedup: f64, output: &Path, extra: &[&str]) -> Out {
    let mut args = vec!["--suite-config", "suite.yaml", "--profile", "smoke"];
    args.extend_from_slice(extra);
    compare_with(r, speedup, output, &args)
}

/// `tier1-compare run` in the checkout against its store with these arguments.
fn compare_with(r: &Repo, speedup: f64, output: &Path, args: &[&str]) -> Out {
    let out = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-compare"))
        .current_dir(&r.root)
        .env("TIER1_FAKE_SPEEDUP", speedup.to_string())
        .args([
            "run",
            "--store",
            "local:.tier1/store",
            "--repository",
            REPOSITORY,
        ])
        .arg("--output")
        .arg(output)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SHA")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("TIER1_DEFAULT_BRANCH")
        .output()
        .expect("tier1-compare runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// The canonical history as the next nightly restores it.
fn restored(r: &Repo) -> BTreeMap<PathBuf, Vec<u8>> {
    let dest = tempfile::tempdir().unwrap();
    let target = dest.path().join("h");
    let out = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
        .current_dir(&r.root)
        .args([
            "--store",
            "local:.tier1/store",
            "--repository",
            REPOSITORY,
            "--branch",
            "main",
        ])
        .arg("--destination")
        .arg(&target)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tree(&target)
}

/// A checkout with a bootstrapped anchor (speedup 2.0 on both targets).
fn anchored() -> Repo {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    r
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_regressing_preview_reports_it_and_writes_nothing_canonical() {
    let r = anchored();
    let store_before = tree(&r.root.join(".tier1/store"));
    let history_before = restored(&r);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("preview");

    // A 25 % speedup drop on both targets: the nightly would confirm it after rechecks.
    let o = compare(&r, 1.5, &out_dir, &["--branch", "main"]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["notice"], "preview, not canonical");
    assert_eq!(o.json["canonical"], false);
    assert_eq!(o.json["gate"]["passed"], false);
    assert_eq!(o.json["counts"]["regressions"], 2, "{}", o.json);
    assert_eq!(o.json["restore"]["status"], "restored");
    let anchor = o.json["anchor_run_id"].as_str().unwrap();
    assert_eq!(o.json["restore"]["anchor_run_id"], anchor);
    let rows = o.json["targets"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["verdict"], "regression", "{row}");
        assert_eq!(row["anchor"]["speedup"], 2.0);
        assert_eq!(row["current"]["speedup"], 1.5);
        assert_eq!(row["change"]["metric"], "speedup");
    }

    // Nothing canonical moved: the store's every byte, and the history the next night restores.
    assert_eq!(
        tree(&r.root.join(".tier1/store")),
        store_before,
        "the store changed"
    );
    assert_eq!(
        restored(&r),
        history_before,
        "the canonical history changed"
    );
    let status = nightly_repo::git(&r.root, &["status", "--porcelain"]);
    assert_eq!(status, "", "the checkout changed");

    // The outputs: exactly four files, each saying it is a preview.
    let files: Vec<String> = tree(&out_dir)
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "comment.md",
            "preview.json",
            "regression_summary.json",
            "regression_summary.md"
        ]
    );
    let comment = read(&out_dir.join("comment.md"));
    assert!(comment.starts_with("<!-- tier1-preview -->\n### ❌ Tier-1 preview, not canonical: the nightly gate would fail this commit\n"), "{comment}");
    assert!(
        comment.contains(
            "| `fixed_a` | 2.00× · 5.00 ms | 1.50× · 6.67 ms | -25.0 % speedup | ❌ regression |"
        ),
        "{comment}"
    );
    assert!(
        comment.contains(&format!("the `main` anchor `{anchor}`")),
        "{comment}"
    );
    assert!(comment.contains("<details><summary>Details</summary>"));
    let md = read(&out_dir.join("regression_summary.md"));
    assert!(
        md.starts_with("# Tier-1 Regression Summary (preview, not canonical)\n"),
        "{md}"
    );
    let preview: Value = serde_json::from_str(&read(&out_dir.join("preview.json"))).unwrap();
    assert_eq!(preview, o.json, "preview.json is the stdout object");

    // The same engine as the nightly: the regressions and rechecks the nightly records for the
    // same measurements against the same anchor.
    let cmp: Value = serde_json::from_str(&read(&out_dir.join("regression_summary.json"))).unwrap();
    let night = nightly(&r, 1.5, &[]);
    assert_eq!(night.code, exit_code(Exit::Gate), "{}", night.stderr);
    let night_id = night.json["run_id"].as_str().unwrap();
    let recorded: Value = serde_json::from_str(&read(
        &r.root
            .join(format!(".tier1/history/{night_id}/regression_summary.json")),
    ))
    .unwrap();
    assert_eq!(cmp["baseline_run_id"], recorded["baseline_run_id"]);
    assert_eq!(cmp["regressions"], recorded["regressions"]);
    assert_eq!(cmp["detection"]["method"], recorded["detection"]["method"]);
    let confirmed = |v: &Value| -> Vec<(Value, Value)> {
        v["rechecks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["target"].clone(), x["confirmed_regression"].clone()))
            .collect()
    };
    assert_eq!(confirmed(&cmp), confirmed(&recorded));
    assert_eq!(confirmed(&cmp).len(), 2);
}

#[test]
fn an_unchanged_preview_passes_with_exit_zero() {
    let r = anchored();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("preview");
    let o = compare(&r, 2.0, &out_dir, &["--branch", "main"]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["gate"]["passed"], true);
    assert_eq!(o.json["counts"]["unchanged"], 2);
    assert_eq!(o.json["comment_rows"], 2);
    let comment = read(&out_dir.join("comment.md"));
    assert!(
        comment.contains(
            "### ✅ Tier-1 preview, not canonical: the nightly gate would pass this commit"
        ),
        "{comment}"
    );
    // An output inside the checkout does not make it dirty (and is written there).
    let inside = compare(
        &r,
        2.0,
        Path::new("artifacts/preview"),
        &["--branch", "main"],
    );
    assert_eq!(inside.code, exit_code(Exit::Ok), "{}", inside.stderr);
    assert!(r.root.join("artifacts/preview/comment.md").is_file());
}

#[test]
fn refusals_measure_nothing_and_leave_every_byte_untouched() {
    let r = anchored();
    let store_before = tree(&r.root.join(".tier1/store"));
    let tmp = tempfile::tempdir().unwrap();

    // An output directory with files: exit 8 before anything runs.
    let busy = tmp.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "mine").unwrap();
    let o = compare(&r, 1.5, &busy, &["--branch", "main"]);
    assert_eq!(o.code, exit_code(Exit::Conflict), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "--output {}: expected an absent or empty directory",
            busy.display()
        )),
        "{}",
        o.stderr
    );
    assert_eq!(tree(&busy).len(), 1);

    // A branch without canonical history: exit 5, no bootstrap, no output.
    let none = tmp.path().join("none");
    let o = compare(&r, 2.0, &none, &["--branch", "feature"]);
    assert_eq!(o.code, exit_code(Exit::Unavailable), "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "restoring the canonical history of branch feature: No prior completed Tier-1 run"
        ),
        "{}",
        o.stderr
    );
    assert!(!none.exists());

    // A profile measured elsewhere than the anchor: refused, never compared (exit 3).
    let suite = tmp.path().join("suite-other.yaml");
    let text = read(&r.root.join("suite.yaml")).replace("  smoke:\n", "  other:\n");
    std::fs::write(
        &suite,
        text.replace("default_profile: smoke", "default_profile: other"),
    )
    .unwrap();
    let suite = suite.display().to_string();
    let args = [
        "--branch",
        "main",
        "--suite-config",
        &suite,
        "--profile",
        "other",
    ];
    let o = compare_with(&r, 2.0, &tmp.path().join("other"), &args);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("|other\" differs from the anchor's ") && o.stderr.contains("|smoke\""),
        "{}",
        o.stderr
    );
    assert!(!tmp.path().join("other").exists());

    // An empty branch is refused before anything runs.
    let o = compare(&r, 2.0, &tmp.path().join("x"), &["--branch", " "]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("--branch: expected the default branch"),
        "{}",
        o.stderr
    );

    // The branch is required (no fallback to the pull request's ref).
    let o = compare(&r, 2.0, &tmp.path().join("x"), &[]);
    assert_eq!(o.code, exit_code(Exit::Usage), "{}", o.stderr);
    assert!(o.stderr.contains("--branch"), "{}", o.stderr);

    assert_eq!(tree(&r.root.join(".tier1/store")), store_before);
    assert_eq!(nightly_repo::git(&r.root, &["status", "--porcelain"]), "");
}

#[test]
fn an_anchor_due_for_renewal_is_compared_and_noted_and_an_expired_one_refused() {
    let r = anchored();
    let tmp = tempfile::tempdir().unwrap();
    // Day 61: the nightly would need a protected renewal (exit 6); a preview still compares.
    let later = (chrono::Utc::now() + chrono::Duration::days(61)).to_rfc3339();
    let out_dir = tmp.path().join("late");
    let o = compare(&r, 2.0, &out_dir, &["--branch", "main", "--now", &later]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["restore"]["anchor_renewal_required"], true);
    let note = o.json["notes"][0].as_str().unwrap();
    assert!(note.contains("60 days old or more"), "{note}");
    assert!(read(&out_dir.join("comment.md")).contains(note));
    // Day 91: the anchor's evidence expired; restore fails closed and nothing is written.
    let expired = (chrono::Utc::now() + chrono::Duration::days(91)).to_rfc3339();
    let gone = tmp.path().join("gone");
    let o = compare(&r, 2.0, &gone, &["--branch", "main", "--now", &expired]);
    assert_eq!(o.code, exit_code(Exit::Unavailable), "{}", o.stderr);
    assert!(!gone.exists());
}
