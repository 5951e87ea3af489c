//! The build cache as an attacker who can write it (a shared `$RUNNER_TOOL_CACHE`) would try it,
//! through the real `tier1-bisect` over a synthetic history: a symbolic link planted at a lock
//! file or an entry is never followed (the file or directory it names keeps every byte); an
//! entry whose completion marker was re-digested around a planted file is not trusted, so it is
//! built again from nothing and the planted file is never used; and an entry that another builder
//! signed (`tier1-bisect`'s, for the nightly's side by side) is built again rather than reused.

use crate::bisect_cli::Run;
use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::synthetic_history::{self as sh, History, Spec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tier1::sidebyside::{Builder, Cause, ConfirmRequest, DecideOn, confirm};

fn spec() -> Spec {
    crate::bisect_cli::spec(4, 2)
}

fn cache(h: &History) -> PathBuf {
    h.tmp.path().join("cache")
}

/// `tier1-bisect` of the whole history (good: the first commit, bad: the last) into `out`.
fn bisect(h: &History, out: &str) -> Run {
    let out = h.tmp.path().join(out);
    crate::bisect_cli::bisect(h, &h.commits[0], h.commits.last().unwrap(), &out, &[])
}

fn found_the_culprit(r: &Run, h: &History) {
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(r.json["status"], "found", "{}", r.json);
    assert_eq!(r.json["culprit"], h.commits[2].as_str(), "{}", r.json);
}

#[test]
fn links_planted_at_a_lock_or_an_entry_are_never_followed() {
    let h = sh::create(&spec());
    let c = cache(&h);
    std::fs::create_dir_all(&c).unwrap();
    let victims = h.tmp.path().join("victims");
    std::fs::create_dir_all(victims.join("dir")).unwrap();
    for v in ["entry_lock", "mirror_lock", "dir/file"] {
        std::fs::write(victims.join(v), b"25 bytes of precious data").unwrap();
    }
    let link = |target: &str, at: PathBuf| std::os::unix::fs::symlink(victims.join(target), at);
    link("entry_lock", c.join(format!("{}.lock", h.commits[0]))).unwrap();
    link("mirror_lock", c.join("repo.lock")).unwrap();
    link("dir", c.join(&h.commits[0])).unwrap();
    let before = crate::support::faults::snapshot(&victims);
    let r = bisect(&h, "out");
    found_the_culprit(&r, &h);
    crate::support::faults::assert_unchanged(&before, &victims, "the files the links named");
    for lock in [format!("{}.lock", h.commits[0]), "repo.lock".into()] {
        let m = std::fs::symlink_metadata(c.join(&lock)).unwrap();
        assert!(m.is_file(), "{lock} is a real file now");
    }
    assert!(
        std::fs::symlink_metadata(c.join(&h.commits[0]))
            .unwrap()
            .is_dir()
    );
}

/// The good commit's completion marker and its path.
fn marker(h: &History) -> (PathBuf, Value) {
    let entry = cache(h).join(&h.commits[0]);
    let path = std::fs::read_dir(&entry)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("build-") && n.ends_with(".json")
        })
        .expect("a completion marker");
    let v = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (path, v)
}

#[test]
fn a_re_digested_marker_is_not_trusted_and_the_planted_file_never_used() {
    let h = sh::create(&spec());
    found_the_culprit(&bisect(&h, "first"), &h);
    // Plant a file in the good commit's worktree (it makes the command fail: a stand-in for a
    // planted program) and record it as an output, its digest and the combined digest redone.
    let src = cache(&h).join(&h.commits[0]).join("src");
    std::fs::write(src.join("crash.txt"), b"planted\n").unwrap();
    let (path, mut m) = marker(&h);
    let d = tier1::digest::Digest::of_file(&src.join("crash.txt")).unwrap();
    let outputs = m["outputs"].as_object_mut().unwrap();
    outputs.insert("src/crash.txt".into(), Value::from(d.to_string()));
    let sorted: BTreeMap<String, String> = outputs
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let lines: String = sorted.iter().map(|(p, d)| format!("{p}\0{d}\n")).collect();
    m["outputs_digest"] =
        Value::from(tier1::digest::Digest::of_bytes(lines.as_bytes()).to_string());
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();

    let r = bisect(&h, "second");
    found_the_culprit(&r, &h);
    assert!(
        r.stderr.contains("not trusted") && r.stderr.contains("building it again"),
        "{}",
        r.stderr
    );
    assert!(r.json["builds"].as_u64().unwrap() >= 1, "{}", r.json);
    assert!(!src.join("crash.txt").exists(), "the planted file went");
    let (_, rebuilt) = marker(&h);
    assert!(rebuilt["outputs"].get("src/crash.txt").is_none());
}

fn confirm_as(h: &History, builder: Builder, ev: &Path) -> tier1::sidebyside::SideBySideOutcome {
    let suite =
        tier1::suite::Suite::load(&h.repo.join("configs/benchmark_suites/synthetic.yaml")).unwrap();
    confirm(&ConfirmRequest {
        suite: &suite,
        profile: "cpu",
        target_key: "loop",
        current_commit: &h.commits[1],
        anchor_commit: &h.commits[0],
        repo_root: &h.repo,
        cache_dir: &cache(h),
        evidence_dir: ev,
        budget: tier1::sidebyside::Budget {
            seconds: 30.0,
            min_rounds: 6,
            max_rounds: 40,
            precision_pct: 1.0,
            confidence: 0.95,
        },
        threshold_pct: 5.0,
        seed: 3,
        decide_on: DecideOn::Both,
        extra_seconds: 0.0,
        builder,
        state_dir: Some(Path::new(command::STATE_DIR)),
    })
}

#[test]
fn the_nightly_does_not_trust_an_entry_a_bisection_built() {
    let h = sh::create(&spec());
    found_the_culprit(&bisect(&h, "bisect"), &h);
    // The side by side of a night, on the cache the bisection filled: both entries are built
    // again under the night's own key, then reused by the next comparison.
    let o = confirm_as(&h, Builder::SideBySide, &h.tmp.path().join("ev1"));
    assert_ne!(o.cause, Some(Cause::BuildFailed), "{o:#?}");
    assert_eq!(o.builds.len(), 2, "{o:#?}");
    assert!(o.builds.iter().all(|b| !b.reused), "{o:#?}");
    let o = confirm_as(&h, Builder::SideBySide, &h.tmp.path().join("ev2"));
    assert!(o.builds.iter().all(|b| b.reused), "{o:#?}");
}
