//! The local main job end to end, through the real `tier1-nightly` binary on a fresh store:
//! bootstrap anchor -> normal run accepted but not eligible -> regressions refused by the gate (a
//! speedup drop, and a 2x common-mode slowdown confirmed after recheck) ->
//! promotion with a note ratifies a new anchor -> at 60 days restore needs renewal -> at 90 days it
//! fails closed. The suite is two deterministic command targets, so every outcome is exact.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;

use nightly_repo::{Repo, git, nightly, nightly_with, repo};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn index(r: &Repo) -> Value {
    serde_json::from_slice(&std::fs::read(r.root.join(".tier1/history/index.json")).unwrap())
        .unwrap()
}

fn history_artifacts(r: &Repo) -> usize {
    let s: Value =
        serde_json::from_slice(&std::fs::read(r.root.join(".tier1/store/store.json")).unwrap())
            .unwrap();
    s["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"].as_str().unwrap().starts_with("tier1-history-"))
        .count()
}

#[test]
fn the_canonical_history_lifecycle_through_the_local_main_job() {
    let r = repo();

    // 1. A fresh store bootstraps the first anchor through promotion.
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["bootstrap"], true);
    assert_eq!(o.json["restore"]["status"], "bootstrap");
    let first = o.json["run_id"].as_str().unwrap().to_string();
    let idx = index(&r);
    assert_eq!(
        idx["runs"][0]["baseline_acceptance"],
        "accept_history_anchor"
    );
    assert_eq!(idx["runs"][0]["baseline_eligible"], true);
    assert!(
        idx["chain_reset"]["reason"]
            .as_str()
            .unwrap()
            .contains("first anchor")
    );

    // 2. A normal run is compared with the anchor, accepted, and not eligible.
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["restore"]["status"], "restored");
    assert_eq!(o.json["run"]["baseline_run_id"], first.as_str());
    assert_eq!(o.json["run"]["run_accepted"], true);
    assert_eq!(o.json["run"]["baseline_eligible"], false);
    assert_eq!(o.json["run"]["summary"]["succeeded"], 2);
    assert_eq!(index(&r)["runs"].as_array().unwrap().len(), 2);

    // 3. A 25 % speedup drop is a regression, confirmed by its recheck: the gate fails (exit 1),
    //    and the run is still published as ineligible evidence.
    let o = nightly(&r, 1.5, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["conclusion"], "failure");
    assert_eq!(o.json["run"]["regressions"], 2);
    assert_eq!(o.json["run"]["rechecks"].as_array().unwrap().len(), 2);
    assert_eq!(o.json["run"]["baseline_run_id"], first.as_str());
    let runs = index(&r)["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[2]["run_accepted"], false);
    assert_eq!(runs[2]["baseline_eligible"], false);

    // 3b. A 2x common-mode slowdown (baseline and optimized both twice as slow, speedup unchanged)
    //     is an optimized-latency regression, confirmed by its recheck: the gate fails.
    let slow = [
        ("TIER1_FAKE_BASELINE_MS", "20".to_string()),
        ("TIER1_FAKE_SPEEDUP", "2".to_string()),
    ];
    let o = nightly_with(&r, &slow, &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["run"]["regressions"], 2);
    assert_eq!(o.json["run"]["suppressed_regressions"], 0);
    let slow_id = o.json["run_id"].as_str().unwrap().to_string();
    let reg: Value = serde_json::from_slice(
        &std::fs::read(
            r.root
                .join(format!(".tier1/history/{slow_id}/regression_summary.json")),
        )
        .unwrap(),
    )
    .unwrap();
    for row in reg["regressions"].as_array().unwrap() {
        assert_eq!(row["reason"], "optimized_latency", "{row}");
        assert_eq!(row["before"], 5.0);
        assert_eq!(row["after"], 10.0);
    }
    for rc in reg["rechecks"].as_array().unwrap() {
        assert_eq!(rc["confirmed_regression"], true, "{rc}");
        assert!(
            rc["recheck_run_id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{slow_id}__recheck__"))
        );
    }

    // 4. The regression is ratified as the new anchor only through promotion with a public note.
    let o = nightly(
        &r,
        1.5,
        &[
            "--accept",
            "--note",
            "New kernel trades speed for accuracy",
            "--requester",
            "alice",
        ],
    );
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["publication"]["accepted_regression_count"], 2);
    let runs = index(&r)["runs"].as_array().unwrap().clone();
    let anchor = &runs[4];
    assert_eq!(anchor["baseline_acceptance"], "accept_history_anchor");
    assert_eq!(anchor["baseline_acceptance_actor"], "alice");
    assert_eq!(
        anchor["baseline_acceptance_note"],
        "New kernel trades speed for accuracy"
    );
    assert!(
        anchor["baseline_acceptance_workflow_run"]
            .as_str()
            .unwrap()
            .starts_with("local://")
    );
    assert!(
        anchor["baseline_evidence_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    // 5. At 61 days the anchor's evidence needs renewal: restore refuses, nothing is published.
    let published = history_artifacts(&r);
    let later = (chrono::Utc::now() + chrono::Duration::days(61)).to_rfc3339();
    let o = nightly(&r, 1.5, &["--now", &later]);
    assert_eq!(
        o.code,
        exit_code(Exit::RenewalRequired),
        "{}\n{}",
        o.json,
        o.stderr
    );
    assert!(
        o.json["failure"]
            .as_str()
            .unwrap()
            .contains("at least 60 days old"),
        "{}",
        o.json
    );
    assert_eq!(history_artifacts(&r), published);

    // 6. At 91 days the evidence has expired: restore fails closed.
    let expired = (chrono::Utc::now() + chrono::Duration::days(91)).to_rfc3339();
    let o = nightly(&r, 1.5, &["--now", &expired]);
    assert_eq!(
        o.code,
        exit_code(Exit::Unavailable),
        "{}\n{}",
        o.json,
        o.stderr
    );
    assert_eq!(history_artifacts(&r), published);
    assert_eq!(
        index(&r)["runs"].as_array().unwrap().len(),
        5,
        "the history copy is untouched"
    );

    // No written file carries an absolute path of this machine.
    let tmp_prefix = r.root.parent().unwrap().to_string_lossy().into_owned();
    for f in walk(&r.root.join(".tier1/history")) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(
            !text.contains(&tmp_prefix),
            "{} contains {tmp_prefix}",
            f.display()
        );
    }
}

