//! Shared helpers of the restore tests and the core bench: valid synthetic history packages and a
//! local store populated like nightly runs would populate it.
#![allow(dead_code)]

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use tier1::history::model::IndexRow;
use tier1::history::package::{IndexDoc, run_path};
use tier1::store::local::{LocalStore, NewRun};
use tier1::store::{ArtifactMeta, WorkflowRun};

pub const REPO: &str = "owner/repo";
pub const WORKFLOW: &str = "tier1-nightly.yml";
pub const SHA_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const SHA_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
pub const TARGETS: usize = 6;

/// The fixed base time of every scenario.
pub fn t0() -> DateTime<Utc> {
    "2026-08-01T03:15:00Z".parse().expect("valid time")
}

/// An anchor a synthetic history points at.
#[derive(Debug, Clone)]
pub struct AnchorSpec {
    /// Commit the anchor's summary records.
    pub sha: String,
    /// Its evidence artifact name.
    pub evidence_name: String,
    /// A persisted digest (promotion), making the anchor an explicit `accept_history_anchor`.
    pub promoted_digest: Option<String>,
}

pub fn run_id(i: usize) -> String {
    format!("2026{:04}_031500_tier1_nightly_{i:05}", i % 10_000)
}

fn summary(id: &str, ts: &str, anchor: &AnchorSpec) -> Value {
    let targets: Vec<Value> = (0..TARGETS)
        .map(|k| {
            json!({
                "key": format!("target_{k}"), "target": format!("target_{k}"),
                "category": "kernel", "rationale": "synthetic", "status": "succeeded",
                "baseline_time_ms": 10.0 + k as f64, "best_speedup": 2.0,
                "best_optimized_time_ms": (10.0 + k as f64) / 2.0,
                "best_optimization": "optimized", "optimization_goal": "speed",
                "artifacts": {"result": format!("{id}/target_{k}.json")}
            })
        })
        .collect();
    json!({
        "suite_name": "tier1", "suite_version": 1, "description": "synthetic",
        "run_id": id, "generated_at": ts,
        "source_result_json": format!("{id}/result.json"),
        "source_manifest_json": format!("{id}/manifest.json"),
        "source_markdown_report": null,
        "source_git_commit": anchor.sha, "source_git_dirty": false,
        "source_manifest_git_commit": anchor.sha,
        "evidence_artifact_name": anchor.evidence_name,
        "targets": targets,
        "summary": {
            "target_count": TARGETS, "succeeded": TARGETS, "failed": 0, "skipped": 0, "missing": 0,
            "avg_speedup": 2.0, "median_speedup": 2.0, "geomean_speedup": 2.0,
            "representative_speedup": 2.0, "max_speedup": 2.0
        }
    })
}

fn write_json(root: &Path, rel: &str, v: &Value) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
}

/// Write a valid chained history of `runs` runs into `root`: the first run is the initial clean
/// anchor; with `anchor.promoted_digest` the last run is a promoted (explicitly accepted) anchor.
/// Every run records `anchor.sha` and `anchor.evidence_name`.
pub fn write_history(root: &Path, runs: usize, anchor: &AnchorSpec) {
    let mut doc = IndexDoc::new_chained("tier1", 1);
    // Rows are linked here one after the other (linear in the history's length, so histories of
    // tens of thousands of runs build in seconds), then set once.
    let mut rows: Vec<Value> = Vec::with_capacity(runs);
    let mut head: Option<String> = None;
    let first = run_id(0);
    for i in 0..runs {
        let id = run_id(i);
        let ts =
            (t0() + Duration::minutes(i as i64)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let promoted = anchor.promoted_digest.is_some() && i == runs - 1 && i > 0;
        write_json(
            root,
            &run_path(&id, "summary.json"),
            &summary(&id, &ts, anchor),
        );
        let baseline = if i == 0 {
            Value::Null
        } else {
            Value::from(first.clone())
        };
        let reg = json!({
            "baseline_run_id": baseline, "current_run_id": id,
            "regressions": [], "improvements": [], "anchor_declines": [], "new_targets": [],
            "missing_targets": [], "warnings": [], "suppressed_regressions": [], "rechecks": []
        });
        write_json(root, &run_path(&id, "regression_summary.json"), &reg);
        fs::write(
            root.join(run_path(&id, "regression_summary.md")),
            "# Regressions\n\nNone.\n",
        )
        .expect("md");
        write_json(
            root,
            &run_path(&id, "trend_snapshot.json"),
            &json!({"suite_name": "tier1"}),
        );
        let mut row = json!({
            "run_id": id, "generated_at": ts,
            "summary_path": run_path(&id, "summary.json"),
            "regression_summary_path": run_path(&id, "regression_summary.md"),
            "regression_json_path": run_path(&id, "regression_summary.json"),
            "trend_snapshot_path": run_path(&id, "trend_snapshot.json"),
            "avg_speedup": 2.0, "median_speedup": 2.0, "geomean_speedup": 2.0,
            "representative_speedup": 2.0, "max_speedup": 2.0,
            "succeeded": TARGETS, "failed": 0, "skipped": 0, "missing": 0,
            "run_accepted": true
        });
        let obj = row.as_object_mut().expect("object");
        if i == 0 {
            obj.insert("baseline_eligible".into(), true.into());
            obj.insert("baseline_acceptance".into(), "clean".into());
        } else if promoted {
            obj.insert("baseline_eligible".into(), true.into());
            obj.insert("baseline_acceptance".into(), "accept_history_anchor".into());
            obj.insert("baseline_acceptance_actor".into(), "dispatcher".into());
            obj.insert("baseline_acceptance_actor_role".into(), "requester".into());
            obj.insert(
                "baseline_acceptance_note".into(),
                "Reviewed the evidence".into(),
            );
            obj.insert(
                "baseline_acceptance_workflow_run".into(),
                "https://github.example/owner/repo/actions/runs/1".into(),
            );
            obj.insert(
                "baseline_evidence_digest".into(),
                anchor.promoted_digest.clone().expect("digest").into(),
            );
        }
        let row: IndexRow = serde_json::from_value(row).expect("row");
        let Ok(Value::Object(mut stored)) = serde_json::to_value(&row) else {
            panic!("a row serializes to an object")
        };
        head = Some(tier1::history::chain::seal(head.as_deref(), &mut stored));
        rows.push(Value::Object(stored));
    }
    doc.set_field("runs", Value::Array(rows)).expect("runs");
    fs::write(root.join("index.json"), doc.to_bytes().expect("bytes")).expect("index");
}

/// A scratch area with a local store.
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub store_dir: PathBuf,
    /// The artifact prefix the simulated nightlies upload under (`tier1` unless told otherwise).
    pub prefix: String,
}

