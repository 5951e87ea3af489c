//! Fault figures: `tier1-publish` is killed with SIGKILL at 20 random points of a publication that
//! compacts, and after every kill the previous package still restores, unchanged, the live input
//! tree is byte-identical, and the output root holds nothing or a complete package (never a part
//! of one); then the next night (restore, publish, upload, restore) succeeds. The points are
//! spread over the measured length of an uninterrupted publication (and a little past its end);
//! the seed is printed (`TIER1_FAULT_SEED` replays a sequence).

use crate::history_compaction::Long;
use crate::restore_support::*;
use crate::support::exit_code::{Exit, exit_code};
use chrono::Duration;
use std::path::{Path, PathBuf};
use std::time::Instant;

const KILLS: usize = 20;

/// A suite of the synthetic histories' identity whose detection window is 2 runs: compaction
/// keeps a tail of 10 runs and starts beyond 30 live runs, so a short history compacts.
fn small_window_suite(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/suite.yaml");
    let text = std::fs::read_to_string(src).expect("fixture suite");
    let text = text.replace(
        "thresholds:\n  detection: reference\n",
        "thresholds:\n  detection: reference\n  history_window: 2\n",
    );
    assert!(
        text.contains("history_window: 2"),
        "the fixture suite changed"
    );
    let p = dir.join("suite.yaml");
    std::fs::write(&p, text).expect("suite");
    p
}

/// Every file under `root` with its digest, for byte-identical comparisons without dumping bytes.
pub(crate) fn fingerprint(root: &Path) -> Vec<(String, String)> {
    tier1::fsx::list_files(root)
        .expect("list")
        .into_iter()
        .map(|rel| {
            let d = tier1::digest::Digest::of_file(&root.join(&rel)).expect("digest");
            (rel, d.to_string())
        })
        .collect()
}

struct Rng(u64);

impl Rng {
    /// A uniform fraction in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn publish_cmd(l: &Long, suite: &Path, live: &Path, out: &Path) -> std::process::Command {
    let mut c = crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-publish"));
    c.arg("--candidate-history-root")
        .arg(&l.cand)
        .arg("--canonical-history-root")
        .arg(live)
        .arg("--output-history-root")
        .arg(out)
        .args(["--run-id", &run_id(l.runs)])
        .arg("--suite-config")
        .arg(suite)
        .env("TIER1_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    c
}

#[test]
fn killing_a_compacting_publication_at_20_points_loses_nothing() {
    let l = Long::new(60);
    let t = l.env.tmp.path().to_path_buf();
    let suite = small_window_suite(&t);
    // The previous night's package in the store, restored as the publication job restores it.
    l.upload(&l.live, 1);
    let restore_now = t0() + Duration::days(2);
    let live = t.join("restored-live");
    let o = l.env.restore(restore_now, &live, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let live_before = fingerprint(&live);
    // One uninterrupted publication: it compacts, and its length spreads the kill points.
    let probe = t.join("probe");
    let started = Instant::now();
    let status = publish_cmd(&l, &suite, &live, &probe)
        .status()
        .expect("publish");
    let length = started.elapsed();
    assert!(status.success());
    let idx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(probe.join("index.json")).unwrap()).unwrap();
    assert_eq!(idx["schema_version"], 3, "the probed publication compacts");
    let seed = std::env::var("TIER1_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x2545_f491_4f6c_dd1d_u64);
    eprintln!("fault seed {seed:#x}; uninterrupted publication {length:?}");
    let mut rng = Rng(seed);
    let (mut before_commit, mut complete) = (0, 0);
    for k in 0..KILLS {
        let out = t.join(format!("out-{k}"));
        let delay = length.mul_f64(1.1 * rng.next());
        let mut child = publish_cmd(&l, &suite, &live, &out).spawn().expect("spawn");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // The output root: nothing, or a whole package that validates.
        if out.exists() && !tier1::fsx::is_absent_or_empty(&out).unwrap() {
            tier1::history_check::validate_history_root(&out)
                .unwrap_or_else(|e| panic!("kill {k} after {delay:?} left a partial package: {e}"));
            complete += 1;
        } else {
            before_commit += 1;
        }
        assert!(
            live_before == fingerprint(&live),
            "kill {k}: the live input changed"
        );
        // The previous package still restores, unchanged.
        let again = t.join(format!("restored-{k}"));
        let o = l.env.restore(restore_now, &again, &[]);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Ok)),
            "kill {k}: {}",
            stderr(&o)
        );
        assert!(
            std::fs::read(again.join("index.json")).unwrap()
                == std::fs::read(live.join("index.json")).unwrap(),
            "kill {k}: the restored index differs"
        );
        eprintln!("kill {k} at {delay:?}");
    }
    eprintln!(
        "{KILLS} kills: {before_commit} before the output was renamed into place, {complete} after"
    );
    // The next night: publish into a fresh output root, upload, restore.
    let next = t.join("next");
    let status = publish_cmd(&l, &suite, &live, &next)
        .status()
        .expect("publish");
    assert!(status.success(), "the next night publishes");
    l.upload(&next, 3);
    let dest = t.join("after");
    let o = l.env.restore(t0() + Duration::days(4), &dest, &[]);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let v = tier1::history_check::validate_history_root(&dest).unwrap();
    assert!(v.doc.contains_run(&run_id(l.runs)));
    assert_eq!(v.doc.total_run_count(), l.runs + 1);
    assert!(!v.doc.index.segments.is_empty());
}