#[test]
fn an_imprecise_measurement_is_unknown_listed_and_never_a_silent_pass() {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let noisy = |speedup: f64| {
        [
            ("TIER1_FAKE_SPEEDUP", speedup.to_string()),
            ("TIER1_FAKE_NOISE", "0.3".to_string()),
        ]
    };
    let regression = |r: &Repo, id: &str| -> Value {
        serde_json::from_slice(
            &std::fs::read(
                r.root
                    .join(format!(".tier1/history/{id}/regression_summary.json")),
            )
            .unwrap(),
        )
        .unwrap()
    };

    // Unchanged but imprecise: decided by the test (never by the reference rules alone), each
    // target unchanged or unknown, the unknown ones extra-measured and pooled, and the gate
    // passes: a night never fails on noise alone.
    let o = nightly_with(&r, &noisy(2.0), &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let id = o.json["run_id"].as_str().unwrap().to_string();
    let reg = regression(&r, &id);
    assert!(reg["regressions"].as_array().unwrap().is_empty(), "{reg}");
    let mut unknown = 0;
    for t in reg["detection"]["targets"].as_array().unwrap() {
        assert_eq!(t["method"], "statistical", "{t}");
        // A target still unknown was measured once more and pooled; one the first measurement
        // already showed unchanged needed no second look.
        let pooled = t["pooled_with"]
            .as_str()
            .is_some_and(|p| p.contains("__recheck__"));
        match t["verdict"].as_str().unwrap() {
            "unknown" => {
                assert!(pooled, "an unknown target is rechecked: {t}");
                unknown += 1;
            }
            // The fixture's fixed spread pattern pairs samples unevenly: depending on how many
            // invocations the budget allows, its paired median can sit above the nominal 2x.
            // Never worse: that is what this step is about.
            "unchanged" | "improved" => {}
            v => panic!("unexpected verdict {v}: {t}"),
        }
    }
    let listed = reg["inconclusive"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, unknown, "{reg}");
    assert_eq!(o.json["run"]["unknown"], unknown, "{}", o.json["run"]);

    // A 10 % drop measured just as imprecisely: not a regression on noise alone, and never a
    // silent pass either: unknown, with the drop it could not rule out, in the summary, the
    // Markdown and on stderr.
    let o = nightly_with(&r, &noisy(1.8), &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let id = o.json["run_id"].as_str().unwrap().to_string();
    let reg = regression(&r, &id);
    assert!(reg["regressions"].as_array().unwrap().is_empty(), "{reg}");
    assert_eq!(
        reg["inconclusive"].as_array().map_or(0, Vec::len),
        2,
        "{reg}"
    );
    let why = reg["inconclusive"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("speedup 2.000x -> 1.") && why.contains("a 5.00 % worsening is not ruled out"),
        "{why}"
    );
    assert!(
        o.stderr.contains("unknown: speedup 2.000x -> 1."),
        "{}",
        o.stderr
    );
    let md = std::fs::read_to_string(
        r.root
            .join(format!(".tier1/history/{id}/regression_summary.md")),
    )
    .unwrap();
    assert!(
        md.contains("## Unknown") && md.contains("| unknown |"),
        "{md}"
    );

    // A suite that asks for it fails such a night instead (thresholds.on_unknown: fail).
    let suite = std::fs::read_to_string(r.root.join("suite.yaml")).unwrap();
    let strict = suite.replace(
        "profiles:\n",
        "thresholds:\n  on_unknown: fail\nprofiles:\n",
    );
    assert_ne!(strict, suite);
    std::fs::write(r.root.join("suite.yaml"), strict).unwrap();
    git(&r.root, &["commit", "-qam", "strict unknowns"]);
    let o = nightly_with(&r, &noisy(1.8), &[]);
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let failures = o.json["verdict"]["failures"].to_string();
    assert!(
        failures.contains("unknown verdict under thresholds.on_unknown: fail"),
        "{failures}"
    );
}

#[test]
fn acceptance_requests_are_validated_before_anything_runs() {
    let r = repo();
    let o = nightly(&r, 2.0, &["--accept"]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("A public acceptance note is required"),
        "{}",
        o.stderr
    );
    let o = nightly(&r, 2.0, &["--note", "why"]);
    assert_eq!(o.code, exit_code(Exit::Invalid));
    assert!(
        o.stderr.contains("--note requires --accept"),
        "{}",
        o.stderr
    );
    assert!(
        !r.root.join(".tier1/store").exists(),
        "no store was created"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

/// A regression cleared only by its recheck passes the gate but can never become an anchor: the
/// protected promotion refuses it, and the live history is not touched.
#[test]
fn promotion_refuses_a_regression_cleared_only_by_its_recheck() {
    let r = repo();
    // One pass per anchor candidate: the disturbed first execution is then the run's only
    // measurement (with three passes it would be left out of the candidate, as it should).
    let suite = std::fs::read_to_string(r.root.join("suite.yaml")).unwrap();
    let one = suite.replace(
        "    budget_s: 1\n",
        "    budget_s: 1\n    anchor_passes: 1\n",
    );
    assert_ne!(one, suite);
    std::fs::write(r.root.join("suite.yaml"), one).unwrap();
    git(&r.root, &["commit", "-qam", "one pass"]);
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let marker = r.root.join(".tier1/slow-once");
    let knobs = [
        ("TIER1_FAKE_SPEEDUP", "2".to_string()),
        ("TIER1_FAKE_SLOW_ONCE", marker.display().to_string()),
    ];
    let o = nightly_with(
        &r,
        &knobs,
        &[
            "--accept",
            "--note",
            "Try to ratify a flaky run",
            "--requester",
            "alice",
        ],
    );
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert_eq!(o.json["run"]["suppressed_regressions"], 1, "{}", o.json);
    assert_eq!(o.json["run"]["regressions"], 0, "{}", o.json);
    let failure = o.json["failure"].as_str().unwrap();
    assert!(failure.contains("cleared only by a recheck"), "{failure}");
    assert!(
        o.json["history_artifact"].is_null(),
        "nothing was published"
    );
    let runs = index(&r)["runs"].as_array().unwrap().clone();
    assert_eq!(
        runs.len(),
        1,
        "the live history still holds only the first anchor"
    );
}

/// Two main jobs at once on one store queue on the producer lock and publish under the
/// publication lock: neither run is lost from the history that follows.
#[test]
fn concurrent_jobs_on_one_store_lose_no_run() {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let spawn = || {
        crate::support::command::scrubbed(env!("CARGO_BIN_EXE_tier1-nightly"))
            .current_dir(&r.root)
            .args([
                "--store",
                ".tier1/store",
                "--suite-config",
                "suite.yaml",
                "--profile",
                "smoke",
            ])
            .env("TIER1_FAKE_SPEEDUP", "2")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_SHA")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("tier1-nightly starts")
    };
    let (a, b) = (spawn(), spawn());
    let mut ids = Vec::new();
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            out.status.code(),
            Some(exit_code(Exit::Ok)),
            "{json}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ids.push(json["run_id"].as_str().unwrap().to_string());
    }
    assert_ne!(ids[0], ids[1], "queued producers get distinct run ids");
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let runs: Vec<String> = index(&r)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["run_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(runs.len(), 4, "{runs:?}");
    for id in &ids {
        assert!(runs.contains(id), "{id} missing from {runs:?}");
    }
}
