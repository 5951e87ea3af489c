//! Unit tests of `local` (the parent module).
use super::*;
use crate::digest::Digest;
use crate::store::local_check::{LOCK_FILE, STATE_FILE};
use crate::store::local_lease;
use crate::store::{ArtifactStore, StoreError};
use chrono::{DateTime, Duration, Utc};
use std::fs;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn t0() -> DateTime<Utc> {
    "2026-08-16T03:15:00Z".parse().unwrap()
}

#[test]
fn runs_artifacts_and_expiry() {
    let d = tempfile::tempdir().unwrap();
    let s = LocalStore::create(d.path(), "o/r").unwrap().with_now(t0());
    let run = s
        .create_run(&NewRun::new("tier1-nightly.yml", "main", SHA))
        .unwrap();
    assert_eq!(run.id, 1);
    let f = d.path().join("x.bin");
    fs::write(&f, b"hello").unwrap();
    let a = s.upload_file(run.id, "tier1-evidence-1-1", &f, 90).unwrap();
    assert_eq!(
        a.digest.as_deref(),
        Some(Digest::of_bytes(b"hello").as_str())
    );
    assert_eq!(a.size_in_bytes, 5);
    assert!(s.upload_file(run.id, "tier1-evidence-1-1", &f, 90).is_err());
    assert!(s.upload_file(run.id, "bad/name", &f, 90).is_err());
    // Listed while in progress, as GitHub lists runs of every status.
    let l = s.list_runs("tier1-nightly.yml", "main", 100).unwrap();
    assert_eq!(l.items[0].status, "in_progress");
    s.complete_run(run.id, "success").unwrap();
    let l = s.list_runs("tier1-nightly.yml", "main", 100).unwrap();
    assert_eq!(l.items[0].status, "completed");
    assert_eq!(l.items.len(), 1);
    assert!(!l.truncated);
    let mut out = Vec::new();
    let dl = s.download(&a, &mut out, 100).unwrap();
    assert_eq!(out, b"hello");
    assert_eq!(Some(dl.digest.to_string()), a.digest);
    assert!(matches!(
        s.download(&a, &mut Vec::new(), 4),
        Err(StoreError::Integrity { .. })
    ));
    let later = LocalStore::open(d.path())
        .unwrap()
        .with_now(t0() + Duration::days(90));
    let m = &later
        .find_artifacts_by_name("tier1-evidence-1-1", &|_| None)
        .unwrap()
        .items[0];
    assert!(m.expired);
    assert!(matches!(
        later.download(m, &mut Vec::new(), 100),
        Err(StoreError::Expired { .. })
    ));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    LocalStore::create(d.path(), "o/r").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let dir = d.path().to_path_buf();
            std::thread::spawn(move || {
                let s = LocalStore::open(&dir).unwrap();
                let src = dir.join(format!("src{i}"));
                fs::write(&src, format!("bytes {i}")).unwrap();
                for _ in 0..5 {
                    let r = s.create_run(&NewRun::new("w.yml", "main", SHA)).unwrap();
                    s.upload_file(r.id, "a", &src, 1).unwrap();
                    s.complete_run(r.id, "success").unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let state = LocalStore::open(d.path()).unwrap().load().unwrap();
    assert_eq!(state.runs.len(), 20);
    assert_eq!(state.artifacts.len(), 20);
    let mut ids: Vec<u64> = state.runs.iter().map(|r| r.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 20);
    assert!(state.runs.iter().all(|r| r.status == "completed"));
}

/// Issue 20: as `actions/upload-artifact` (v4.4+, `include-hidden-files: false`), a directory
/// upload leaves out hidden files and everything under a hidden directory.
#[test]
fn a_directory_upload_drops_hidden_files_as_github_does() {
    let d = tempfile::tempdir().unwrap();
    let s = LocalStore::create(&d.path().join("store"), "o/r").unwrap();
    let run = s.create_run(&NewRun::new("w.yml", "main", SHA)).unwrap();
    let src = d.path().join("history");
    fs::create_dir_all(src.join("r1/.cache")).unwrap();
    fs::create_dir_all(src.join(".git")).unwrap();
    fs::write(src.join("index.json"), b"{}").unwrap();
    fs::write(src.join("r1/summary.json"), b"{}").unwrap();
    fs::write(src.join(".env"), b"TOKEN=x").unwrap();
    fs::write(src.join(".git/config"), b"[core]").unwrap();
    fs::write(src.join("r1/.cache/x"), b"x").unwrap();
    let a = s.upload_dir_zipped(run.id, "hist", &src, 1).unwrap();
    let zip = zip::ZipArchive::new(fs::File::open(s.artifact_path(a.id)).unwrap()).unwrap();
    let mut names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["index.json", "r1/summary.json"]);
    // The source is untouched; a directory of hidden files only uploads nothing.
    assert!(src.join(".env").is_file());
    let only = d.path().join("only-hidden");
    fs::create_dir_all(&only).unwrap();
    fs::write(only.join(".hidden"), b"x").unwrap();
    let e = s.upload_dir_zipped(run.id, "none", &only, 1).unwrap_err();
    assert!(
        e.to_string().contains("hidden files are not uploaded"),
        "{e}"
    );
}

/// Issue 20: as the GitHub store, a download whose bytes are not `size_in_bytes` long is refused.
#[test]
fn a_download_of_another_size_than_recorded_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let s = LocalStore::create(d.path(), "o/r").unwrap();
    let run = s.create_run(&NewRun::new("w.yml", "main", SHA)).unwrap();
    let f = d.path().join("x.bin");
    fs::write(&f, b"hello").unwrap();
    let a = s.upload_file(run.id, "e", &f, 90).unwrap();
    fs::write(s.artifact_path(a.id), b"hello!").unwrap();
    let mut out = Vec::new();
    match s.download(&a, &mut out, 100) {
        Err(StoreError::Integrity { message, .. }) => assert!(
            message.contains("size_in_bytes: expected 5, found 6"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

fn published_store() -> (tempfile::TempDir, LocalStore) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("store");
    let s = LocalStore::create(&dir, "o/r").unwrap().with_now(t0());
    let run = s.create_run(&NewRun::new("w.yml", "main", SHA)).unwrap();
    let f = d.path().join("x.bin");
    fs::write(&f, b"first bytes").unwrap();
    s.upload_file(run.id, "a", &f, 1).unwrap();
    (d, s)
}

#[test]
fn a_lost_state_file_is_refused_never_recreated_over_artifacts() {
    let (_d, s) = published_store();
    fs::remove_file(s.dir().join(STATE_FILE)).unwrap();
    for e in [
        LocalStore::create(s.dir(), "o/r").unwrap_err(),
        LocalStore::open(s.dir()).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("artifacts/1.bin"), "{e}");
    }
    assert!(!s.dir().join(STATE_FILE).exists());
    assert_eq!(fs::read(s.artifact_path(1)).unwrap(), b"first bytes");
}

#[test]
fn rewound_counters_are_refused_and_orphan_bytes_are_skipped() {
    let (d, s) = published_store();
    let src = d.path().join("y.bin");
    fs::write(&src, b"second").unwrap();
    s.update(|st| {
        st.next_artifact_id = 1;
        Ok(())
    })
    .unwrap();
    let e = s.upload_file(1, "b", &src, 1).unwrap_err().to_string();
    assert!(
        e.contains("next_artifact_id") && e.contains("rewound"),
        "{e}"
    );
    assert!(s.create_run(&NewRun::new("w.yml", "main", SHA)).is_err());
    assert_eq!(fs::read(s.artifact_path(1)).unwrap(), b"first bytes");
    // Bytes without a record (an upload killed between the two) are skipped, never replaced.
    s.update(|st| {
        st.next_artifact_id = 2;
        Ok(())
    })
    .unwrap();
    fs::write(s.artifact_path(2), b"orphan").unwrap();
    let a = s.upload_file(1, "b", &src, 1).unwrap();
    assert_eq!(a.id, 3);
    assert_eq!(fs::read(s.artifact_path(2)).unwrap(), b"orphan");
    assert_eq!(s.load().unwrap().next_artifact_id, 4);
}

#[test]
fn store_files_that_are_symbolic_links_are_refused() {
    let (d, s) = published_store();
    let victim = d.path().join("victim");
    fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, s.dir().join("artifacts/7.bin")).unwrap();
    let e = LocalStore::create(s.dir(), "o/r").unwrap_err().to_string();
    assert!(
        e.contains("artifacts/7.bin") && e.contains("symbolic link"),
        "{e}"
    );
    fs::remove_file(s.dir().join("artifacts/7.bin")).unwrap();
    fs::remove_file(s.dir().join(LOCK_FILE)).unwrap();
    std::os::unix::fs::symlink(&victim, s.dir().join(LOCK_FILE)).unwrap();
    let e = s
        .create_run(&NewRun::new("w.yml", "main", SHA))
        .unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(fs::read(&victim).unwrap(), b"keep");
}

#[test]
fn an_abandoned_run_is_completed_and_a_live_one_is_not() {
    let (_d, s) = published_store();
    let (live, lease) = s
        .create_run_leased(&NewRun::new("w.yml", "main", SHA))
        .unwrap();
    let (gone, gone_lease) = s
        .create_run_leased(&NewRun::new("w.yml", "main", SHA))
        .unwrap();
    drop(gone_lease); // as when its process is killed: the kernel releases the lock
    let done = s.complete_abandoned_runs("failure").unwrap();
    assert_eq!(done.iter().map(|r| r.id).collect::<Vec<_>>(), vec![gone.id]);
    let state = s.load().unwrap();
    let status = |id| {
        state
            .runs
            .iter()
            .find(|r| r.id == id)
            .unwrap()
            .status
            .clone()
    };
    assert_eq!(status(live.id), "in_progress");
    assert_eq!(status(gone.id), "completed");
    assert_eq!(
        status(1),
        "in_progress",
        "a run without a lease is never touched"
    );
    let lease_file = local_lease::lease_path(s.dir(), live.id);
    assert!(lease_file.exists());
    s.complete_run(live.id, "success").unwrap();
    assert!(!lease_file.exists(), "the lease file goes with the run");
    drop(lease);
}

/// Discovery lists up to 100 runs' artifacts, one store query each, and `store.json` grows with
/// the store's age: an unchanged `store.json` is parsed once, and re-read after every rewrite
/// (also by another handle on the same directory, as another process would write it).
#[test]
fn an_unchanged_store_json_is_parsed_once() {
    let d = tempfile::tempdir().unwrap();
    let s = LocalStore::create(d.path(), "o/r").unwrap().with_now(t0());
    let f = d.path().join("x.bin");
    fs::write(&f, b"hello").unwrap();
    let mut runs = Vec::new();
    for i in 0..5 {
        let run = s
            .create_run(&NewRun::new("tier1-nightly.yml", "main", SHA))
            .unwrap();
        s.upload_file(run.id, &format!("tier1-evidence-{i}-1"), &f, 90)
            .unwrap();
        runs.push(run.id);
    }
    let before = s.state_parses();
    for _ in 0..20 {
        for &id in &runs {
            assert_eq!(s.list_run_artifacts(id, &|_| None).unwrap().items.len(), 1);
        }
    }
    assert_eq!(
        s.state_parses() - before,
        1,
        "20 x 5 listings of an unchanged store"
    );
    // Another handle (another process) writes: the next read sees it.
    let other = LocalStore::open(d.path()).unwrap().with_now(t0());
    other.complete_run(runs[0], "success").unwrap();
    assert_eq!(
        s.list_runs("tier1-nightly.yml", "main", 100)
            .unwrap()
            .items
            .iter()
            .find(|r| r.id == runs[0])
            .unwrap()
            .status,
        "completed"
    );
    assert_eq!(s.state_parses() - before, 2);
}
