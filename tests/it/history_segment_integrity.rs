//! Sealed segments are checked as deeply as the live runs where they are trusted: a segment
//! re-sealed with one file changed, or with two sealed runs swapped (its manifest, archive, and
//! record recomputed: digest, size, run ids, own link), a removed segment, a duplicated segment
//! (its record listed twice, or its archive copied under another name) and a run listed both live
//! and sealed are integrity failures (exit 4) for restore, publish, promote, the dashboard and
//! export, nothing written, and a failed night's package that fails them is refused, never
//! skipped to an older history.

use crate::history_support::*;
use crate::restore_support::{Env, WORKFLOW, assert_refused, t0};
use crate::support::exit_code::{Exit, exit_code};
use crate::support::segment_forge;
use chrono::Duration;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tier1::exit::Classify;
use tier1::store::local::NewRun;

/// A compacted live history of real-shaped fixture runs (an anchor, 400 accepted nights, then one
/// more publication that compacts): `(work dir, live root)`.
fn compacted(w: &Path) -> PathBuf {
    bootstrap_live(w, &w.join("live0"), &RunSpec::new("anchor", 0));
    let live = publish_on(w, &w.join("live0"), &RunSpec::new("nightly0", 1));
    crate::history_compaction_promote::clone_runs(&live, "nightly0", 400, 2);
    let spec = RunSpec {
        generated_at: "2026-08-17T00:00:00Z".into(),
        ..RunSpec::new("n1", 0)
    };
    let out = publish_on(w, &live, &spec);
    let idx = read(&out);
    assert!(
        !idx["segments"].as_array().unwrap().is_empty(),
        "the publication compacted"
    );
    out
}

fn read(root: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(root.join("index.json")).unwrap()).unwrap()
}

fn copy(from: &Path, to: &Path) -> PathBuf {
    tier1::fsx::copy_tree(from, to).unwrap();
    to.to_path_buf()
}

/// The refusals a tampered canonical history must meet outside restore: `tier1-publish` onto it,
/// `tier1-promote` onto it, `tier1-dashboard` and `tier1-export` of it, each exit 4 naming
/// `needle`, nothing written. The
/// candidates are the producer's of the untampered history `good` (the producer refuses the
/// tampered one itself).
fn refused_by_publish_promote_dashboard_export(w: &Path, good: &Path, bad: &Path, needle: &str) {
    let tag = bad.file_name().unwrap().to_string_lossy().into_owned();
    // Publication onto the tampered live history.
    let spec = RunSpec {
        generated_at: "2026-08-18T00:00:00Z".into(),
        ..RunSpec::new(&format!("p-{tag}"), 0)
    };
    let cand = w.join(format!("cand-p-{tag}"));
    candidate(Some(good), &cand, &spec);
    let out = w.join(format!("out-p-{tag}"));
    let e = tier1::publish::merge(
        &tier1::publish::MergeRequest {
            candidate_root: cand,
            canonical_root: bad.into(),
            output_root: out.clone(),
            run_id: spec.run_id.clone(),
            runner_class: None,
        },
        &suite(),
    )
    .expect_err("publication onto a tampered history");
    assert_eq!(e.exit(), tier1::Exit::Integrity, "publish: {e}");
    assert!(e.to_string().contains(needle), "publish: {e}");
    assert!(!out.exists(), "nothing published");
    // Promotion onto it.
    let spec = RunSpec {
        generated_at: "2026-08-18T01:00:00Z".into(),
        ..RunSpec::new(&format!("a-{tag}"), 0)
    };
    let cand = w.join(format!("cand-a-{tag}"));
    candidate(Some(good), &cand, &spec);
    evidence(&w.join(format!("ev-{tag}")), &spec);
    let out = w.join(format!("out-a-{tag}"));
    let e = tier1::promote::promote(&promote_request(
        &cand,
        &w.join(format!("ev-{tag}")),
        Some(bad),
        &out,
        &spec.run_id,
    ))
    .expect_err("promotion onto a tampered history");
    assert_eq!(e.exit(), tier1::Exit::Integrity, "promote: {e}");
    assert!(!out.exists(), "nothing promoted");
    // The dashboard of it.
    let site = w.join(format!("site-{tag}"));
    let o = run(
        env!("CARGO_BIN_EXE_tier1-dashboard"),
        &[
            "--history-root".into(),
            bad.display().to_string(),
            "--output".into(),
            site.display().to_string(),
            "--now".into(),
            "2026-08-20T00:00:00Z".into(),
        ],
    );
    assert_eq!(
        o.code,
        exit_code(Exit::Integrity),
        "dashboard: {}",
        o.stderr
    );
    assert!(o.stderr.contains(needle), "dashboard: {}", o.stderr);
    assert!(!site.exists(), "no dashboard written");
    // The export of it.
    let file = w.join(format!("export-{tag}.zip"));
    let o = crate::history_export::export(bad, &file);
    assert_eq!(o.code, exit_code(Exit::Integrity), "export: {}", o.stderr);
    assert!(o.stderr.contains(needle), "export: {}", o.stderr);
    assert!(
        !file.exists() && !w.join(format!("export-{tag}.zip.sha256")).exists(),
        "no export written"
    );
}

