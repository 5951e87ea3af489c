//! Unit tests of `local`.
use super::*;

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
        .find_artifacts_by_name("tier1-evidence-1-1")
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
