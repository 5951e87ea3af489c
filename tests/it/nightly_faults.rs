//! The fault-injection suite (docs/fault-injection.md): `tier1-nightly` killed (SIGKILL, as
//! `kill -9`) at every write, rename and upload point of a night, and failing with ENOSPC at every
//! write; after each, the next night must work, the hash chain stay intact, no run stay
//! `in_progress`, every night that was published stay in the history, no temporary file stay
//! behind, and `--history-out` hold a complete copy. The points are enumerated by a counting run
//! (`TIER1_FAULT=count:FILE`), so new points are covered without editing this file. Run alone:
//! `cargo test --locked --test it nightly_faults`.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::faults::{
    artifact_names, copy_dir, count_points, nightly_at, runs, store_state,
};
use crate::support::nightly_repo::{Out, Repo, repo};
use std::path::{Path, PathBuf};

/// A checkout, a store holding one published night, and a `--history-out` copy of it, kept
/// pristine (`base`); every fault starts from a fresh copy.
struct Scenario {
    r: Repo,
    base: PathBuf,
    base_out: PathBuf,
    base_rows: usize,
}

fn scenario() -> Scenario {
    let r = repo();
    let dir = r.root.parent().unwrap().to_path_buf();
    let base = dir.join("base/store");
    let base_out = dir.join("base/history");
    let o = nightly_at(
        &r,
        &base,
        &[],
        &["--history-out", &base_out.display().to_string()],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let base_rows = rows(&base_out);
    Scenario {
        r,
        base,
        base_out,
        base_rows,
    }
}

fn rows(history: &Path) -> usize {
    let index = std::fs::read(history.join("index.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&index).unwrap()["runs"]
        .as_array()
        .unwrap()
        .len()
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

/// One fault: a fresh copy of the base store and copy, the faulty night, then a normal night
/// and every invariant. `check` judges the faulty night's output.
fn one_fault(s: &Scenario, spec: &str, extra: &[&str], check: &dyn Fn(&Out) -> Result<(), String>) {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    let out_dir = t.path().join("out");
    let out = out_dir.join("history");
    let tmp = t.path().join("tmp");
    copy_dir(&s.base, &store);
    copy_dir(&s.base_out, &out);
    std::fs::create_dir_all(&tmp).unwrap();
    let out_arg = out.display().to_string();
    let envs = |fault: Option<&str>| {
        let mut v = vec![("TMPDIR", tmp.display().to_string())];
        if let Some(f) = fault {
            v.push(("TIER1_FAULT", f.to_string()));
        }
        v
    };
    let mut args = vec!["--history-out", out_arg.as_str()];
    args.extend_from_slice(extra);
    let faulty = nightly_at(&s.r, &store, &envs(Some(spec)), &args);
    if let Err(why) = check(&faulty) {
        panic!("{spec}: {why}\n{}\n{}", faulty.json, faulty.stderr);
    }
    // The faulty night's run, when it got as far as recording one.
    let faulty_run = runs(&store).get(runs(&s.base).len()).map(|r| r.0);
    let published = faulty_run.is_some_and(|id| {
        artifact_names(&store).contains(&format!("tier1-history-{id}-1-publication-1"))
    });
    let next = nightly_at(&s.r, &store, &envs(None), &["--history-out", &out_arg]);
    assert_eq!(
        next.code,
        exit_code(Exit::Ok),
        "{spec}: the next night: {}\n{}",
        next.json,
        next.stderr
    );
    assert_eq!(
        next.json["restore"]["status"], "restored",
        "{spec}: {}",
        next.json
    );
    let want_rows = s.base_rows + 1 + usize::from(published);
    assert_eq!(
        rows(&out),
        want_rows,
        "{spec}: published nights in the history"
    );
    let all = runs(&store);
    assert!(
        all.iter().all(|(_, status, _)| status == "completed"),
        "{spec}: a run left in progress: {all:?}"
    );
    for dir in [
        store.clone(),
        store.join("artifacts"),
        tmp.clone(),
        out_dir.clone(),
    ] {
        assert_eq!(
            temporaries(&dir),
            Vec::<String>::new(),
            "{spec}: temporary files left in {}",
            dir.display()
        );
    }
    let recorded = store_state(&store)["artifacts"].as_array().unwrap().len();
    assert_eq!(recorded, artifact_names(&store).len());
}

fn killed(o: &Out) -> Result<(), String> {
    (o.code == -1)
        .then_some(())
        .ok_or_else(|| format!("expected the night to be killed, exit {}", o.code))
}

fn disk_full(o: &Out) -> Result<(), String> {
    if o.code != exit_code(Exit::DiskFull) {
        return Err(format!(
            "expected exit {}, found {}",
            Exit::DiskFull,
            o.code
        ));
    }
    if !o.stderr.contains("No space left on device") {
        return Err("the message does not say the disk is full".into());
    }
    // Before the run is recorded or while recording its end, no JSON is printed (the next night
    // completes a run left in progress); otherwise the run is recorded as failed.
    if !o.json.is_null() && o.json["conclusion"] != "failure" {
        return Err(format!("the run is recorded as {}", o.json["conclusion"]));
    }
    Ok(())
}

/// The numbers (from 1) of every `point` a night with `extra` arguments reaches, leaving out the
/// first `skip_uploads` upload points and everything before them.
fn points(s: &Scenario, point: &str, extra: &[&str], skip_uploads: usize) -> Vec<usize> {
    let out = s.r.root.parent().unwrap().join("count-out/history");
    copy_dir(&s.base_out, &out);
    let mut args = vec!["--history-out".to_string(), out.display().to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let all = count_points(&s.r, &s.base, &args);
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
    let mut uploads = 0;
    let mut n = 0;
    let mut wanted = Vec::new();
    for (p, _) in &all {
        if p == "upload" {
            uploads += 1;
        }
        if p == point {
            n += 1;
            if uploads >= skip_uploads && !(p == "upload" && uploads == skip_uploads) {
                wanted.push(n);
            }
        }
    }
    assert!(!wanted.is_empty(), "a night reaches no {point} point");
    wanted
}

/// Every fault of `specs`, on a few worker threads (each night mostly waits: the run id has a
/// one-second resolution, so a night started in the same second as the previous one waits).
fn all_faults(
    s: &Scenario,
    specs: Vec<String>,
    extra: &[&str],
    check: fn(&Out) -> Result<(), String>,
) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(spec) = specs.get(i) else { break };
                    one_fault(s, spec, extra, &check);
                }
            });
        }
    });
}

