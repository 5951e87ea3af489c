//! Scale figures of `cargo bench --bench core`: restore and publish of synthetic histories of
//! 1,000, 10,000 and 50,000 runs, compacted as publication leaves them in the worst case (the
//! most live runs before the next compaction), each timed from the parent and its peak resident
//! set read by the child process itself (`VmHWM`); `unzip -q` of the same package in the same run.
//! The child mode (`TIER1_CORE_BENCH_CHILD`) is this binary re-executed to run one operation.

use crate::restore_support::*;
use chrono::Duration;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration as StdDuration, Instant};
use tier1::compaction::{PackagePlan, Policy, write_package};
use tier1::history::package::IndexDoc;
use tier1::store::local::NewRun;

/// Sizes measured (`TIER1_CORE_BENCH_SIZES=1000,50000` picks some).
pub const SIZES: [usize; 3] = [1_000, 10_000, 50_000];

/// The sizes this run measures.
pub fn sizes() -> Vec<usize> {
    match std::env::var("TIER1_CORE_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}
/// Repetitions of each measurement.
pub const REPS: usize = 7;
const CHILD: &str = "TIER1_CORE_BENCH_CHILD";

fn var(k: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(k).unwrap_or_else(|| panic!("{k} is set by the parent")))
}

/// Peak resident set (VmHWM) of this process in KiB.
pub fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run as a child when asked to: one restore or one publish; prints `<ns> <VmHWM KiB>`.
pub fn child_main() -> bool {
    let Ok(op) = std::env::var(CHILD) else {
        return false;
    };
    let t = Instant::now();
    match op.as_str() {
        "restore" => {
            let store = tier1::store::local::LocalStore::open(&var("BENCH_STORE"))
                .expect("store")
                .with_now(t0() + Duration::days(2));
            let opts = tier1::restore::RestoreOptions {
                repository: REPO.into(),
                workflow: WORKFLOW.into(),
                branch: "main".into(),
                current_run_id: None,
                destination: var("BENCH_DEST"),
                allow_bootstrap: false,
                allow_anchor_renewal: false,
                artifact_prefix: Default::default(),
                runner_class: None,
            };
            let out = tier1::restore::restore(&store, &opts).expect("restore");
            assert!(out.history_restored);
        }
        "publish" => {
            let req = tier1::publish::MergeRequest {
                candidate_root: var("BENCH_CAND"),
                canonical_root: var("BENCH_LIVE"),
                output_root: var("BENCH_OUT"),
                run_id: std::env::var("BENCH_RUN").expect("run"),
                runner_class: None,
            };
            tier1::publish::merge(&req, &tier1::suite::Suite::embedded()).expect("publish");
        }
        other => panic!("unknown child operation {other}"),
    }
    println!("{} {}", t.elapsed().as_nanos(), vm_hwm_kib().unwrap_or(0));
    true
}

/// One child run: (wall time from the parent, peak RSS in KiB).
fn child(op: &str, vars: &[(&str, &Path)], extra: &[(&str, String)]) -> (StdDuration, u64) {
    let mut cmd = Command::new(std::env::current_exe().expect("bench binary"));
    cmd.env(CHILD, op).env("TIER1_LOG", "warn");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let t = Instant::now();
    let out = cmd.output().expect("spawn child");
    let wall = t.elapsed();
    assert!(
        out.status.success(),
        "{op}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let kib = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (wall, kib)
}

/// min / median / max.
pub fn spread(mut xs: Vec<StdDuration>) -> (f64, f64, f64) {
    xs.sort();
    let s = |d: StdDuration| d.as_secs_f64();
    (s(xs[0]), s(xs[xs.len() / 2]), s(xs[xs.len() - 1]))
}

/// One size's figures.
#[derive(Debug)]
pub struct Figures {
    pub runs: usize,
    pub live_runs: usize,
    pub segments: usize,
    pub zip_bytes: u64,
    pub members: usize,
    pub restore: (f64, f64, f64),
    pub restore_kib: u64,
    pub unzip: (f64, f64, f64),
    pub ratio: f64,
    pub publish: (f64, f64, f64),
    pub publish_kib: u64,
    pub compacting_publish: (f64, f64, f64),
    pub compacting_publish_kib: u64,
}

/// `runs` runs written as a package that publication would leave with `tail` + pinned live runs.
fn package(env: &Env, cand: &Path, runs: usize, tail: usize, name: &str) -> PathBuf {
    let live = env.tmp.path().join(format!("{name}-uncompacted"));
    tier1::fsx::link_tree(cand, &live).expect("link");
    std::fs::remove_dir_all(live.join(run_id(runs))).expect("newest run");
    let mut doc = IndexDoc::load(cand).expect("index").expect("index");
    let mut rows = doc.raw_rows().to_vec();
    rows.pop();
    doc.set_field("runs", serde_json::Value::Array(rows))
        .expect("runs");
    std::fs::remove_file(live.join("index.json")).expect("unlink");
    std::fs::write(live.join("index.json"), doc.to_bytes().expect("bytes")).expect("index");
    let out = env.tmp.path().join(name);
    let policy = Policy {
        tail,
        max_live_runs: 0,
        ..Policy::for_window(20)
    };
    write_package(PackagePlan {
        dest: &out,
        base: Some(&live),
        runs: vec![],
        doc,
        trend_paths: &|_| vec![],
        policy,
    })
    .expect("compacted package");
    std::fs::remove_dir_all(&live).expect("cleanup");
    out
}

/// `live` plus the synthetic run `runs` of `cand`: the producer's candidate history.
fn candidate_of(env: &Env, live: &Path, cand: &Path, runs: usize, name: &str) -> PathBuf {
    let out = env.tmp.path().join(name);
    tier1::fsx::copy_tree(live, &out).expect("copy");
    let id = run_id(runs);
    tier1::fsx::copy_tree(&cand.join(&id), &out.join(&id)).expect("run");
    let full = IndexDoc::load(cand).expect("index").expect("index");
    let mut doc = IndexDoc::load(&out).expect("index").expect("index");
    let mut row = full.row(&id).expect("row").clone();
    row.chain_sha256 = None;
    doc.push_row(&row).expect("push");
    std::fs::write(out.join("index.json"), doc.to_bytes().expect("bytes")).expect("index");
    out
}

/// Measure one size.
pub fn measure(runs: usize) -> Figures {
    let env = Env::new();
    let cand = env.tmp.path().join("synthetic");
    env.nightly(
        t0(),
        "success",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |ev, _| {
            write_history(&cand, runs + 1, &anchor(ev));
            HistoryUpload::None
        },
    );
    // The most live runs a package holds before the next publication compacts it (300 with the
    // default window): the newest runs and the anchor, one publication short of the limit; and
    // one more for the publication that compacts.
    let limit = Policy::for_window(20).max_live_runs;
    let steady = package(&env, &cand, runs, limit - 2, "steady");
    let full = package(&env, &cand, runs, limit - 1, "full");
    let published = env.nightly(
        t0() + Duration::days(1),
        "success",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |_, dir| {
            std::fs::remove_dir_all(dir).expect("clear");
            tier1::fsx::copy_tree(&steady, dir).expect("copy");
            HistoryUpload::Dir
        },
    );
    let meta = published.history.expect("history");
    let store = env.store_at(t0());
    let zip = store.artifact_path(meta.id);
    let doc = IndexDoc::load(&steady).expect("index").expect("index");
    let footprint = tier1::history_check::restorable::footprint(&steady).expect("footprint");
    let (mut restore, mut unzip, mut restore_kib) = (Vec::new(), Vec::new(), 0);
    for i in 0..REPS {
        let dest = env.tmp.path().join(format!("restored-{i}"));
        let (t, kib) = child(
            "restore",
            &[("BENCH_STORE", &env.store_dir), ("BENCH_DEST", &dest)],
            &[],
        );
        restore.push(t);
        restore_kib = restore_kib.max(kib);
        let dir = env.tmp.path().join(format!("unzipped-{i}"));
        let t = Instant::now();
        let ok = Command::new("unzip")
            .arg("-q")
            .arg(&zip)
            .arg("-d")
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "unzip -q is required by this benchmark");
        unzip.push(t.elapsed());
    }
    let live = env.tmp.path().join("restored-0");
    let candp = candidate_of(&env, &live, &cand, runs, "candidate");
    let candf = candidate_of(&env, &full, &cand, runs, "candidate-full");
    let run = run_id(runs);
    let publish = |live: &Path, candp: &Path, name: &str| {
        let (mut times, mut kib) = (Vec::new(), 0);
        for i in 0..REPS {
            let out = env.tmp.path().join(format!("{name}-{i}"));
            let (t, k) = child(
                "publish",
                &[
                    ("BENCH_CAND", candp),
                    ("BENCH_LIVE", live),
                    ("BENCH_OUT", &out),
                ],
                &[("BENCH_RUN", run.clone())],
            );
            times.push(t);
            kib = kib.max(k);
        }
        (spread(times), kib)
    };
    let (steady_publish, publish_kib) = publish(&live, &candp, "published");
    let (compacting, compacting_kib) = publish(&full, &candf, "compacted");
    let (r, u) = (spread(restore), spread(unzip));
    Figures {
        runs,
        live_runs: doc.index.runs.len(),
        segments: doc.index.segments.len(),
        zip_bytes: meta.size_in_bytes,
        members: footprint.members,
        restore: r,
        restore_kib,
        unzip: u,
        ratio: r.1 / u.1,
        publish: steady_publish,
        publish_kib,
        compacting_publish: compacting,
        compacting_publish_kib: compacting_kib,
    }
}
