//! Histories past restore's member cap: publishing into a synthetic history of thousands of runs
//! seals the old runs into segments (the chain runs through them), the package is one restore
//! accepts, restore verifies every segment by digest, and tampering with a sealed segment or with
//! its recorded digest is refused with every byte of the destination untouched.

use crate::restore_support::*;
use crate::support::exit_code::{Exit, exit_code};
use chrono::Duration;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tier1::store::local::NewRun;

/// A scene: a local store whose first nightly uploaded evidence only, a synthetic live history of
/// `runs` runs anchored to that evidence, and the candidate history of its next run.
pub struct Long {
    pub env: Env,
    pub live: PathBuf,
    pub cand: PathBuf,
    pub runs: usize,
}

impl Long {
    pub fn new(runs: usize) -> Long {
        let env = Env::new();
        let live = env.tmp.path().join("live");
        let cand = env.tmp.path().join("cand");
        env.nightly(
            t0(),
            "success",
            NewRun::new(WORKFLOW, "main", SHA_A),
            |ev, _| {
                write_history(&cand, runs + 1, &anchor(ev));
                HistoryUpload::None
            },
        );
        // The live history: the candidate without its newest run (files shared by hard links).
        tier1::fsx::link_tree(&cand, &live).expect("link");
        std::fs::remove_dir_all(live.join(run_id(runs))).expect("newest run");
        let mut idx = index(&cand);
        idx["runs"].as_array_mut().expect("runs").pop();
        std::fs::remove_file(live.join("index.json")).expect("unlink index");
        std::fs::write(
            live.join("index.json"),
            serde_json::to_vec_pretty(&idx).expect("json"),
        )
        .expect("index");
        Long {
            env,
            live,
            cand,
            runs,
        }
    }

    /// `tier1-publish` of the candidate's newest run onto `live`, into `out`.
    pub fn publish(&self, live: &Path, out: &Path) -> std::process::Output {
        self.publish_with_fault(live, out, "")
    }

    /// [`Long::publish`] with `TIER1_FAULT=fault` (docs/fault-injection.md; empty: none).
    pub fn publish_with_fault(&self, live: &Path, out: &Path, fault: &str) -> std::process::Output {
        let mut cmd = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-publish"));
        if !fault.is_empty() {
            cmd.env("TIER1_FAULT", fault);
        }
        cmd.arg("--candidate-history-root")
            .arg(&self.cand)
            .arg("--canonical-history-root")
            .arg(live)
            .arg("--output-history-root")
            .arg(out)
            .args(["--run-id", &run_id(self.runs)])
            .env("TIER1_LOG", "warn")
            .output()
            .expect("run tier1-publish")
    }

    /// Upload `tree` as the history of a successful nightly `days` after t0.
    pub fn upload(&self, tree: &Path, days: i64) {
        self.env.nightly(
            t0() + Duration::days(days),
            "success",
            NewRun::new(WORKFLOW, "main", SHA_A),
            |_, dir| {
                std::fs::remove_dir_all(dir).expect("clear");
                tier1::fsx::copy_tree(tree, dir).expect("copy");
                HistoryUpload::Dir
            },
        );
    }
}

fn index(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).expect("json")
}

