//! Sealed history leaves the package only for the vault (docs/formats.md, "A history that
//! lasts"): a published package keeps its new segment until `tier1-vault` stored it; restore then
//! checks it by the vault's metadata (never downloading it), leaves the archive out of the tree it
//! restores and records the segment as vaulted, and the next publication carries only the record.
//! A vaulted segment the vault lost, or whose vault object holds other bytes, is refused (exit 4)
//! with the destination left empty; `tier1-vault --deep` opens the vault's copies. A schema_version
//! 2 package (an older tier1's) restores, publishes as version 3, and its archives then vault too.

use crate::history_compaction::Long;
use crate::history_support::{Ran, run};
use crate::restore_support::*;
use crate::support::exit_code::{Exit, exit_code};
use chrono::Duration;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tier1::store::local::NewRun;

fn index(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).expect("index")).expect("json")
}

/// `tier1-vault` of `root` into the local store of `env`.
fn vault(env: &Env, root: &Path, extra: &[&str]) -> Ran {
    let mut args = vec![
        "--history-root".to_string(),
        root.display().to_string(),
        "--store".into(),
        format!("local:{}", env.store_dir.display()),
        "--repository".into(),
        REPO.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    run(env!("CARGO_BIN_EXE_tier1-vault"), &args)
}

/// The vault object files of the store (`<name>.json`, `<name>.bin`).
fn vault_files(env: &Env) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(env.store_dir.join("vault"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The producer's candidate of synthetic run `k` (as `Long` writes them) on top of `live`.
fn candidate_of(l: &Long, live: &Path, k: usize) -> PathBuf {
    let syn = l.env.tmp.path().join(format!("synthetic-{k}"));
    write_history(&syn, k + 1, &anchor("tier1-evidence-1-1"));
    let cand = l.env.tmp.path().join(format!("candidate-{k}"));
    tier1::fsx::copy_tree(live, &cand).unwrap();
    let id = run_id(k);
    tier1::fsx::copy_tree(&syn.join(&id), &cand.join(&id)).unwrap();
    let full = tier1::history::package::IndexDoc::load(&syn)
        .unwrap()
        .unwrap();
    let mut doc = tier1::history::package::IndexDoc::load(&cand)
        .unwrap()
        .unwrap();
    let mut row = full.row(&id).unwrap().clone();
    row.chain_sha256 = None;
    doc.push_row(&row).unwrap();
    std::fs::write(cand.join("index.json"), doc.to_bytes().unwrap()).unwrap();
    cand
}

/// `tier1-publish` of synthetic run `k` onto `live`, into `out`.
fn publish_next(l: &Long, live: &Path, k: usize, out: &Path) {
    let cand = candidate_of(l, live, k);
    let o = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-publish"))
        .arg("--candidate-history-root")
        .arg(&cand)
        .arg("--canonical-history-root")
        .arg(live)
        .arg("--output-history-root")
        .arg(out)
        .args(["--run-id", &run_id(k)])
        .env("TIER1_LOG", "warn")
        .output()
        .expect("run tier1-publish");
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
}

/// A 400-run history published once (its compaction sealed one segment, pending in the package),
/// uploaded as a successful night: `(scene, published root)`.
fn published() -> (Long, PathBuf) {
    let l = Long::new(400);
    let out = l.env.tmp.path().join("published");
    let o = l.publish(&l.live, &out);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let idx = index(&out);
    assert_eq!(idx["schema_version"], 3);
    assert_eq!(idx["segments"].as_array().unwrap().len(), 1, "{idx}");
    assert!(out.join("segments/seg-000001.tar.gz").is_file());
    l.upload(&out, 1);
    (l, out)
}

#[test]
fn a_segment_leaves_the_package_only_once_the_vault_holds_it() {
    let (l, out) = published();
    // Before the vault holds it, restore keeps the archive (pending).
    let dest = l.env.tmp.path().join("before-vault");
    let o = l.env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(j["segments_pending"], 1, "{j}");
    assert_eq!(j["segments_vaulted"], 0, "{j}");
    assert!(dest.join("segments/seg-000001.tar.gz").is_file());
    assert!(index(&dest).get("vaulted").is_none());
    // The vault job stores it, the vault's metadata equal to the chained record.
    let v = vault(&l.env, &out, &[]);
    assert_eq!(v.code, exit_code(Exit::Ok), "{}", v.stderr);
    assert_eq!(
        v.json()["stored"],
        serde_json::json!(["seg-000001"]),
        "{}",
        v.stdout
    );
    let record = &index(&out)["segments"][0];
    let hex = record["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:");
    let name = format!("tier1-segment-{hex}");
    assert!(
        vault_files(&l.env).contains(&l.env.store_dir.join(format!("vault/{name}.json"))),
        "{:?}",
        vault_files(&l.env)
    );
    // Again: nothing to store, it is there already.
    let again = vault(&l.env, &out, &[]);
    assert_eq!(again.code, exit_code(Exit::Ok), "{}", again.stderr);
    assert_eq!(
        again.json()["already_vaulted"],
        serde_json::json!(["seg-000001"])
    );
    // Restore now checks it by metadata and leaves the archive out of the restored tree.
    let dest = l.env.tmp.path().join("after-vault");
    let o = l.env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(
        j["segments_left_in_vault"],
        serde_json::json!(["seg-000001"]),
        "{j}"
    );
    assert!(
        !dest.join("segments").exists(),
        "the archive left the package"
    );
    let idx = index(&dest);
    assert_eq!(idx["vaulted"], serde_json::json!(["seg-000001"]));
    assert_eq!(
        idx["segments"],
        index(&out)["segments"],
        "the record stays, chained"
    );
    tier1::history_check::validate_history_root(&dest).expect("a vaulted history validates");
    // The next publication carries the record only, and its package restores.
    let next = l.env.tmp.path().join("next");
    publish_next(&l, &dest, l.runs + 1, &next);
    assert!(!next.join("segments").exists());
    let before = tier1::history_check::restorable::footprint(&out).unwrap();
    let after = tier1::history_check::restorable::footprint(&next).unwrap();
    // One run more and two rewritten trend snapshots (a few tens of KB), the archive less.
    let archive = record["bytes"].as_u64().unwrap();
    assert!(
        after.expanded_bytes < before.expanded_bytes,
        "the package shrank by the archive ({archive} bytes): {before:?} -> {after:?}"
    );
    l.upload(&next, 3);
    let dest = l.env.tmp.path().join("third");
    let o = l.env.restore(t0() + Duration::days(4), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["segments_vaulted"], 1);
    // The deep check opens the vault's copy.
    let deep = vault(&l.env, &next, &["--deep"]);
    assert_eq!(deep.code, exit_code(Exit::Ok), "{}", deep.stderr);
    let j = deep.json();
    assert_eq!(j["vaulted_checked"], 1, "{j}");
    assert_eq!(j["deep_checked_segments"], 1, "{j}");
    assert_eq!(
        j["deep_checked_runs"], record["run_count"],
        "every sealed run checked whole"
    );
}

/// `published()`, vaulted, restored (archive left out) and published again: the package whose
/// segment lives in the vault only, uploaded as the night of day 3.
fn vaulted() -> (Long, PathBuf) {
    let (l, out) = published();
    assert_eq!(vault(&l.env, &out, &[]).code, exit_code(Exit::Ok));
    let dest = l.env.tmp.path().join("restored");
    let o = l.env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let next = l.env.tmp.path().join("next");
    publish_next(&l, &dest, l.runs + 1, &next);
    l.upload(&next, 3);
    (l, next)
}

#[test]
fn a_vaulted_segment_the_vault_lost_or_changed_is_refused() {
    let (l, next) = vaulted();
    let files = vault_files(&l.env);
    let record = files
        .iter()
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap()
        .clone();
    let bytes = record.with_extension("bin");
    // The vault's record says other bytes: refused, by metadata alone.
    let saved = std::fs::read(&record).unwrap();
    let mut v: Value = serde_json::from_slice(&saved).unwrap();
    v["digest"] = Value::from(format!("sha256:{}", "0".repeat(64)));
    std::fs::write(&record, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let dest = l.env.tmp.path().join("changed");
    let o = l.env.restore(t0() + Duration::days(4), &dest, &[]);
    assert_refused(&o, exit_code(Exit::Integrity), "seg-000001", &dest);
    assert_stderr_has(&o, "not the sealed segment");
    let v = vault(&l.env, &next, &[]);
    assert_eq!(v.code, exit_code(Exit::Integrity), "{}", v.stderr);
    std::fs::write(&record, &saved).unwrap();
    // The vault's bytes changed behind its record: metadata cannot tell, the deep check does.
    let original = std::fs::read(&bytes).unwrap();
    let mut flipped = original.clone();
    let n = flipped.len() / 2;
    flipped[n] ^= 1;
    std::fs::write(&bytes, &flipped).unwrap();
    let deep = vault(&l.env, &next, &["--deep"]);
    assert_eq!(deep.code, exit_code(Exit::Integrity), "{}", deep.stderr);
    assert!(deep.stderr.contains("seg-000001"), "{}", deep.stderr);
    std::fs::write(&bytes, &original).unwrap();
    // The vault lost it (its release deleted): refused, never restored without it.
    std::fs::remove_file(&record).unwrap();
    std::fs::remove_file(&bytes).unwrap();
    let dest = l.env.tmp.path().join("lost");
    let o = l.env.restore(t0() + Duration::days(4), &dest, &[]);
    assert_refused(&o, exit_code(Exit::Integrity), "seg-000001", &dest);
    assert_stderr_has(&o, "the vault has no object");
    // From a failed night too: refused, not skipped to an older package.
    l.env.nightly(
        t0() + Duration::days(5),
        "failure",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |_, dir| {
            std::fs::remove_dir_all(dir).unwrap();
            tier1::fsx::copy_tree(&next, dir).unwrap();
            HistoryUpload::Dir
        },
    );
    let dest = l.env.tmp.path().join("failed-night");
    let o = l.env.restore(t0() + Duration::days(6), &dest, &[]);
    assert_refused(&o, exit_code(Exit::Integrity), "seg-000001", &dest);
}

#[test]
fn a_schema_2_package_restores_publishes_as_3_and_then_vaults() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/v2-compacted");
    assert_eq!(index(&fixture)["schema_version"], 2);
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    // The fixture's anchor was promoted with the fixture digest (history_support::DIGEST); its
    // evidence is named tier1-evidence-anchor, at the fixture commit.
    let env = Env::new();
    let store = env.store_at(t0());
    let run = store
        .create_run(&NewRun::new(
            WORKFLOW,
            "main",
            crate::history_support::COMMIT,
        ))
        .unwrap();
    let ev = w.join("ev.zip");
    std::fs::write(&ev, b"evidence").unwrap();
    store
        .upload_file(run.id, &format!("tier1-evidence-{}-1", run.id), &ev, 90)
        .unwrap();
    let a = store
        .upload_file(run.id, "tier1-evidence-anchor", &ev, 90)
        .unwrap();
    store
        .update(|s| {
            let x = s.artifacts.iter_mut().find(|x| x.id == a.id).unwrap();
            x.digest = Some(crate::history_support::DIGEST.into());
            Ok(())
        })
        .unwrap();
    store
        .upload_dir_zipped(run.id, &format!("tier1-history-{}-1", run.id), &fixture, 90)
        .unwrap();
    store.complete_run(run.id, "success").unwrap();
    // It restores as it is (a version 2 index cannot list vaulted segments).
    let dest = w.join("restored");
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    assert_eq!(index(&dest)["schema_version"], 2);
    assert_eq!(stdout_json(&o)["segments_pending"], 1);
    // A publication onto it writes version 3: the records become items of the chain.
    let spec = crate::history_support::RunSpec {
        generated_at: "2026-08-18T00:00:00Z".into(),
        ..crate::history_support::RunSpec::new("after-upgrade", 0)
    };
    let cand = w.join("cand");
    crate::history_support::candidate(Some(&dest), &cand, &spec);
    let out = w.join("published");
    tier1::publish::merge(
        &tier1::publish::MergeRequest {
            candidate_root: cand,
            canonical_root: dest.clone(),
            output_root: out.clone(),
            run_id: spec.run_id.clone(),
            runner_class: None,
        },
        &crate::history_support::suite(),
    )
    .expect("publication onto a version 2 package");
    let idx = index(&out);
    assert_eq!(idx["schema_version"], 3);
    let seg = &idx["segments"][0];
    assert_eq!(seg["format_version"], 1, "the sealed archive is unchanged");
    assert!(
        seg["chart"].is_object(),
        "the record gained its chart summary"
    );
    assert_eq!(
        seg["digest"],
        index(&fixture)["segments"][0]["digest"],
        "the same archive"
    );
    let doc = tier1::history::package::IndexDoc::load(&out)
        .unwrap()
        .unwrap();
    let deep = tier1::history_check::segments::check_deep(&out, &doc).expect("deep check");
    assert_eq!(deep.runs, 37);
    // Its archive then vaults like any other.
    let v = vault(&env, &out, &[]);
    assert_eq!(v.code, exit_code(Exit::Ok), "{}", v.stderr);
    assert_eq!(v.json()["stored"], serde_json::json!(["seg-000001"]));
}
