//! A record that outlives the artifacts: `tier1-export` writes the whole verified history (live
//! runs and sealed segments) as one archive and its SHA-256, and `tier1-restore --from-export`
//! restores it on a machine with no store at all, refusing any change to the archive, its digest,
//! a sealed segment or its header, with the destination left absent or empty. An old (reference,
//! unchained) package still restores from a store, and exports.

use crate::history_compaction::Long;
use crate::history_support::{Ran, run, snapshot};
use crate::restore_support::*;
use crate::support::exit_code::{Exit, exit_code};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tier1::store::local::NewRun;

pub fn export(root: &Path, out: &Path) -> Ran {
    run(
        env!("CARGO_BIN_EXE_tier1-export"),
        &[
            "--history-root".into(),
            root.display().to_string(),
            "--output".into(),
            out.display().to_string(),
        ],
    )
}

/// `tier1-restore --from-export` with no store, no repository and no branch.
fn restore_export(file: &Path, dest: &Path, sha256: Option<&str>) -> Ran {
    let mut args = vec![
        "--from-export".to_string(),
        file.display().to_string(),
        "--destination".into(),
        dest.display().to_string(),
    ];
    if let Some(s) = sha256 {
        args.extend(["--sha256".into(), s.into()]);
    }
    run(env!("CARGO_BIN_EXE_tier1-restore"), &args)
}

fn refused(r: &Ran, code: i32, needle: &str, dest: &Path) {
    assert_eq!(r.code, code, "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains(needle),
        "expected {needle:?} in {}",
        r.stderr
    );
    assert!(r.stdout.trim().is_empty(), "{}", r.stdout);
    assert_absent_or_empty(dest);
}

/// A compacted history and its export (the published root, the archive, its digest).
pub fn exported(l: &Long) -> (PathBuf, PathBuf, String) {
    let out = l.env.tmp.path().join("published");
    let o = l.publish(&l.live, &out);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let file = l.env.tmp.path().join("exports/history-2026-08.zip");
    let r = export(&out, &file);
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    let digest = j["digest"].as_str().unwrap().to_string();
    assert_eq!(
        tier1::digest::Digest::of_file(&file).unwrap().to_string(),
        digest
    );
    let sidecar = std::fs::read_to_string(format!("{}.sha256", file.display())).unwrap();
    assert_eq!(
        sidecar,
        format!(
            "{}  history-2026-08.zip\n",
            digest.trim_start_matches("sha256:")
        )
    );
    assert_eq!(j["run_count"], l.runs + 1);
    assert!(j["segment_count"].as_u64().unwrap() >= 1, "{j}");
    assert_eq!(j["sealed_runs_checked"], j["sealed_run_count"]);
    (out, file, digest)
}

#[test]
fn an_export_restores_offline_on_a_machine_with_an_empty_store() {
    let l = Long::new(1200);
    let (out, file, digest) = exported(&l);
    // Another machine: nothing but the archive.
    let other = tempfile::tempdir().unwrap();
    let moved = other.path().join("export.zip");
    std::fs::copy(&file, &moved).unwrap();
    let dest = other.path().join("history");
    let r = restore_export(&moved, &dest, Some(&digest));
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "restored");
    assert_eq!(j["source"], "export");
    assert_eq!(j["export_digest_checked_against"], "--sha256");
    assert_eq!(j["anchor_evidence_checked"], false);
    assert_eq!(j["anchor_run_id"], run_id(0));
    assert_eq!(j["run_count"], l.runs + 1);
    let v = tier1::history_check::validate_history_root(&dest).expect("valid");
    assert_eq!(v.doc.total_run_count(), l.runs + 1);
    assert!(
        !dest
            .join(tier1::history::export_header::EXPORT_HEADER)
            .exists()
    );
    let segs = |root: &Path| {
        let i: Value =
            serde_json::from_slice(&std::fs::read(root.join("index.json")).unwrap()).unwrap();
        i["segments"].clone()
    };
    assert_eq!(segs(&dest), segs(&out));
    // The same export restored again gives the same tree, and exports of both the same bytes.
    let again = other.path().join("again");
    assert_eq!(
        restore_export(&moved, &again, Some(&digest)).code,
        exit_code(Exit::Ok)
    );
    assert!(
        snapshot(&again) == snapshot(&dest),
        "two restores of one export differ"
    );
    let (a, b) = (other.path().join("a.zip"), other.path().join("b.zip"));
    assert_eq!(
        export(&dest, &a).json()["digest"],
        export(&again, &b).json()["digest"]
    );
}