/// Publish into a `runs`-run history and check the compacted package; returns the output root.
fn publish_compacted(l: &Long) -> PathBuf {
    let out = l.env.tmp.path().join("published");
    let o = l.publish(&l.live, &out);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let outcome = stdout_json(&o);
    assert_eq!(outcome["run_count"], l.runs + 1);
    let idx = index(&out);
    assert_eq!(idx["schema_version"], 3);
    let segs = idx["segments"].as_array().expect("segments");
    let sealed: usize = segs
        .iter()
        .map(|s| s["run_count"].as_u64().unwrap() as usize)
        .sum();
    let live = idx["runs"].as_array().unwrap().len();
    assert_eq!(sealed + live, l.runs + 1, "no run lost");
    assert!(live <= 200, "live runs after compaction: {live}");
    assert_eq!(outcome["runs_sealed"], sealed);
    let ids: Vec<&str> = idx["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[0], run_id(0), "the anchor stays live");
    assert_eq!(*ids.last().unwrap(), run_id(l.runs), "the new run is live");
    for s in segs {
        let p = out.join(s["path"].as_str().unwrap());
        assert!(p.is_file(), "{}", p.display());
        assert_eq!(s["format_version"], 2);
        assert!(
            s.get("run_ids").is_none(),
            "a format 2 record names no run ids"
        );
        for id in [&s["first_run_id"], &s["last_run_id"]] {
            assert!(
                !out.join(id.as_str().unwrap()).exists(),
                "sealed run left live"
            );
        }
    }
    let f = tier1::history_check::restorable::would_restore_accept(&out).expect("restorable");
    assert!(f.members < tier1::archive::MAX_MEMBERS / 2, "{f:?}");
    tier1::history_check::validate_history_root(&out).expect("valid");
    out
}

#[test]
fn a_3000_run_history_is_compacted_on_publication_and_restores() {
    let l = Long::new(3000);
    let out = publish_compacted(&l);
    // Deep: every segment opens, its rows chain, every file has its digest.
    let doc = tier1::history::package::IndexDoc::load(&out)
        .unwrap()
        .unwrap();
    let report = tier1::history_check::segments::check_deep(&out, &doc).expect("deep check");
    assert_eq!(report.runs, doc.sealed_run_count());
    l.upload(&out, 1);
    let dest = l.env.dest();
    let o = l.env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["anchor_run_id"], run_id(0));
    let idx = index(&out);
    assert_eq!(
        index(&dest)["segments"],
        idx["segments"],
        "sealed records restored as published"
    );
    for s in idx["segments"].as_array().unwrap() {
        let rel = s["path"].as_str().unwrap();
        assert!(
            std::fs::read(dest.join(rel)).unwrap() == std::fs::read(out.join(rel)).unwrap(),
            "{rel} restored byte for byte"
        );
    }
    let next = l.env.tmp.path().join("next");
    let o = crate::history_support::run(
        env!("CARGO_BIN_EXE_tier1-dashboard"),
        &[
            "--history-root".into(),
            dest.display().to_string(),
            "--output".into(),
            next.join("site").display().to_string(),
            "--now".into(),
            "2026-08-05T00:00:00Z".into(),
        ],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    assert_eq!(o.json()["total_runs"], 3001, "{}", o.stdout);
}

fn tampered_restore(l: &Long, out: &Path, edit: impl FnOnce(&Path), days: i64) -> String {
    let bad = l.env.tmp.path().join(format!("tampered-{days}"));
    tier1::fsx::copy_tree(out, &bad).unwrap();
    edit(&bad);
    l.upload(&bad, days);
    let dest = l.env.tmp.path().join(format!("dest-{days}"));
    let o = l.env.restore(t0() + Duration::days(days + 1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "failed integrity validation",
        &dest,
    );
    stderr(&o)
}

#[test]
fn a_tampered_segment_or_recorded_digest_is_refused() {
    let l = Long::new(1200);
    let out = publish_compacted(&l);
    let seg = index(&out)["segments"][0].clone();
    let seg_path = seg["path"].as_str().unwrap().to_string();
    // One byte of the sealed archive.
    let e = tampered_restore(
        &l,
        &out,
        |root| {
            let p = root.join(&seg_path);
            let mut b = std::fs::read(&p).unwrap();
            let n = b.len() / 2;
            b[n] ^= 0x01;
            std::fs::write(&p, b).unwrap();
        },
        3,
    );
    assert!(
        e.contains("archive digest mismatch") && e.contains("seg-000001"),
        "{e}"
    );
    // The recorded digest.
    let e = tampered_restore(
        &l,
        &out,
        |root| {
            let mut idx = index(root);
            idx["segments"][0]["digest"] = Value::from(format!("sha256:{}", "0".repeat(64)));
            std::fs::write(
                root.join("index.json"),
                serde_json::to_vec_pretty(&idx).unwrap(),
            )
            .unwrap();
        },
        5,
    );
    assert!(e.contains("seg-000001"), "{e}");
    // Both, consistently: a forged archive whose digest is recorded; the record's own link breaks.
    let e = tampered_restore(
        &l,
        &out,
        |root| {
            let p = root.join(&seg_path);
            std::fs::write(&p, b"forged").unwrap();
            let mut idx = index(root);
            idx["segments"][0]["digest"] =
                Value::from(tier1::digest::Digest::of_bytes(b"forged").to_string());
            idx["segments"][0]["bytes"] = Value::from(6);
            std::fs::write(
                root.join("index.json"),
                serde_json::to_vec_pretty(&idx).unwrap(),
            )
            .unwrap();
        },
        7,
    );
    assert!(e.contains("record link mismatch"), "{e}");
    // A segment removed with its record: the chain does not reach the live rows.
    let e = tampered_restore(
        &l,
        &out,
        |root| {
            std::fs::remove_file(root.join(&seg_path)).unwrap();
            let mut idx = index(root);
            idx["segments"].as_array_mut().unwrap().remove(0);
            std::fs::write(
                root.join("index.json"),
                serde_json::to_vec_pretty(&idx).unwrap(),
            )
            .unwrap();
        },
        9,
    );
    assert!(
        e.contains("hash chain") || e.contains("continues no link"),
        "{e}"
    );
    // An archive that index.json does not record.
    let e = tampered_restore(
        &l,
        &out,
        |root| std::fs::write(root.join("segments/seg-000099.tar.gz"), b"stray").unwrap(),
        13,
    );
    assert!(
        e.contains("segments/seg-000099.tar.gz") && e.contains("does not record"),
        "{e}"
    );
}
