//! Scale figures of `cargo bench --bench core`: histories of 1,000, 10,000 and 50,000 runs grown
//! from real nights the way publication grows them (`nights.rs`), measured at the fullest package
//! of a compaction cycle (the most live runs before the next publication compacts): restore,
//! publish, a compacting publish, promote, the dashboard and export, each a child process timed
//! from the parent, its peak resident set read by the child itself (`VmHWM`), beside `unzip -q` of
//! the same package in the same run; and the bytes a night adds to what the next night downloads.
//! The child mode (`TIER1_CORE_BENCH_CHILD`) is this binary re-executed to run one operation.

use crate::nights::{Grower, Nights};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tier1::history::package::IndexDoc;

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

/// Repetitions of each measurement (`TIER1_CORE_BENCH_REPS`, default 5).
pub fn reps() -> usize {
    std::env::var("TIER1_CORE_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

const CHILD: &str = "TIER1_CORE_BENCH_CHILD";

fn var(k: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(k).unwrap_or_else(|| panic!("{k} is set by the parent")))
}

fn text(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| panic!("{k} is set by the parent"))
}

/// Peak resident set (VmHWM) of this process in KiB.
pub fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run as a child when asked to: one operation; prints `<ns> <VmHWM KiB>`.
pub fn child_main() -> bool {
    let Ok(op) = std::env::var(CHILD) else {
        return false;
    };
    let t = Instant::now();
    match op.as_str() {
        "restore" => {
            let store = tier1::store::local::LocalStore::open(&var("BENCH_STORE")).expect("store");
            let opts = tier1::restore::RestoreOptions {
                repository: tier1::store::ArtifactStore::repository(&store).to_string(),
                workflow: crate::nights::WORKFLOW.into(),
                branch: "main".into(),
                current_run_id: None,
                destination: var("BENCH_DEST"),
                allow_bootstrap: false,
                allow_anchor_renewal: true,
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
                run_id: text("BENCH_RUN"),
                runner_class: None,
            };
            tier1::publish::merge(&req, &tier1::suite::Suite::embedded()).expect("publish");
        }
        "promote" => {
            let night = crate::nights::Night {
                run_id: text("BENCH_RUN"),
                workflow_run_id: text("BENCH_WORKFLOW_RUN").parse().expect("a run id"),
                conclusion: "success".into(),
                history_artifact: None,
                evidence: Some((text("BENCH_EVIDENCE_NAME"), text("BENCH_EVIDENCE_DIGEST"))),
            };
            let req = crate::nights::promote_request(
                &night,
                &text("BENCH_COMMIT"),
                &var("BENCH_REPO"),
                &var("BENCH_CAND"),
                &var("BENCH_EVIDENCE"),
                &var("BENCH_LIVE"),
                &var("BENCH_OUT"),
            );
            tier1::promote::promote(&req).expect("promote");
        }
        "dashboard" => {
            tier1::dashboard::write_dashboard(&tier1::dashboard::DashboardOptions {
                history_root: var("BENCH_LIVE"),
                output: var("BENCH_OUT"),
                evidence_root: None,
                now: None,
                suite_config: None,
                repo_root: var("BENCH_REPO"),
                step_summary: false,
                stale_after_days: 3,
            })
            .expect("dashboard");
        }
        "export" => {
            tier1::export::export(&tier1::export::ExportRequest {
                history_root: var("BENCH_LIVE"),
                output: var("BENCH_OUT"),
            })
            .expect("export");
        }
        other => panic!("unknown child operation {other}"),
    }
    println!(
        "{} {} {}",
        t.elapsed().as_nanos(),
        vm_hwm_kib().unwrap_or(0),
        tier1::bench::alloc::peak_bytes() / 1024
    );
    true
}

