//! The local night across compaction: `tier1-nightly` publishes (and `--accept` promotes) the
//! nights whose package seals runs into `segments/*.tar.gz`, stores them in the store's vault,
//! and the next nights' packages carry only their records; restore takes what it published.
//! With `thresholds.history_window: 2` the live tail is 10 runs and compaction starts past 30
//! live runs, so the fixture suite's 31st night is the first to write a segment.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{self, Repo, git};
use std::path::Path;

/// The fixture repository with a detection window of two runs, committed.
fn small_window_repo() -> Repo {
    let r = nightly_repo::repo();
    let suite = r.root.join("suite.yaml");
    let mut text = std::fs::read_to_string(&suite).expect("suite");
    text.push_str("thresholds:\n  history_window: 2\n");
    std::fs::write(&suite, text).expect("suite");
    git(&r.root, &["commit", "-qam", "window 2"]);
    r
}

fn segments(history: &Path) -> Vec<String> {
    let dir = history.join("segments");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn nights_that_compact_their_history_publish_and_promote_it() {
    let r = small_window_repo();
    let history = r.root.join(".tier1/history");
    let mut night = 0;
    while segments(&history).is_empty() {
        night += 1;
        assert!(night <= 40, "no night compacted the history in 40 nights");
        let out = nightly_repo::nightly(&r, 2.0, &[]);
        assert_eq!(
            out.code,
            exit_code(Exit::Ok),
            "night {night} (the first that compacts is about the 31st): {}",
            out.stderr
        );
    }
    assert!(night >= 20, "compaction started after only {night} nights");
    // The next night publishes on top of the compacted history, and a reviewed acceptance
    // promotes through it too.
    let out = nightly_repo::nightly(&r, 2.0, &[]);
    assert_eq!(out.code, exit_code(Exit::Ok), "{}", out.stderr);
    let out = nightly_repo::nightly(
        &r,
        2.0,
        &["--accept", "--note", "renew the anchor across compaction"],
    );
    assert_eq!(out.code, exit_code(Exit::Ok), "{}", out.stderr);
    // The compacting night stored its segments in the store's vault; every later restore left
    // them out of the package, which keeps their records (and lists them as vaulted).
    let idx = index(&history);
    let records: Vec<String> = idx["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !records.is_empty(),
        "the promoted history lost its segments"
    );
    assert_eq!(idx["vaulted"], serde_json::json!(records), "{idx}");
    assert!(
        segments(&history).is_empty(),
        "the vaulted archives stay out of the package"
    );
    let vault = r.root.join(".tier1/store/vault");
    let objects = std::fs::read_dir(&vault)
        .expect("the store's vault")
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(objects, records.len(), "one vault object per segment");
    // What was published, restore takes.
    let dest = r.root.join(".tier1/restored");
    let restored = crate::support::command::scrubbed(crate::support::command::bin("tier1-restore"))
        .current_dir(&r.root)
        .args([
            "--store",
            "local:.tier1/store",
            "--repository",
            "local/store",
        ])
        .args(["--branch", "main", "--destination"])
        .arg(&dest)
        .output()
        .expect("tier1-restore runs");
    assert_eq!(
        restored.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    assert_eq!(segments(&dest), segments(&history));
    assert_eq!(index(&dest)["segments"], idx["segments"]);
}

fn index(root: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).expect("json")
}
