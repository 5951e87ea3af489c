//! The local night across compaction: `tier1-nightly` publishes (and `--accept` promotes) the
//! nights whose package seals runs into `segments/*.tar.gz`, stores them in the store's vault,
//! and the next nights' packages carry only their records; restore takes what it published, and
//! the dashboard and the export read it.
//! With `thresholds.history_window: 2` the live tail is 10 runs and compaction starts past 30
//! live runs, so the fixture suite's 31st night is the first to write a segment.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{self, Repo, git};
use std::path::Path;

/// The fixture repository with a detection window of two runs, committed.
pub(crate) fn small_window_repo() -> Repo {
    let r = nightly_repo::repo();
    let suite = r.root.join("suite.yaml");
    let mut text = std::fs::read_to_string(&suite).expect("suite");
    text.push_str("thresholds:\n  history_window: 2\n");
    std::fs::write(&suite, text).expect("suite");
    git(&r.root, &["commit", "-qam", "window 2"]);
    r
}

pub(crate) fn segments(history: &Path) -> Vec<String> {
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
    let restored = restore_local(&r, &dest);
    assert_eq!(
        restored.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    assert_eq!(segments(&dest), segments(&history));
    assert_eq!(index(&dest)["segments"], idx["segments"]);
    // The dashboard and the export of the restored history (its segments' records, the vaulted
    // archives left in the vault).
    let site = r.root.join(".tier1/site");
    let o = crate::support::command::scrubbed(crate::support::command::bin("tier1-dashboard"))
        .current_dir(&r.root)
        .arg("--history-root")
        .arg(&dest)
        .arg("--output")
        .arg(&site)
        .output()
        .expect("tier1-dashboard runs");
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "dashboard: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(site.join("index.html").is_file(), "the dashboard's page");
    let o = crate::history_export::export(&dest, &r.root.join(".tier1/export.zip"));
    assert_eq!(o.code, exit_code(Exit::Ok), "export: {}", o.stderr);
    let j = o.json();
    assert_eq!(
        j["vaulted_segments"],
        serde_json::json!(records.len()),
        "{j}"
    );
    assert_eq!(
        j["run_count"].as_u64(),
        Some(total_runs(&dest) as u64),
        "{j}"
    );
}

/// `tier1-restore` of the fixture repository's local store's latest package into `dest`.
pub(crate) fn restore_local(r: &Repo, dest: &Path) -> std::process::Output {
    crate::support::command::scrubbed(crate::support::command::bin("tier1-restore"))
        .current_dir(&r.root)
        .args([
            "--store",
            "local:.tier1/store",
            "--repository",
            "local/store",
        ])
        .args(["--branch", "main", "--destination"])
        .arg(dest)
        .output()
        .expect("tier1-restore runs")
}

fn index(root: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).expect("json")
}

/// Live rows of a history copy.
fn live_rows(history: &Path) -> usize {
    index(history)["runs"].as_array().expect("runs").len()
}

/// Temporary entries tier1 names (`.work-*`, `.tier1-*`) directly under `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".work-") || n.starts_with(".tier1-"))
                .collect()
        })
        .unwrap_or_default()
}

/// `tier1-restore` of the local store `store` into `dest`.
fn restore_from(r: &Repo, store: &Path, dest: &Path) -> std::process::Output {
    crate::support::command::scrubbed(crate::support::command::bin("tier1-restore"))
        .current_dir(&r.root)
        .arg("--store")
        .arg(format!("local:{}", store.display()))
        .args(["--repository", "local/store", "--branch", "main"])
        .arg("--destination")
        .arg(dest)
        .output()
        .expect("tier1-restore runs")
}

/// Every run a restored history holds (live and sealed).
fn total_runs(root: &Path) -> usize {
    let v = tier1::history_check::validate_history_root(root).expect("a valid history");
    v.doc.total_run_count()
}

