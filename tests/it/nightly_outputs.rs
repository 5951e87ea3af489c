//! `tier1-nightly`'s output roots against a hostile or careless operator: `--history-out` (and
//! `--store`) that are, contain or lie inside the store, the checkout or the suite file are
//! refused before anything runs, naming both paths, with every byte of the store and the checkout
//! unchanged; an existing `--history-out` is replaced only when it is a previous history copy, and
//! a full disk during the copy leaves the previous copy whole. A work directory kept with
//! `--keep-work` stays until the operator removes it, and the output names it.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::faults::{assert_unchanged, count_points, nightly_at, runs, snapshot};
use crate::support::nightly_repo::{Repo, nightly, repo};
use std::path::Path;

/// A checkout whose store (`.tier1/store`) holds one published night, and a copy of it at
/// `.tier1/history`.
fn published() -> Repo {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    r
}

fn store_dir(r: &Repo) -> std::path::PathBuf {
    r.root.join(".tier1/store")
}

fn everything(r: &Repo) -> std::collections::BTreeMap<String, Vec<u8>> {
    snapshot(r.root.parent().unwrap())
}

#[test]
fn a_history_out_over_the_store_or_the_checkout_is_refused_before_anything_runs() {
    let r = published();
    let before = everything(&r);
    for (out, collides) in [
        (".tier1/store", "local store"),
        (".tier1/store/artifacts", "local store"),
        (".tier1/store/locks/x", "local store"),
        (".tier1", "local store"),
        (".", "checkout"),
        ("..", "checkout"),
        (".git/history", "git directory"),
        ("suite.yaml", "suite file"),
    ] {
        let o = nightly_at(&r, &store_dir(&r), &[], &["--history-out", out]);
        assert_eq!(
            o.code,
            exit_code(Exit::Invalid),
            "--history-out {out}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains("--history-out") && o.stderr.contains(collides),
            "--history-out {out}: {}",
            o.stderr
        );
        let store = r.root.join(".tier1/store").canonicalize().unwrap();
        if collides == "local store" {
            assert!(
                o.stderr.contains(&store.display().to_string())
                    || o.stderr.contains(".tier1/store"),
                "names the store: {}",
                o.stderr
            );
        }
        assert_unchanged(
            &before,
            r.root.parent().unwrap(),
            &format!("--history-out {out} changed bytes"),
        );
    }
    assert!(r.root.join(".git").is_dir());
}

#[test]
fn a_store_that_is_or_holds_the_checkout_is_refused() {
    let r = published();
    let before = everything(&r);
    for store in [".", ".."] {
        let o = nightly_at(&r, Path::new(store), &[], &[]);
        assert_eq!(
            o.code,
            exit_code(Exit::Invalid),
            "--store {store}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains("--store") && o.stderr.contains("checkout"),
            "{}",
            o.stderr
        );
        assert_unchanged(
            &before,
            r.root.parent().unwrap(),
            &format!("--store {store} changed bytes"),
        );
    }
}

#[test]
fn a_history_out_that_is_not_a_previous_copy_is_never_replaced() {
    let r = published();
    let outside = r.root.parent().unwrap();
    let keep = outside.join("notes");
    std::fs::create_dir_all(keep.join("sub")).unwrap();
    std::fs::write(keep.join("sub/mine.txt"), b"mine").unwrap();
    std::fs::write(outside.join("a-file"), b"a file").unwrap();
    let victim = outside.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("index.json"), b"{}").unwrap();
    std::os::unix::fs::symlink(&victim, outside.join("link")).unwrap();
    let runs_before = runs(&r.root.join(".tier1/store"));
    let before = everything(&r);
    for (out, code, says) in [
        ("notes", 8, "not a previous copy of a tier1 history"),
        ("a-file", 8, "not a directory"),
        ("link", 8, "symbolic link"),
    ] {
        let o = nightly_at(
            &r,
            &store_dir(&r),
            &[],
            &["--history-out", &format!("../{out}")],
        );
        assert_eq!(
            o.code, code,
            "--history-out {out}: {}\n{}",
            o.json, o.stderr
        );
        assert!(o.stderr.contains(says), "--history-out {out}: {}", o.stderr);
        assert_unchanged(
            &before,
            r.root.parent().unwrap(),
            &format!("--history-out {out} changed bytes"),
        );
    }
    assert_eq!(
        runs_before,
        runs(&r.root.join(".tier1/store")),
        "no run recorded"
    );
    // The previous copy, by contrast, is replaced by the new night's.
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let index = std::fs::read_to_string(r.root.join(".tier1/history/index.json")).unwrap();
    assert_eq!(index.matches("\"run_id\"").count(), 2, "{index}");
}

#[test]
fn a_full_disk_while_copying_the_history_out_keeps_the_previous_copy() {
    let r = published();
    let store = r.root.join(".tier1/store");
    let copy = r.root.join(".tier1/history");
    let points = count_points(&r, &store, &["--history-out", ".tier1/history"]);
    let writes: Vec<&(String, String)> = points.iter().filter(|(p, _)| p == "write").collect();
    let nth = writes
        .iter()
        .position(|(_, path)| path.contains(".tier1-historyout-"))
        .expect("the copy's writes are counted")
        + 1;
    let before = snapshot(&copy);
    let o = nightly_at(
        &r,
        &store,
        &[("TIER1_FAULT", format!("write:{nth}:enospc"))],
        &["--history-out", ".tier1/history"],
    );
    assert_eq!(
        o.code,
        exit_code(Exit::DiskFull),
        "{}\n{}",
        o.json,
        o.stderr
    );
    assert!(
        o.stderr.contains("--history-out") && o.stderr.contains(".tier1/history"),
        "names the destination: {}",
        o.stderr
    );
    assert_unchanged(&before, &copy, "the previous copy is whole");
    let leftovers: Vec<String> = std::fs::read_dir(r.root.join(".tier1"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tier1-"))
        .collect();
    assert!(leftovers.is_empty(), "staging left behind: {leftovers:?}");
}

/// Issue 36: `--keep-work` keeps the job's work directory for good. It used to stay under the
/// store with its temporary name (`.work-<run>-p<pid>-…`), so the next night collected it as the
/// leftover of a killed job; it must survive later nights and be named in the JSON output and on
/// stderr (docs/tier1-nightly.md says until when and how to remove it).
#[test]
fn a_kept_work_directory_survives_later_nights_and_is_named() {
    let r = repo();
    let first = nightly(&r, 2.0, &["--keep-work"]);
    assert_eq!(first.code, exit_code(Exit::Ok), "{}", first.stderr);
    let kept = first.json["kept_work"]
        .as_str()
        .unwrap_or_else(|| panic!("the kept work directory is not named: {}", first.json));
    let kept = r.root.join(kept);
    assert!(kept.is_dir(), "{}", kept.display());
    assert!(
        first.stderr.contains(&kept.display().to_string())
            || first
                .stderr
                .contains(first.json["kept_work"].as_str().unwrap()),
        "{}",
        first.stderr
    );
    let inside: Vec<_> = std::fs::read_dir(&kept).unwrap().collect();
    assert!(!inside.is_empty(), "the kept work directory is empty");
    // Later nights, without the flag, leave it in place.
    for _ in 0..2 {
        let later = nightly(&r, 2.0, &[]);
        assert_eq!(later.code, exit_code(Exit::Ok), "{}", later.stderr);
        assert!(later.json["kept_work"].is_null(), "{}", later.json);
        assert!(
            kept.is_dir(),
            "a later night collected the kept work directory: {}",
            later.stderr
        );
    }
}