/// What one simulated nightly uploaded.
#[derive(Debug, Clone)]
pub struct Published {
    pub run: WorkflowRun,
    pub evidence: ArtifactMeta,
    pub history: Option<ArtifactMeta>,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store_dir = tmp.path().join("store");
        LocalStore::create(&store_dir, REPO).expect("store");
        Env {
            tmp,
            store_dir,
            prefix: "tier1".into(),
        }
    }

    /// A store whose nightlies upload `<prefix>-evidence-*` and `<prefix>-history-*`.
    pub fn with_prefix(prefix: &str) -> Env {
        Env {
            prefix: prefix.into(),
            ..Env::new()
        }
    }

    pub fn store_at(&self, at: DateTime<Utc>) -> LocalStore {
        LocalStore::open(&self.store_dir)
            .expect("open")
            .with_now(at)
    }

    /// A fresh, absent destination path.
    pub fn dest(&self) -> PathBuf {
        self.tmp.path().join("out").join("history")
    }

    /// Simulate a run at `at`: evidence upload, then the history produced by `history` (given the
    /// run's evidence artifact name and a directory to fill; return false for no history upload,
    /// or write a raw archive with [`Env::raw_history`] instead), then completion with
    /// `conclusion` (none with [`IN_PROGRESS`]).
    pub fn nightly(
        &self,
        at: DateTime<Utc>,
        conclusion: &str,
        new_run: NewRun,
        history: impl FnOnce(&str, &Path) -> HistoryUpload,
    ) -> Published {
        let store = self.store_at(at);
        let run = store.create_run(&new_run).expect("run");
        let suffix = format!("{}-1", run.id);
        let ev_name = format!("{}-evidence-{suffix}", self.prefix);
        let ev_file = self.tmp.path().join(format!("evidence-{}.zip", run.id));
        fs::write(&ev_file, format!("evidence of run {}", run.id)).expect("evidence");
        let evidence = store
            .upload_file(run.id, &ev_name, &ev_file, 90)
            .expect("upload evidence");
        let dir = self.tmp.path().join(format!("hist-{}", run.id));
        fs::create_dir_all(&dir).expect("mkdir");
        let hist_name = format!("{}-history-{suffix}", self.prefix);
        let history = match history(&ev_name, &dir) {
            HistoryUpload::None => None,
            HistoryUpload::Dir => Some(
                store
                    .upload_dir_zipped(run.id, &hist_name, &dir, 90)
                    .expect("zip"),
            ),
            HistoryUpload::RawFile(p) => {
                Some(store.upload_file(run.id, &hist_name, &p, 90).expect("raw"))
            }
        };
        let run = if conclusion == IN_PROGRESS {
            run
        } else {
            store.complete_run(run.id, conclusion).expect("complete")
        };
        Published {
            run,
            evidence,
            history,
        }
    }

    /// A standard successful nightly at `at` whose history has `runs` runs anchored to this run's
    /// own evidence at commit `SHA_A`.
    pub fn good_nightly(&self, at: DateTime<Utc>, runs: usize) -> Published {
        self.nightly(
            at,
            "success",
            NewRun::new(WORKFLOW, "main", SHA_A),
            |ev, dir| {
                write_history(dir, runs, &anchor(ev));
                HistoryUpload::Dir
            },
        )
    }

    /// Write a zip with raw member names and bodies (for hostile archives).
    pub fn raw_zip(&self, name: &str, members: &[(&str, &[u8])]) -> PathBuf {
        let p = self.tmp.path().join(name);
        let f = fs::File::create(&p).expect("create");
        let mut zw = zip::ZipWriter::new(f);
        for (n, body) in members {
            zw.start_file(*n, zip::write::SimpleFileOptions::default())
                .expect("start");
            zw.write_all(body).expect("write");
        }
        zw.finish().expect("finish");
        p
    }

    /// Run `tier1-restore` against this store with the clock at `now`.
    pub fn restore(&self, now: DateTime<Utc>, dest: &Path, extra: &[&str]) -> Output {
        crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
            .arg("--store")
            .arg(format!("local:{}", self.store_dir.display()))
            .args([
                "--repository",
                REPO,
                "--branch",
                "main",
                "--current-run-id",
                "999999",
            ])
            .arg("--now")
            .arg(now.to_rfc3339())
            .arg("--destination")
            .arg(dest)
            .args(extra)
            .env_remove("GITHUB_ACTIONS")
            .env_remove("TIER1_STORE")
            .output()
            .expect("run tier1-restore")
    }
}