/// `tier1-nightly` killed (SIGKILL, as `kill -9`) at points of the night that compacts: after
/// each kill the previous package still restores, the store holds no temporary file, and the
/// rerun publishes (and compacts) with every night kept. The points are those a counting run of
/// the same night reaches (docs/fault-injection.md): every upload point of the night, and 40 points
/// spread evenly over its publication job, where it seals, uploads and vaults.
#[test]
fn a_compacting_night_killed_at_any_point_loses_nothing() {
    use crate::support::faults::{copy_dir, count_points, nightly_at};
    let r = small_window_repo();
    let dir = r.root.parent().unwrap().to_path_buf();
    let base = dir.join("base/store");
    let base_out = dir.join("base/history");
    let out_arg = base_out.display().to_string();
    // Nights until the next one compacts (30 live runs at a window of 2: a tail of 10).
    for night in 1.. {
        assert!(night <= 40, "no night reached 30 live runs");
        let o = nightly_at(&r, &base, &[], &["--history-out", &out_arg]);
        assert_eq!(o.code, exit_code(Exit::Ok), "night {night}: {}", o.stderr);
        assert!(
            segments(&base_out).is_empty(),
            "night {night} compacted early"
        );
        if live_rows(&base_out) == 30 {
            break;
        }
    }
    let base_runs = live_rows(&base_out);
    let points = count_points(&r, &base, &[]);
    let uploads: Vec<usize> = points
        .iter()
        .enumerate()
        .filter(|(_, (p, _))| p == "upload")
        .map(|(i, _)| i)
        .collect();
    // The publication job starts after the candidate history's upload (the 4th upload point).
    let publication = uploads[3];
    // Every upload point, and 40 points spread evenly over the publication job (where it seals,
    // checks, uploads and vaults), each named by its kind and number.
    let mut n = std::collections::BTreeMap::<&str, usize>::new();
    let named: Vec<(usize, String)> = points
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            let k = n.entry(p.as_str()).or_default();
            *k += 1;
            (i, format!("{p}:{k}:kill"))
        })
        .collect();
    let stride = ((points.len() - publication) / 40).max(1);
    let specs: Vec<String> = named
        .into_iter()
        .filter(|(i, spec)| {
            spec.starts_with("upload:")
                || (*i > publication && (i - publication).is_multiple_of(stride))
        })
        .map(|(_, spec)| spec)
        .collect();
    eprintln!("{} points, {} faults", points.len(), specs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(spec) = specs.get(i) else { break };
                    let t = tempfile::tempdir().unwrap();
                    let store = t.path().join("store");
                    copy_dir(&base, &store);
                    let tmp = t.path().join("tmp");
                    std::fs::create_dir_all(&tmp).unwrap();
                    let env = |fault: Option<&str>| {
                        let mut v = vec![("TMPDIR", tmp.display().to_string())];
                        v.extend(fault.map(|f| ("TIER1_FAULT", f.to_string())));
                        v
                    };
                    let o = nightly_at(&r, &store, &env(Some(spec)), &[]);
                    assert_eq!(
                        o.code, -1,
                        "{spec}: expected the night to be killed: {}",
                        o.stderr
                    );
                    // The previous package (or, killed after its upload, the new one) restores.
                    let dest = t.path().join("restored");
                    let o = restore_from(&r, &store, &dest);
                    assert_eq!(
                        o.status.code(),
                        Some(exit_code(Exit::Ok)),
                        "{spec}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    let before = total_runs(&dest);
                    assert!(
                        before == base_runs || before == base_runs + 1,
                        "{spec}: {before} runs restored, expected {base_runs} or one more"
                    );
                    // The rerun publishes, with every night kept, and compacts.
                    let o = nightly_at(&r, &store, &env(None), &[]);
                    assert_eq!(
                        o.code,
                        exit_code(Exit::Ok),
                        "{spec}: the rerun: {}",
                        o.stderr
                    );
                    let dest = t.path().join("after");
                    let o = restore_from(&r, &store, &dest);
                    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{spec}");
                    assert_eq!(total_runs(&dest), before + 1, "{spec}: a night lost");
                    assert!(
                        !index(&dest)["segments"].as_array().unwrap().is_empty(),
                        "{spec}: the history did not compact"
                    );
                    for d in [store.clone(), store.join("artifacts"), store.join("vault")] {
                        assert_eq!(
                            temporaries(&d),
                            Vec::<String>::new(),
                            "{spec}: {}",
                            d.display()
                        );
                    }
                }
            });
        }
    });
}
