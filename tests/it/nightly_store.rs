//! The local store's bookkeeping against loss, tampering and kills: a lost `store.json` or a
//! rewound counter is refused (never a new store over existing artifacts, never an id handed out
//! twice), no store or lock file is opened through a symbolic link, a night killed after its history
//! was uploaded is not lost (the next run completes the abandoned run and restores that history),
//! the temporary files of killed jobs are collected, and two first nights started together are both
//! published.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::faults::{
    artifact_names, assert_unchanged, count_points, nightly_at, runs, snapshot, store_state,
};
use crate::support::nightly_repo::{Repo, nightly, repo};
use std::path::PathBuf;

fn store(r: &Repo) -> PathBuf {
    r.root.join(".tier1/store")
}

/// A checkout whose store holds `n` published nights (the first one the automatic bootstrap).
fn with_nights(n: usize) -> Repo {
    let r = repo();
    for _ in 0..n {
        let o = nightly(&r, 2.0, &[]);
        assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    }
    r
}

fn history_rows(r: &Repo) -> usize {
    let index = std::fs::read_to_string(r.root.join(".tier1/history/index.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&index).unwrap()["runs"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn a_lost_store_json_is_refused_and_no_artifact_is_overwritten() {
    let r = with_nights(2);
    std::fs::remove_file(store(&r).join("store.json")).unwrap();
    let before = snapshot(&store(&r));
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(
        o.code,
        exit_code(Exit::Integrity),
        "{}\n{}",
        o.json,
        o.stderr
    );
    assert!(
        o.stderr.contains("store.json") && o.stderr.contains("artifacts/1.bin"),
        "names the missing file and what it would overwrite: {}",
        o.stderr
    );
    assert_unchanged(&before, &store(&r), "the store is untouched");
}

#[test]
fn a_rewound_counter_is_refused_and_no_artifact_is_overwritten() {
    for (field, says) in [
        ("next_artifact_id", "next_artifact_id"),
        ("next_run_id", "next_run_id"),
    ] {
        let r = with_nights(1);
        let path = store(&r).join("store.json");
        let mut state = store_state(&store(&r));
        state[field] = serde_json::json!(1);
        std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
        let before = snapshot(&store(&r));
        let o = nightly(&r, 2.0, &[]);
        assert_eq!(
            o.code,
            exit_code(Exit::Integrity),
            "{field}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains(says) && o.stderr.contains("rewound"),
            "{field}: {}",
            o.stderr
        );
        assert_unchanged(
            &before,
            &store(&r),
            &format!("{field}: the store is untouched"),
        );
    }
}

#[test]
fn no_store_or_lock_file_is_opened_through_a_symbolic_link() {
    for link in [
        "locks/tier1-nightly-producer.lock",
        "locks/tier1-history-publication.lock",
        "store.lock",
        "store.json",
        "artifacts/9.bin",
    ] {
        let r = with_nights(1);
        let victim = r.root.parent().unwrap().join("victim.txt");
        std::fs::write(&victim, b"precious bytes").unwrap();
        let at = store(&r).join(link);
        if at.exists() {
            std::fs::remove_file(&at).unwrap();
        }
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &at).unwrap();
        let before = snapshot(&store(&r));
        let o = nightly(&r, 2.0, &[]);
        assert_eq!(
            o.code,
            exit_code(Exit::Integrity),
            "{link}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains("symbolic link") && o.stderr.contains(link),
            "{link}: {}",
            o.stderr
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious bytes", "{link}");
        assert_unchanged(
            &before,
            &store(&r),
            &format!("{link}: the store is untouched"),
        );
    }
}

#[test]
fn a_store_pointed_at_another_directory_is_refused_untouched() {
    let r = repo();
    let other = r.root.parent().unwrap().join("photos");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), b"meow").unwrap();
    let before = snapshot(&other);
    let o = nightly_at(&r, &other, &[], &[]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert!(o.stderr.contains("cat.jpg"), "{}", o.stderr);
    assert_unchanged(&before, &other, "unchanged");
}

#[test]
fn a_night_killed_after_its_history_upload_is_not_lost() {
    let r = with_nights(1);
    let points = count_points(&r, &store(&r), &[]);
    // The last write of a night is complete_run's store.json: the history is uploaded by then.
    let last_write = points.iter().filter(|(p, _)| p == "write").count();
    let o = nightly_at(
        &r,
        &store(&r),
        &[("TIER1_FAULT", format!("write:{last_write}:kill"))],
        &[],
    );
    assert_eq!(o.code, -1, "killed: {}\n{}", o.json, o.stderr);
    let killed = runs(&store(&r)).last().unwrap().clone();
    assert_eq!(killed.1, "in_progress");
    assert!(
        artifact_names(&store(&r)).contains(&format!("tier1-history-{}-1-publication-1", killed.0))
    );
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(
        o.json["restore"]["workflow_run_id"], killed.0,
        "the killed night's history is restored: {}",
        o.json
    );
    assert_eq!(history_rows(&r), 3, "both nights are in the history");
    let after = runs(&store(&r));
    assert!(
        after.iter().all(|(_, status, _)| status == "completed"),
        "{after:?}"
    );
    assert_eq!(after[killed.0 as usize - 1].2, "failure", "{after:?}");
}

#[test]
fn temporary_files_of_killed_jobs_are_collected_by_the_next_run() {
    let r = with_nights(1);
    let tmp = r.root.parent().unwrap().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let leftovers = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".work-") || n.starts_with(".tier1-"))
            .collect()
    };
    // Kill once inside the candidate upload (the store), then once inside the evidence packing
    // (TMPDIR); each killed job leaves its work files, the next job collects the previous ones.
    for (marker, dir) in [(".tier1-upload-", store(&r)), (".tier1-pack-", tmp.clone())] {
        // Counted again each time: the next job first completes the killed one (one more write).
        let points = count_points(&r, &store(&r), &[]);
        let writes: Vec<&(String, String)> = points.iter().filter(|(p, _)| p == "write").collect();
        let nth = writes.iter().position(|(_, p)| p.contains(marker)).unwrap() + 1;
        let o = nightly_at(
            &r,
            &store(&r),
            &[
                ("TIER1_FAULT", format!("write:{nth}:kill")),
                ("TMPDIR", tmp.display().to_string()),
            ],
            &[],
        );
        assert_eq!(o.code, -1, "{marker}: {}", o.stderr);
        let left = leftovers(&dir);
        assert!(
            left.iter().any(|n| n.starts_with(marker)),
            "{marker}: the kill left its files: {left:?}"
        );
        assert!(
            leftovers(&store(&r))
                .iter()
                .any(|n| n.starts_with(".work-")),
            "{marker}: the kill left its work directory"
        );
    }
    let o = nightly_at(
        &r,
        &store(&r),
        &[("TMPDIR", tmp.display().to_string())],
        &[],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(leftovers(&store(&r)), Vec::<String>::new());
    assert_eq!(
        leftovers(&store(&r).join("artifacts")),
        Vec::<String>::new()
    );
    assert_eq!(leftovers(&tmp), Vec::<String>::new());
}

#[test]
fn two_first_nights_a_tenth_of_a_second_apart_are_both_published() {
    let r = repo();
    let start = || {
        crate::support::command::scrubbed(crate::support::command::bin("tier1-nightly"))
            .current_dir(&r.root)
            .args(["--store", ".tier1/store", "--suite-config", "suite.yaml"])
            .args(["--profile", "smoke"])
            .env("TIER1_FAKE_SPEEDUP", "2")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = start();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let b = start();
    for (name, child) in [("first", a), ("second", b)] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(exit_code(Exit::Ok)),
            "{name}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let names = artifact_names(&store(&r));
    let histories = names
        .iter()
        .filter(|n| n.starts_with("tier1-history-"))
        .count();
    assert_eq!(histories, 2, "{names:?}");
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(
        history_rows(&r),
        3,
        "both first nights and this one are in the history"
    );
}