/// A local store holding the anchor's evidence and `good` as the history of a successful night,
/// then `bad` as the history of a night that concluded `bad_conclusion`.
fn store_with(good: &Path, bad: &Path, bad_conclusion: &str) -> Env {
    let env = Env::new();
    let store = env.store_at(t0());
    let run = store
        .create_run(&NewRun::new(WORKFLOW, "main", COMMIT))
        .unwrap();
    let ev = env.tmp.path().join("evidence.zip");
    std::fs::write(&ev, b"evidence of the anchor").unwrap();
    // The night's own evidence (it pairs with its history) and the anchor's.
    store
        .upload_file(run.id, &format!("tier1-evidence-{}-1", run.id), &ev, 90)
        .unwrap();
    let anchor_ev = store
        .upload_file(run.id, "tier1-evidence-anchor", &ev, 90)
        .unwrap();
    // The anchor was promoted with the fixture's persisted digest: the store's record says so
    // (restore compares the metadata, it never downloads old evidence).
    store
        .update(|state| {
            let a = state
                .artifacts
                .iter_mut()
                .find(|a| a.id == anchor_ev.id)
                .unwrap();
            a.digest = Some(DIGEST.into());
            Ok(())
        })
        .unwrap();
    store
        .upload_dir_zipped(run.id, &format!("tier1-history-{}-1", run.id), good, 90)
        .unwrap();
    store.complete_run(run.id, "success").unwrap();
    let store = env.store_at(t0() + Duration::days(1));
    let run = store
        .create_run(&NewRun::new(WORKFLOW, "main", COMMIT))
        .unwrap();
    store
        .upload_file(run.id, &format!("tier1-evidence-{}-1", run.id), &ev, 90)
        .unwrap();
    store
        .upload_dir_zipped(run.id, &format!("tier1-history-{}-1", run.id), bad, 90)
        .unwrap();
    store.complete_run(run.id, bad_conclusion).unwrap();
    env
}

/// Restore from `env` refuses with exit 4 naming `needle`, the destination left empty.
fn restore_refuses(env: &Env, needle: &str) {
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_refused(&o, exit_code(Exit::Integrity), needle, &dest);
}

#[test]
fn a_resealed_segment_is_refused_by_restore_publish_promote_the_dashboard_and_export() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let good = compacted(w);
    for (name, edit) in [
        (
            "one-file",
            segment_forge::change_one_file as fn(&mut _, &mut _),
        ),
        ("swapped", segment_forge::swap_two_runs),
    ] {
        let bad = copy(&good, &w.join(name));
        segment_forge::reseal(&bad, 0, edit);
        // The forgery is self-consistent: only the chain that binds the record can tell.
        let env = store_with(&good, &bad, "success");
        restore_refuses(&env, "seg-000001");
        refused_by_publish_promote_dashboard_export(w, &good, &bad, "seg-000001");
    }
}

