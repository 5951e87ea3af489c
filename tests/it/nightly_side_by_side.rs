//! Side by side in the night's verdict, through the real `tier1-nightly` binary on a git checkout
//! of the deterministic fixture suite: a 30 % slowdown committed after the anchor is a confirmed
//! regression decided side by side (exit 1); unchanged code whose history comparison is suspect
//! is cleared side by side (exit 0, never an anchor); an anchor commit that does not build is
//! `unknown` with the reason, never a pass; `side_by_side: off` records why nothing ran; and a
//! tampered side-by-side record makes promotion refuse.

use crate::history_support::Scene;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{Repo, git, nightly, nightly_with, repo};
use serde_json::Value;

/// The fixture checkout with side by side on (`auto`), one pass per anchor candidate, and the
/// given extra suite lines; committed.
pub(crate) fn checkout(extra: &str) -> Repo {
    let r = repo();
    let p = r.root.join("suite.yaml");
    let suite = std::fs::read_to_string(&p).unwrap();
    let on = suite
        .replace(
            "side_by_side: off\n",
            &format!("side_by_side: auto\n{extra}"),
        )
        .replace(
            "    budget_s: 1\n",
            "    budget_s: 1\n    anchor_passes: 1\n",
        );
    assert_ne!(on, suite);
    std::fs::write(&p, on).unwrap();
    git(&r.root, &["commit", "-qam", "side by side on"]);
    r
}

/// Commit a change of the fixture target's default baseline time (a slowdown in the code).
pub(crate) fn commit_baseline_ms(r: &Repo, ms: &str) {
    let p = r.root.join("fixed_target.py");
    let src = std::fs::read_to_string(&p).unwrap();
    let slow = src.replace(
        "os.environ.get(\"TIER1_FAKE_BASELINE_MS\", \"10\")",
        &format!("os.environ.get(\"TIER1_FAKE_BASELINE_MS\", \"{ms}\")"),
    );
    assert_ne!(slow, src);
    std::fs::write(&p, slow).unwrap();
    git(&r.root, &["commit", "-qam", &format!("baseline {ms} ms")]);
}