/// Faults tried at once by one test.
const WORKERS: usize = 4;

#[test]
fn a_night_killed_at_any_write_loses_nothing() {
    let s = scenario();
    let specs = points(&s, "write", &[], 0)
        .into_iter()
        .map(|n| format!("write:{n}:kill"))
        .collect();
    all_faults(&s, specs, &[], killed);
}

#[test]
fn a_night_killed_at_any_rename_or_upload_loses_nothing() {
    let s = scenario();
    let mut specs: Vec<String> = Vec::new();
    for point in ["rename", "upload"] {
        specs.extend(
            points(&s, point, &[], 0)
                .into_iter()
                .map(|n| format!("{point}:{n}:kill")),
        );
    }
    all_faults(&s, specs, &[], killed);
}

#[test]
fn a_full_disk_at_any_write_is_exit_12_and_loses_nothing() {
    let s = scenario();
    let specs = points(&s, "write", &[], 0)
        .into_iter()
        .map(|n| format!("write:{n}:enospc"))
        .collect();
    all_faults(&s, specs, &[], disk_full);
}

/// The acceptance path shares the producer steps with a normal night; its own points are the
/// promotion's, after the candidate upload (the fourth upload point).
#[test]
fn a_promotion_killed_or_out_of_space_at_any_point_loses_nothing() {
    let s = scenario();
    let accept = ["--accept", "--note", "Renewed after review"];
    let mut kills: Vec<String> = Vec::new();
    for point in ["write", "rename", "upload"] {
        kills.extend(
            points(&s, point, &accept, 4)
                .into_iter()
                .map(|n| format!("{point}:{n}:kill")),
        );
    }
    all_faults(&s, kills, &accept, killed);
    let full = points(&s, "write", &accept, 4)
        .into_iter()
        .map(|n| format!("write:{n}:enospc"))
        .collect();
    all_faults(&s, full, &accept, disk_full);
}
