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