pub(crate) fn regression_summary(r: &Repo, run_id: &str) -> Value {
    let p = r
        .root
        .join(format!(".tier1/history/{run_id}/regression_summary.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

pub(crate) fn bootstrap(r: &Repo) -> String {
    let o = nightly(r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    o.json["run_id"].as_str().unwrap().to_string()
}

#[test]
fn a_slowdown_committed_after_the_anchor_is_confirmed_side_by_side() {
    let r = checkout("");
    let anchor_commit = git(&r.root, &["rev-parse", "HEAD"]);
    bootstrap(&r);
    commit_baseline_ms(&r, "13");
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let id = o.json["run_id"].as_str().unwrap();
    let reg = regression_summary(&r, id);
    let b = &reg["side_by_side"];
    assert_eq!(b["enabled"], true, "{b}");
    assert_eq!(b["anchor_commit"], anchor_commit.as_str());
    let checks = b["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{b}");
    for c in checks {
        assert_eq!(c["verdict"], "worse", "{c}");
        let t = c["optimized_time_ratio"]["ratio"].as_f64().unwrap();
        assert!((t - 1.3).abs() < 1e-6, "{c}");
        assert!(c["rounds"].as_u64().unwrap() >= 10, "{c}");
        let dir = c["evidence_dir"].as_str().unwrap();
        assert_eq!(
            dir,
            format!("{id}/sidebyside/{}", c["key"].as_str().unwrap())
        );
    }
    assert!(!reg["regressions"].as_array().unwrap().is_empty());
    let md = std::fs::read_to_string(
        r.root
            .join(format!(".tier1/history/{id}/regression_summary.md")),
    )
    .unwrap();
    assert!(
        md.contains("## Side By Side With The Anchor's Code"),
        "{md}"
    );
    assert!(md.contains("fixtures/fixed:fixed_a: worse"), "{md}");
    // Ratified through promotion, which recomputes the side-by-side verdicts and checks each
    // record against its outcome in the evidence package.
    let o = nightly_with(
        &r,
        &[("TIER1_FAKE_SPEEDUP", "2".to_string())],
        &[
            "--accept",
            "--note",
            "The slowdown is intended",
            "--requester",
            "alice",
        ],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
}

#[test]
fn unchanged_code_is_cleared_side_by_side_passes_and_is_never_an_anchor() {
    let r = checkout("");
    bootstrap(&r);
    // The history comparison suspects both targets (a 25 % speedup drop through the environment,
    // which is no change of the code); side by side both sides are this commit's build.
    let o = nightly(&r, 1.5, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["run"]["run_accepted"], true, "{}", o.json);
    assert_eq!(o.json["run"]["baseline_eligible"], false, "{}", o.json);
    assert_eq!(o.json["run"]["regressions"], 0, "{}", o.json);
    let reasons = o.json["run"]["baseline_eligible_reasons"].to_string();
    assert!(
        reasons.contains("cleared only by side by side"),
        "{reasons}"
    );
    let id = o.json["run_id"].as_str().unwrap();
    let reg = regression_summary(&r, id);
    let b = &reg["side_by_side"];
    assert!(
        b["reason"]
            .as_str()
            .unwrap()
            .contains("both sides are this build"),
        "{b}"
    );
    for c in b["checks"].as_array().unwrap() {
        assert_eq!(c["verdict"], "same", "{c}");
        assert_eq!(c["suspected_as"], "regressed", "{c}");
    }
    for s in reg["suppressed_regressions"].as_array().unwrap() {
        assert_eq!(s["suppression_reason"], "side_by_side_same", "{s}");
    }
    // The printed verdict of each target says what decided it, as the summary does.
    for t in o.json["run"]["targets"].as_array().unwrap() {
        assert_eq!(t["verdict"], "unchanged", "{t}");
        assert_eq!(t["decided_by"], "side_by_side", "{t}");
        assert_eq!(t["side_by_side"]["verdict"], "same", "{t}");
    }
    // Nothing was built: no cached worktree.
    assert!(
        !r.root
            .join(".tier1/builds")
            .join(git(&r.root, &["rev-parse", "HEAD"]))
            .exists()
    );
}

/// Issue 37: a newcomer's second night rechecked three suspected targets (one more target budget
/// each, 54 s of 226 s) and then compared the same targets side by side, which decided them. A
/// suspect compared side by side is not rechecked first; where side by side cannot run, the
/// suspects are rechecked as before (`side_by_side_off_runs_nothing_and_says_why`).
#[test]
fn a_suspect_compared_side_by_side_is_not_rechecked_first() {
    let r = checkout("");
    bootstrap(&r);
    let o = nightly(&r, 1.5, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let id = o.json["run_id"].as_str().unwrap();
    let reg = regression_summary(&r, id);
    let checks = reg["side_by_side"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{reg}");
    for c in checks {
        assert_eq!(c["verdict"], "same", "{c}");
        assert_eq!(
            c["suspected_as"], "regressed",
            "not cleared by a recheck: {c}"
        );
    }
    assert_eq!(
        reg["rechecks"],
        Value::Array(Vec::new()),
        "{}",
        reg["rechecks"]
    );
    assert!(
        !r.root
            .join(format!(".tier1/history/{id}__recheck__fixed_a"))
            .exists()
    );
    for t in o.json["run"]["timings"].as_array().unwrap() {
        assert!(t["recheck_s"].is_null(), "{t}");
    }
}

#[test]
fn an_anchor_commit_that_does_not_build_is_unknown_with_the_reason() {
    // The anchor's commit has a build step that fails; the next commit fixes it.
    let r = checkout("build: [python3, build.py]\n");
    std::fs::write(
        r.root.join("build.py"),
        "import sys\nsys.exit('build.py: broken on purpose')\n",
    )
    .unwrap();
    git(&r.root, &["add", "build.py"]);
    git(&r.root, &["commit", "-qm", "a broken build"]);
    bootstrap(&r);
    std::fs::write(r.root.join("build.py"), "print('built')\n").unwrap();
    git(&r.root, &["commit", "-qam", "the build works"]);
    commit_baseline_ms(&r, "13");
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let reg = regression_summary(&r, o.json["run_id"].as_str().unwrap());
    for c in reg["side_by_side"]["checks"].as_array().unwrap() {
        assert_eq!(c["verdict"], "unknown", "{c}");
        assert_eq!(c["cause"], "build_failed", "{c}");
        assert!(
            c["reason"].as_str().unwrap().contains("broken on purpose"),
            "{c}"
        );
    }
    // Never a pass: the history test's regressions stand.
    assert_eq!(reg["regressions"].as_array().unwrap().len(), 2, "{reg}");
}

#[test]
fn side_by_side_off_runs_nothing_and_says_why() {
    let r = repo();
    bootstrap(&r);
    let o = nightly(&r, 1.5, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let reg = regression_summary(&r, o.json["run_id"].as_str().unwrap());
    let b = &reg["side_by_side"];
    assert_eq!(b["enabled"], false, "{b}");
    assert!(
        b["reason"]
            .as_str()
            .unwrap()
            .contains("side_by_side is off"),
        "{b}"
    );
    assert!(b["checks"].as_array().unwrap().is_empty());
    assert!(!r.root.join(".tier1/builds").exists());
    // Without side by side the suspects are rechecked (and the recheck confirms them).
    assert_eq!(reg["rechecks"].as_array().unwrap().len(), 2, "{reg}");
}

#[test]
fn promotion_refuses_a_cleared_night() {
    let r = checkout("");
    bootstrap(&r);
    // A night cleared side by side asks to be ratified: refused, it is never an anchor.
    let o = nightly_with(
        &r,
        &[("TIER1_FAKE_SPEEDUP", "1.5".to_string())],
        &[
            "--accept",
            "--note",
            "Ratify a cleared run",
            "--requester",
            "alice",
        ],
    );
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    let failure = o.json["failure"].as_str().unwrap_or_default().to_string();
    assert!(failure.contains("2 suppressed regression(s)"), "{failure}");
    assert!(
        o.json["history_artifact"].is_null(),
        "nothing was published"
    );
}

/// The candidate `c` of a promotion scene with a side-by-side block of one check on its first
/// target (`verdict`, optimized time ratio `time`).
fn tampered_scene(verdict: &str, time: f64) -> Scene {
    let w = Scene::new();
    let summary: Value =
        serde_json::from_slice(&std::fs::read(w.p("cand/c/summary.json")).unwrap()).unwrap();
    let t = &summary["targets"][0];
    let reg = w.p("cand/c/regression_summary.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&reg).unwrap()).unwrap();
    v["side_by_side"] = serde_json::json!({
        "enabled": true,
        "reason": "on: anchor commit a against current commit b",
        "checks": [{
            "target": t["target"], "key": t["key"], "suspected_as": "unknown",
            "verdict": verdict, "reason": "figures", "threshold_pct": 5.0, "decided_on": "both",
            "optimized_time_ratio": {"ratio": time, "low": time * 0.99, "high": time * 1.01},
            "speedup_ratio": {"ratio": 1.0, "low": 0.99, "high": 1.01},
            "rounds": 10, "seconds": 1.0
        }]
    });
    std::fs::write(&reg, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    w
}

#[test]
fn promotion_refuses_a_side_by_side_verdict_its_intervals_do_not_give() {
    let w = tampered_scene("same", 1.3);
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "verdict: recorded same, but its own intervals give worse (tampered side-by-side record)",
    );
}

#[test]
fn promotion_refuses_a_side_by_side_record_the_comparison_does_not_follow() {
    // A consistent `worse` record whose confirmed regression the stored comparison lacks.
    let w = tampered_scene("worse", 1.3);
    w.refused(
        &w.req(),
        exit_code(Exit::Invalid),
        "`regressions` differs from the recomputed comparison",
    );
}