/// One child run: (wall time from the parent, peak RSS in KiB, peak heap in KiB).
fn child(op: &str, vars: &[(&str, String)]) -> (Duration, u64, u64) {
    let mut cmd = Command::new(std::env::current_exe().expect("bench binary"));
    cmd.env(CHILD, op).env("TIER1_LOG", "warn");
    for (k, v) in vars {
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
    let field = |i| {
        text.split_whitespace()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    (wall, field(1), field(2))
}

/// min / median / max in seconds.
pub fn spread(mut xs: Vec<Duration>) -> (f64, f64, f64) {
    xs.sort();
    let s = |d: Duration| d.as_secs_f64();
    (s(xs[0]), s(xs[xs.len() / 2]), s(xs[xs.len() - 1]))
}

/// One operation's figures: min / median / max seconds, the largest peak RSS and the largest
/// peak heap (KiB).
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub time: (f64, f64, f64),
    pub kib: u64,
    pub heap_kib: u64,
}

/// One size's figures.
#[derive(Debug)]
pub struct Figures {
    pub runs: usize,
    pub live_runs: usize,
    pub segments: usize,
    pub members: usize,
    pub expanded_bytes: u64,
    pub zip_bytes: u64,
    pub zip_bytes_after_compaction: u64,
    pub nights_per_cycle: usize,
    /// Bytes one night adds to the package the next night downloads.
    pub night_bytes: u64,
    pub restore: Op,
    pub unzip: (f64, f64, f64),
    pub ratio: f64,
    pub publish: Op,
    pub compacting_publish: Op,
    pub promote: Op,
    pub dashboard: Op,
    pub export: Op,
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `reps` runs of `op`, each with its own output directory `<dir>/<name>-<i>`.
fn repeat(op: &str, reps: usize, dir: &Path, name: &str, vars: &[(&str, String)]) -> Op {
    let (mut times, mut kib, mut heap_kib) = (Vec::new(), 0, 0);
    for i in 0..reps {
        let out = dir.join(format!("{name}-{i}"));
        let mut v = vars.to_vec();
        v.push(("BENCH_OUT", s(&out)));
        let (t, k, h) = child(op, &v);
        times.push(t);
        kib = kib.max(k);
        heap_kib = heap_kib.max(h);
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(format!("{}.sha256", out.display()));
    }
    Op {
        time: spread(times),
        kib,
        heap_kib,
    }
}

/// The candidate that promotes the promotable real night onto `live`, under `dir`.
fn promotion_candidate(nights: &Nights, live: &Path, dir: &Path) {
    let night = &nights.promotable().run_id;
    let pkg = &nights.promoted_package;
    tier1::fsx::link_tree(live, dir).expect("candidate");
    tier1::fsx::copy_tree(&pkg.join(night), &dir.join(night)).expect("run");
    let row = IndexDoc::load(pkg)
        .unwrap()
        .unwrap()
        .raw_rows()
        .iter()
        .find(|r| r["run_id"] == night.as_str())
        .cloned()
        .expect("the promotable night's row");
    crate::nights::append_row(dir, row);
}

/// Grow `g` to `runs` and measure.
pub fn measure(g: &mut Grower<'_>, nights: &Nights, runs: usize) -> Figures {
    let reps = reps();
    g.grow_to(runs);
    // The smallest package of a cycle: right after a compaction, vaulted and restored.
    g.fill();
    g.publish();
    let zip_after = g.zip_bytes;
    let live_after = g.live_rows();
    // The fullest package of a cycle: every night until the next publication compacts.
    g.append(
        tier1::compaction::Policy::for_window(20)
            .max_live_runs
            .saturating_sub(live_after + 1),
    );
    g.publish();
    let nights_per_cycle = g.live_rows() - live_after + 1;
    let zip_full = g.zip_bytes;
    // What one night adds to the package the next night downloads (its vaulted segments are
    // downloaded only by the nights that need them): the package's growth over the cycle.
    let night_bytes =
        zip_full.saturating_sub(zip_after) / (g.live_rows() - live_after).max(1) as u64;
    let work = g.work.join(format!("measure-{runs}"));
    std::fs::create_dir_all(&work).unwrap();
    let store = tier1::store::local::LocalStore::open(&nights.store).unwrap();
    let state = store.load().unwrap();
    let zip = state
        .artifacts
        .iter()
        .filter(|a| a.name.contains("-history-") && !a.expired)
        .max_by_key(|a| a.id)
        .map(|a| store.artifact_path(a.id))
        .expect("the package");
    let live = g.live.clone();
    let doc = IndexDoc::load(&live).unwrap().unwrap();
    let fp = tier1::history_check::restorable::footprint(&live).unwrap();
    // Restore beside unzip -q of the same package, interleaved.
    let (mut restore, mut unzip, mut restore_kib, mut restore_heap) =
        (Vec::new(), Vec::new(), 0, 0);
    for i in 0..reps {
        let dest = work.join(format!("restored-{i}"));
        let (t, k, h) = child(
            "restore",
            &[("BENCH_STORE", s(&nights.store)), ("BENCH_DEST", s(&dest))],
        );
        restore.push(t);
        restore_kib = restore_kib.max(k);
        restore_heap = restore_heap.max(h);
        let _ = std::fs::remove_dir_all(&dest);
        let dir = work.join(format!("unzipped-{i}"));
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
        let _ = std::fs::remove_dir_all(&dir);
    }
    let repo = s(&nights.repo);
    // A publication that compacts (the package is full), and a promotion onto it (which compacts
    // too), the dashboard and the export of it.
    let cand = work.join("candidate");
    let next = g.candidate(&cand);
    let live_s = s(&live);
    let compacting = repeat(
        "publish",
        reps,
        &work,
        "compacted",
        &[
            ("BENCH_CAND", s(&cand)),
            ("BENCH_LIVE", live_s.clone()),
            ("BENCH_RUN", next),
        ],
    );
    let pcand = work.join("promotion-candidate");
    promotion_candidate(nights, &live, &pcand);
    let night = nights.promotable();
    let (evidence_name, evidence_digest) = night.evidence.clone().expect("evidence");
    let promote = repeat(
        "promote",
        reps.min(3),
        &work,
        "promoted",
        &[
            ("BENCH_CAND", s(&pcand)),
            ("BENCH_LIVE", live_s.clone()),
            ("BENCH_RUN", night.run_id.clone()),
            ("BENCH_WORKFLOW_RUN", night.workflow_run_id.to_string()),
            ("BENCH_EVIDENCE", s(&nights.promoted_evidence)),
            ("BENCH_EVIDENCE_NAME", evidence_name),
            ("BENCH_EVIDENCE_DIGEST", evidence_digest),
            ("BENCH_COMMIT", nights.commit.clone()),
            ("BENCH_REPO", repo.clone()),
        ],
    );
    let dashboard = repeat(
        "dashboard",
        reps,
        &work,
        "site",
        &[("BENCH_LIVE", live_s.clone()), ("BENCH_REPO", repo.clone())],
    );
    let export = repeat(
        "export",
        reps,
        &work,
        "export.zip",
        &[("BENCH_LIVE", live_s.clone())],
    );
    // A publication that does not compact: one night after the compaction.
    g.publish();
    let cand = work.join("candidate-steady");
    let next = g.candidate(&cand);
    let publish = repeat(
        "publish",
        reps,
        &work,
        "published",
        &[
            ("BENCH_CAND", s(&cand)),
            ("BENCH_LIVE", s(&g.live)),
            ("BENCH_RUN", next),
        ],
    );
    let _ = std::fs::remove_dir_all(&work);
    let (r, u) = (spread(restore), spread(unzip));
    Figures {
        runs: doc.total_run_count(),
        live_runs: doc.index.runs.len(),
        segments: doc.index.segments.len(),
        members: fp.members,
        expanded_bytes: fp.expanded_bytes,
        zip_bytes: zip_full,
        night_bytes,
        zip_bytes_after_compaction: zip_after,
        nights_per_cycle,
        restore: Op {
            time: r,
            kib: restore_kib,
            heap_kib: restore_heap,
        },
        unzip: u,
        ratio: r.1 / u.1,
        publish,
        compacting_publish: compacting,
        promote,
        dashboard,
        export,
    }
}