#[test]
fn a_changed_export_digest_segment_or_header_is_refused() {
    let l = Long::new(1200);
    let (out, file, digest) = exported(&l);
    let t = l.env.tmp.path();
    // A digest that is not the recorded one.
    let wrong = format!("sha256:{}", "0".repeat(64));
    refused(
        &restore_export(&file, &t.join("d1"), Some(&wrong)),
        exit_code(Exit::Integrity),
        "SHA-256 mismatch",
        &t.join("d1"),
    );
    // One byte of the archive, checked against its digest file.
    let flipped = t.join("flipped.zip");
    let mut b = std::fs::read(&file).unwrap();
    let n = b.len() / 3;
    b[n] ^= 0x20;
    std::fs::write(&flipped, b).unwrap();
    std::fs::copy(
        format!("{}.sha256", file.display()),
        format!("{}.sha256", flipped.display()),
    )
    .unwrap();
    refused(
        &restore_export(&flipped, &t.join("d2"), None),
        exit_code(Exit::Integrity),
        "SHA-256 mismatch",
        &t.join("d2"),
    );
    // A consistent archive (its own true digest) whose sealed segment was changed.
    let forged = forge(&out, t, "forged-segment", |tree| {
        let i: Value =
            serde_json::from_slice(&std::fs::read(tree.join("index.json")).unwrap()).unwrap();
        let p = tree.join(i["segments"][0]["path"].as_str().unwrap());
        let mut b = std::fs::read(&p).unwrap();
        let n = b.len() / 2;
        b[n] ^= 0x01;
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b).unwrap();
    });
    let d = tier1::digest::Digest::of_file(&forged).unwrap().to_string();
    refused(
        &restore_export(&forged, &t.join("d3"), Some(&d)),
        exit_code(Exit::Integrity),
        "archive digest mismatch",
        &t.join("d3"),
    );
    // A header that claims another history.
    let forged = forge(&out, t, "forged-header", |tree| {
        let p = tree.join(tier1::history::export_header::EXPORT_HEADER);
        let mut h: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        h["run_count"] = Value::from(5);
        std::fs::write(&p, serde_json::to_vec(&h).unwrap()).unwrap();
    });
    let d = tier1::digest::Digest::of_file(&forged).unwrap().to_string();
    refused(
        &restore_export(&forged, &t.join("d4"), Some(&d)),
        exit_code(Exit::Integrity),
        "run_count",
        &t.join("d4"),
    );
    // Not an export at all: a history package without a header.
    let bare = t.join("bare.zip");
    tier1::archive::write_deterministic_zip(&out, &bare).unwrap();
    let d = tier1::digest::Digest::of_file(&bare).unwrap().to_string();
    refused(
        &restore_export(&bare, &t.join("d5"), Some(&d)),
        exit_code(Exit::Integrity),
        "not a tier1 history export",
        &t.join("d5"),
    );
    let _ = digest;
}

/// The export of `out` with `edit` applied to its unpacked tree, re-zipped as `t/<name>.zip`.
pub fn forge(out: &Path, t: &Path, name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
    let file = t.join(format!("{name}-src.zip"));
    assert_eq!(export(out, &file).code, exit_code(Exit::Ok));
    let tree = t.join(name);
    let mut policy = tier1::archive::ExtractPolicy::history();
    policy.max_members += 1;
    tier1::archive::extract_safe(&file, &tree, &policy).unwrap();
    edit(&tree);
    let zip = t.join(format!("{name}.zip"));
    tier1::archive::write_deterministic_zip(&tree, &zip).unwrap();
    zip
}

#[test]
fn export_refuses_an_existing_output_and_an_invalid_history() {
    let l = Long::new(30);
    let t = l.env.tmp.path();
    let file = t.join("x.zip");
    std::fs::write(&file, b"keep").unwrap();
    let r = export(&l.live, &file);
    assert_eq!(r.code, exit_code(Exit::Conflict), "{}", r.stderr);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    let broken = t.join("broken");
    tier1::fsx::copy_tree(&l.live, &broken).unwrap();
    let mut i: Value =
        serde_json::from_slice(&std::fs::read(broken.join("index.json")).unwrap()).unwrap();
    i["runs"][3]["max_speedup"] = Value::from(9.0);
    std::fs::write(broken.join("index.json"), serde_json::to_vec(&i).unwrap()).unwrap();
    let r = export(&broken, &t.join("y.zip"));
    assert_eq!(r.code, exit_code(Exit::Integrity), "{}", r.stderr);
    assert!(r.stderr.contains("hash chain"), "{}", r.stderr);
    assert!(!t.join("y.zip").exists() && !t.join("y.zip.sha256").exists());
}

#[test]
fn an_old_reference_package_still_restores_and_exports() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dashboard/history");
    let env = Env::new();
    // The anchor's evidence, named as its summary records, from a run at its commit.
    let store = env.store_at(t0());
    let run = store
        .create_run(&NewRun::new(WORKFLOW, "main", SHA_A))
        .unwrap();
    let ev = env.tmp.path().join("ev.zip");
    std::fs::write(&ev, b"anchor evidence").unwrap();
    let meta = store
        .upload_file(run.id, "tier1-evidence-aaaaaaaa-1", &ev, 90)
        .unwrap();
    store.complete_run(run.id, "success").unwrap();
    env.edit_artifact(meta.id, |a| {
        a.digest = Some(format!("sha256:{}", "b".repeat(64)))
    });
    env.nightly(
        t0(),
        "success",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |_, dir| {
            std::fs::remove_dir_all(dir).unwrap();
            tier1::fsx::copy_tree(&fixture, dir).unwrap();
            HistoryUpload::Dir
        },
    );
    let dest = env.dest();
    let o = env.restore(t0() + chrono::Duration::days(1), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(
        stdout_json(&o)["anchor_run_id"],
        "20260601_031500_tier1_nightly_aaaaaaaa"
    );
    let file = env.tmp.path().join("old.zip");
    let r = export(&dest, &file);
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(r.json()["segment_count"], 0);
    let again = env.tmp.path().join("again");
    let r = restore_export(&file, &again, None);
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(r.json()["export_digest_checked_against"], "digest file");
    assert_eq!(r.json()["run_count"], 4);
}
