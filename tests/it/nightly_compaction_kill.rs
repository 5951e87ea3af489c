//! Killing a compacting night (issue 38, "Checked by": kill -9 during a compacting night of
//! `tier1-nightly`). The local night whose publication seals runs into a segment is killed with
//! SIGKILL at points spread over its uninterrupted length; after each kill the store still
//! restores (the previous package or the night's whole one, never a part), and the same night
//! rerun publishes a compacted history. The store is put back as it was before the night between
//! kills, so every kill hits the compacting night.

use crate::history_compaction_faults::fingerprint;
use crate::nightly_compaction::{restore_local, segments, small_window_repo};
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{self, Repo, nightly_cmd, replace_tree};
use std::path::Path;
use std::time::Instant;

const KILLS: u32 = 4;

/// `tier1-restore` of the store's latest package into `dest`: its exit code and stderr.
fn restore(r: &Repo, dest: &Path) -> (i32, String) {
    let o = restore_local(r, dest);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn killing_a_compacting_night_loses_nothing_and_the_rerun_compacts() {
    let r = small_window_repo();
    let store = r.root.join(".tier1/store");
    let history = r.root.join(".tier1/history");
    let saved = r.root.join(".tier1/store-before");
    // Nights until one compacts, keeping the store as it was before each.
    let mut night = 0;
    let length = loop {
        night += 1;
        assert!(night <= 40, "no night compacted the history in 40 nights");
        if store.exists() {
            replace_tree(&store, &saved);
        }
        let started = Instant::now();
        let out = nightly_repo::nightly(&r, 2.0, &[]);
        assert_eq!(
            out.code,
            exit_code(Exit::Ok),
            "night {night}: {}",
            out.stderr
        );
        if !segments(&history).is_empty() || r.root.join(".tier1/store/vault").exists() {
            break started.elapsed();
        }
    };
    let before = fingerprint(&saved);
    let restored_before = r.root.join(".tier1/restored-before");
    replace_tree(&saved, &store);
    let (code, err) = restore(&r, &restored_before);
    assert_eq!(code, exit_code(Exit::Ok), "{err}");
    let index_before = std::fs::read(restored_before.join("index.json")).expect("index");
    let (mut published, mut not_yet) = (0, 0);
    for k in 0..KILLS {
        replace_tree(&saved, &store);
        assert!(fingerprint(&store) == before, "the store was put back");
        // Spread over the night's length, the last a little past the point it published.
        let delay = length.mul_f64((f64::from(k) + 0.5) / f64::from(KILLS));
        let mut child = nightly_cmd(&r, &[("TIER1_FAKE_SPEEDUP", "2".into())], &[])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn tier1-nightly");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // The store restores: the package before the night, or the night's whole package.
        let dest = r.root.join(format!(".tier1/restored-{k}"));
        let (code, err) = restore(&r, &dest);
        assert_eq!(code, exit_code(Exit::Ok), "kill {k} after {delay:?}: {err}");
        let index = std::fs::read(dest.join("index.json")).expect("index");
        if index == index_before {
            not_yet += 1;
        } else {
            tier1::history_check::validate_history_root(&dest)
                .unwrap_or_else(|e| panic!("kill {k} after {delay:?}: a partial package: {e}"));
            published += 1;
        }
        // The same night, rerun on what the kill left, publishes a compacted history.
        let out = nightly_repo::nightly(&r, 2.0, &[]);
        assert_eq!(
            out.code,
            exit_code(Exit::Ok),
            "the rerun after kill {k} at {delay:?}: {}",
            out.stderr
        );
        let idx: serde_json::Value =
            serde_json::from_slice(&std::fs::read(history.join("index.json")).unwrap()).unwrap();
        assert!(
            idx["segments"].as_array().is_some_and(|s| !s.is_empty()),
            "the rerun after kill {k} compacted: {idx}"
        );
        eprintln!("kill {k} at {delay:?} of {length:?}: store restored ok");
    }
    assert!(
        not_yet > 0,
        "no kill hit the night before it published (killed {KILLS} times, {published} published)"
    );
}