#[test]
fn a_removed_segment_is_refused_even_from_a_failed_night() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let good = compacted(w);
    let bad = copy(&good, &w.join("removed"));
    let rel = read(&bad)["segments"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(bad.join(&rel)).unwrap();
    // From a failed night: refused, never skipped to the older (good) package.
    let env = store_with(&good, &bad, "failure");
    restore_refuses(&env, "seg-000001");
    refused_by_publish_promote_dashboard_export(w, &good, &bad, "seg-000001");
}

#[test]
fn a_duplicated_segment_is_refused_even_from_a_failed_night() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let good = compacted(w);
    // The record listed twice, exactly as recorded.
    let bad = copy(&good, &w.join("record-twice"));
    let mut idx = read(&bad);
    let segs = idx["segments"].as_array_mut().unwrap();
    segs.insert(1, segs[0].clone());
    std::fs::write(
        bad.join("index.json"),
        serde_json::to_vec_pretty(&idx).unwrap(),
    )
    .unwrap();
    let env = store_with(&good, &bad, "failure");
    restore_refuses(&env, "seg-000001");
    refused_by_publish_promote_dashboard_export(w, &good, &bad, "seg-000001");
    // The archive copied beside itself under another name, unrecorded.
    let bad = copy(&good, &w.join("archive-twice"));
    let rel = read(&bad)["segments"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let copy_rel = rel.replace("seg-000001", "seg-000001-copy");
    std::fs::copy(bad.join(&rel), bad.join(&copy_rel)).unwrap();
    let env = store_with(&good, &bad, "failure");
    restore_refuses(&env, "seg-000001-copy");
    refused_by_publish_promote_dashboard_export(w, &good, &bad, "seg-000001-copy");
}

#[test]
fn a_run_both_live_and_sealed_is_refused_even_from_a_failed_night() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    let good = compacted(w);
    let bad = copy(&good, &w.join("twice"));
    // A sealed run's row (exactly as sealed) listed live again, the chain relinked around it.
    let mut idx = read(&bad);
    let seg = &idx["segments"][0];
    let rel = seg["path"].as_str().unwrap().to_string();
    let members =
        tier1::history::segment_io::archive_members(&std::fs::read(bad.join(&rel)).unwrap())
            .unwrap();
    let manifest: Value = serde_json::from_slice(&members[0].1).unwrap();
    let run = &manifest["runs"][0];
    let id = run["row"]["run_id"].as_str().unwrap().to_string();
    for (name, body) in &members[1..] {
        if name.starts_with(&format!("{id}/")) {
            let p = bad.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
    }
    let rows = idx["runs"].as_array_mut().unwrap();
    rows.push(run["row"].clone());
    let n = rows.len();
    rows.swap(n - 1, n - 2);
    std::fs::write(
        bad.join("index.json"),
        serde_json::to_vec_pretty(&idx).unwrap(),
    )
    .unwrap();
    relink(&bad, n - 2);
    let env = store_with(&good, &bad, "failure");
    restore_refuses(&env, &id);
    refused_by_publish_promote_dashboard_export(w, &good, &bad, &id);
}

/// Recompute the links of the index from its live row `from` on, as a forger would after
/// inserting that row.
fn relink(root: &Path, from: usize) {
    let mut idx = read(root);
    let order = segment_forge::chain_order(&idx);
    let at = order.iter().position(|&o| o == (false, from)).unwrap();
    segment_forge::relink_from(&mut idx, &order, at);
    std::fs::write(
        root.join("index.json"),
        serde_json::to_vec_pretty(&idx).unwrap(),
    )
    .unwrap();
}