/// The `conclusion` of [`Env::nightly`] that leaves the run in progress (not completed yet).
pub const IN_PROGRESS: &str = "in_progress";

/// What a nightly uploads as its history.
pub enum HistoryUpload {
    None,
    Dir,
    RawFile(PathBuf),
}

/// The clean anchor spec for an evidence name at `SHA_A`.
pub fn anchor(evidence_name: &str) -> AnchorSpec {
    AnchorSpec {
        sha: SHA_A.into(),
        evidence_name: evidence_name.into(),
        promoted_digest: None,
    }
}

/// Parsed stdout JSON.
pub fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The destination must be absent or an empty directory.
pub fn assert_absent_or_empty(dest: &Path) {
    if dest.exists() {
        let n = fs::read_dir(dest).expect("read dest").count();
        assert_eq!(n, 0, "destination {} must be empty", dest.display());
    }
    if let Some(parent) = dest.parent()
        && parent.exists()
    {
        let stray: Vec<String> = fs::read_dir(parent)
            .expect("read parent")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tier1-"))
            .collect();
        assert!(stray.is_empty(), "stray temporary files: {stray:?}");
    }
}

/// Assert a refusal: exit code, a message fragment on stderr, nothing installed.
pub fn assert_refused(o: &Output, code: i32, fragment: &str, dest: &Path) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert!(
        err.contains(fragment),
        "expected {fragment:?} in stderr: {err}"
    );
    assert!(
        o.stdout.is_empty(),
        "no status JSON on refusal: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_absent_or_empty(dest);
}

/// stderr must contain `fragment`.
pub fn assert_stderr_has(o: &Output, fragment: &str) {
    let err = stderr(o);
    assert!(
        err.contains(fragment),
        "expected {fragment:?} in stderr: {err}"
    );
}

impl Env {
    /// A successful nightly at `at` whose 2-run history ends in a promoted anchor that persists
    /// `digest` for its evidence (this run's own evidence).
    pub fn promoted_nightly(&self, at: DateTime<Utc>, digest: &str) -> Published {
        self.nightly(
            at,
            "success",
            NewRun::new(WORKFLOW, "main", SHA_A),
            |ev, dir| {
                let mut a = anchor(ev);
                a.promoted_digest = Some(digest.to_string());
                write_history(dir, 2, &a);
                HistoryUpload::Dir
            },
        )
    }

    /// Change one stored artifact record (under the store lock).
    pub fn edit_artifact(&self, id: u64, f: impl FnOnce(&mut tier1::store::local::StoredArtifact)) {
        self.store_at(t0())
            .update(|s| {
                let a = s
                    .artifacts
                    .iter_mut()
                    .find(|a| a.id == id)
                    .expect("artifact");
                f(a);
                Ok(())
            })
            .expect("update store");
    }
}

impl Env {
    /// A successful canonical nightly at `at` whose 1-run history anchors to `evidence_name`
    /// (evidence uploaded by some other run).
    pub fn anchored_to(&self, at: DateTime<Utc>, evidence_name: &str) -> Published {
        self.nightly(
            at,
            "success",
            NewRun::new(WORKFLOW, "main", SHA_A),
            |_, dir| {
                write_history(dir, 1, &anchor(evidence_name));
                HistoryUpload::Dir
            },
        )
    }

    /// A canonical nightly at t0 with `conclusion` whose history artifact is the raw file `path`.
    pub fn raw_nightly(&self, conclusion: &str, path: &Path) -> Published {
        self.nightly(
            t0(),
            conclusion,
            NewRun::new(WORKFLOW, "main", SHA_A),
            |_, _| HistoryUpload::RawFile(path.to_path_buf()),
        )
    }

    /// A canonical nightly at `at` that uploads evidence only.
    pub fn evidence_only(&self, at: DateTime<Utc>, new_run: NewRun) -> Published {
        self.nightly(at, "success", new_run, |_, _| HistoryUpload::None)
    }
}
