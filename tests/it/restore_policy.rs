//! tier1-restore end to end against a local store: success, bootstrap, provenance, renewal, expiry,
//! truncated discovery and the skip-versus-refuse policy (contract §5.5-5.7).

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};

use crate::restore_support::*;
use chrono::Duration;
use tier1::store::local::NewRun;

#[test]
fn restores_newest_candidate_and_prints_status() {
    let env = Env::new();
    let first = env.good_nightly(t0(), 1);
    let second = env.good_nightly(t0() + Duration::days(1), 2);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["status"], "restored");
    assert_eq!(v["history_restored"], true);
    assert_eq!(v["artifact_id"], second.history.as_ref().unwrap().id);
    assert_eq!(
        v["artifact_name"],
        format!("tier1-history-{}-1", second.run.id)
    );
    assert_eq!(v["evidence_artifact_id"], second.evidence.id);
    assert_eq!(v["evidence_artifact_name"], second.evidence.name);
    assert_eq!(v["anchor_renewal_required"], false);
    assert_eq!(v["rejections"], serde_json::json!([]));
    assert_ne!(first.run.id, second.run.id);
    assert!(dest.join("index.json").is_file());
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dest.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["runs"].as_array().unwrap().len(), 2);
    assert_absent_or_empty(&env.tmp.path().join("out").join("nothing"));
}

/// Issue 20, defect 7: a run whose publication job uploaded its history is still in progress for
/// some seconds on GitHub; its history is the newest and must be restored, or the next publisher
/// merges onto an older history and loses that night.
#[test]
fn a_run_still_in_progress_with_a_published_history_is_restored() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let second = env.nightly(
        t0() + Duration::days(1),
        IN_PROGRESS,
        NewRun::new(WORKFLOW, "main", SHA_A),
        |ev, dir| {
            write_history(dir, 2, &anchor(ev));
            HistoryUpload::Dir
        },
    );
    assert_eq!(second.run.status, "in_progress");
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["workflow_run_id"], second.run.id, "{v:#}");
    assert_eq!(v["artifact_id"], second.history.as_ref().unwrap().id);
}

#[test]
fn refuses_a_non_empty_destination_untouched() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::write(dest.join("keep.txt"), b"mine").unwrap();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Conflict)),
        "stderr: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("is not empty"));
    assert_eq!(std::fs::read(dest.join("keep.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1);
}

#[test]
fn no_candidates_fails_without_bootstrap_and_bootstraps_with_it() {
    let env = Env::new();
    let dest = env.dest();
    let o = env.restore(t0(), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Unavailable),
        "No prior completed Tier-1 run has a matching unexpired history and evidence artifact pair",
        &dest,
    );
    let o = env.restore(t0(), &dest, &["--allow-bootstrap"]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["status"], "bootstrap");
    assert_eq!(v["history_restored"], false);
    assert_absent_or_empty(&dest);
}

#[test]
fn history_without_evidence_pair_is_not_a_candidate() {
    let env = Env::new();
    // A run whose history has no same-suffix evidence: rename the evidence away.
    let p = env.good_nightly(t0(), 1);
    env.edit_artifact(p.evidence.id, |a| a.name = "tier1-evidence-other".into());
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Unavailable),
        "No prior completed Tier-1 run",
        &dest,
    );
}

fn provenance_case(new_run: NewRun, repo_override: Option<&str>, fragment: &str) {
    let env = Env::new();
    // The anchor's evidence comes from a run that does not match the canonical contract...
    let bad = env.evidence_only(t0(), new_run);
    if let Some(r) = repo_override {
        env.store_at(t0())
            .update(|s| {
                let run = s.runs.iter_mut().find(|x| x.id == bad.run.id).unwrap();
                run.repository = r.into();
                Ok(())
            })
            .unwrap();
    }
    // ...and a canonical run later publishes history anchored to it.
    let ev = bad.evidence.name.clone();
    env.anchored_to(t0() + Duration::hours(1), &ev);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "does not match the canonical workflow, branch, commit, repository, and persisted digest contract",
        &dest,
    );
    assert!(stderr(&o).contains(fragment), "{}", stderr(&o));
}

#[test]
fn provenance_from_another_branch_is_fatal() {
    provenance_case(
        NewRun::new(WORKFLOW, "feature", SHA_A),
        None,
        "branch expected \"main\", found \"feature\"",
    );
}

#[test]
fn provenance_from_another_workflow_is_fatal() {
    provenance_case(
        NewRun::new("other.yml", "main", SHA_A),
        None,
        "workflow path expected",
    );
}

#[test]
fn provenance_from_another_commit_is_fatal() {
    provenance_case(
        NewRun::new(WORKFLOW, "main", SHA_B),
        None,
        "commit expected",
    );
}

#[test]
fn provenance_from_another_repository_is_fatal() {
    provenance_case(
        NewRun::new(WORKFLOW, "main", SHA_A),
        Some("evil/fork"),
        "repository expected \"owner/repo\", found \"evil/fork\"",
    );
}

#[test]
fn persisted_digest_must_equal_the_evidence_digest() {
    let env = Env::new();
    let wrong = format!("sha256:{}", "c".repeat(64));
    env.promoted_nightly(t0(), &wrong);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        &format!("digest expected persisted {wrong}"),
        &dest,
    );
}

#[test]
fn persisted_digest_that_matches_restores() {
    let env = Env::new();
    let digest = tier1::digest::Digest::of_bytes(b"evidence of run 1").to_string();
    env.promoted_nightly(t0(), &digest);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    assert_eq!(
        stdout_json(&o)["anchor_run_id"],
        "20260001_031500_tier1_nightly_00001"
    );
}

#[test]
fn renewal_at_60_days_refused_without_flag_allowed_with_it() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    let at = t0() + Duration::days(60);
    let o = env.restore(at, &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::RenewalRequired),
        "Tier-1 baseline evidence is at least 60 days old",
        &dest,
    );
    let young = env.restore(at - Duration::minutes(1), &dest, &[]);
    assert_eq!(
        young.status.code(),
        Some(exit_code(Exit::Ok)),
        "59.99 days is not yet renewal: {}",
        stderr(&young)
    );
    assert_eq!(stdout_json(&young)["anchor_renewal_required"], false);
    let dest2 = env.tmp.path().join("out2");
    let o = env.restore(at, &dest2, &["--allow-anchor-renewal"]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    assert_eq!(stdout_json(&o)["anchor_renewal_required"], true);
    assert!(dest2.join("index.json").is_file());
}

#[test]
fn evidence_expired_at_90_days_fails_closed_then_bootstraps() {
    let env = Env::new();
    // The anchor's evidence is from day 0; a newer successful run (day 31) carries the history.
    let anchor_run = env.evidence_only(t0(), NewRun::new(WORKFLOW, "main", SHA_A));
    let ev = anchor_run.evidence.name.clone();
    env.anchored_to(t0() + Duration::days(31), &ev);
    let dest = env.dest();
    let at = t0() + Duration::days(90);
    let o = env.restore(at, &dest, &["--allow-anchor-renewal"]);
    assert_refused(
        &o,
        exit_code(Exit::Unavailable),
        "is not available (expired or deleted)",
        &dest,
    );
    assert!(
        stderr(&o).contains("audited bootstrap recovery path"),
        "{}",
        stderr(&o)
    );
    let o = env.restore(at, &dest, &["--allow-anchor-renewal", "--allow-bootstrap"]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["status"], "bootstrap");
    assert_eq!(v["history_restored"], false);
    assert_eq!(v["rejections"].as_array().unwrap().len(), 1);
    assert_absent_or_empty(&dest);
}

#[test]
fn unavailable_evidence_from_a_failed_run_is_skipped() {
    let env = Env::new();
    let older = env.good_nightly(t0(), 1);
    // A newer failed run whose history points at evidence that never existed.
    env.nightly(
        t0() + Duration::days(1),
        "failure",
        NewRun::new(WORKFLOW, "main", SHA_A),
        |_, dir| {
            write_history(dir, 1, &anchor("tier1-evidence-missing"));
            HistoryUpload::Dir
        },
    );
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["artifact_id"], older.history.unwrap().id);
    assert_eq!(v["rejections"].as_array().unwrap().len(), 1);
    assert_eq!(v["rejections"][0]["workflow_run_conclusion"], "failure");
}

fn malformed(env: &Env, conclusion: &str) {
    env.nightly(
        t0() + Duration::days(1),
        conclusion,
        NewRun::new(WORKFLOW, "main", SHA_A),
        |ev, dir| {
            write_history(dir, 1, &anchor(ev));
            // Structurally incomplete: a run's summary file is missing.
            let idx = std::fs::read_to_string(dir.join("index.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&idx).unwrap();
            let rel = v["runs"][0]["summary_path"].as_str().unwrap().to_string();
            std::fs::remove_file(dir.join(rel)).unwrap();
            HistoryUpload::Dir
        },
    );
}

#[test]
fn malformed_package_from_successful_run_is_fatal() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    malformed(&env, "success");
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Invalid),
        "from a successful or unverified workflow run failed structural validation",
        &dest,
    );
    assert!(stderr(&o).contains("file does not exist"), "{}", stderr(&o));
}

#[test]
fn malformed_package_from_failed_run_is_skipped() {
    let env = Env::new();
    let older = env.good_nightly(t0(), 1);
    malformed(&env, "failure");
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(2), &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["artifact_id"], older.history.unwrap().id);
    assert_eq!(v["rejections"][0]["workflow_run_conclusion"], "failure");
    assert!(
        v["rejections"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("file does not exist")
    );
}

#[test]
fn truncated_discovery_without_candidates_is_fatal_even_with_bootstrap() {
    let env = Env::new();
    let store = env.store_at(t0());
    for _ in 0..101 {
        let r = store
            .create_run(&NewRun::new(WORKFLOW, "main", SHA_A))
            .unwrap();
        store.complete_run(r.id, "success").unwrap();
    }
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "Refusing to reset canonical history",
        &dest,
    );
}

#[test]
fn truncated_discovery_with_only_rejected_candidates_is_fatal() {
    let env = Env::new();
    // The oldest good history sits beyond the 100-run scan window.
    env.good_nightly(t0(), 1);
    malformed(&env, "failure");
    let store = env.store_at(t0() + Duration::days(2));
    for _ in 0..100 {
        let r = store
            .create_run(&NewRun::new(WORKFLOW, "main", SHA_A))
            .unwrap();
        store.complete_run(r.id, "failure").unwrap();
    }
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(3), &dest, &["--allow-bootstrap"]);
    assert_refused(
        &o,
        exit_code(Exit::Integrity),
        "Refusing to reset canonical history",
        &dest,
    );
}

#[test]
fn restores_a_history_published_under_another_artifact_prefix() {
    let env = Env::with_prefix("acme-gpu");
    let published = env.good_nightly(t0(), 1);
    let dest = env.dest();
    let o = env.restore(
        t0() + Duration::days(1),
        &dest,
        &["--artifact-prefix", "acme-gpu"],
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(
        v["artifact_name"],
        format!("acme-gpu-history-{}-1", published.run.id)
    );
    assert_eq!(v["evidence_artifact_name"], published.evidence.name);
    assert!(dest.join("index.json").is_file());
}

#[test]
fn the_default_prefix_does_not_see_another_prefix_s_history() {
    let env = Env::with_prefix("acme-gpu");
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    let o = env.restore(t0() + Duration::days(1), &dest, &[]);
    assert_refused(
        &o,
        exit_code(Exit::Unavailable),
        "No prior completed Tier-1 run",
        &dest,
    );
}

#[test]
fn an_unsafe_artifact_prefix_is_refused() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    for (prefix, fragment) in [
        ("../x", "--artifact-prefix"),
        ("", "--artifact-prefix"),
        ("tier1-candidate", "candidate"),
        ("a-evidence", "evidence"),
    ] {
        let o = env.restore(
            t0() + Duration::days(1),
            &dest,
            &["--artifact-prefix", prefix],
        );
        assert_refused(&o, exit_code(Exit::Invalid), fragment, &dest);
    }
}

/// `tier1-restore` of the env's local store into `dest` a day after t0, with no repository given
/// unless `extra` gives one, and none of the Actions defaults in the environment.
fn restore_local(env: &Env, dest: &std::path::Path, extra: &[&str]) -> std::process::Output {
    command::scrubbed(env!("CARGO_BIN_EXE_tier1-restore"))
        .arg("--store")
        .arg(format!("local:{}", env.store_dir.display()))
        .args(["--branch", "main", "--now"])
        .arg((t0() + Duration::days(1)).to_rfc3339())
        .arg("--destination")
        .arg(dest)
        .args(extra)
        .output()
        .expect("tier1-restore runs")
}

#[test]
fn a_local_store_restores_under_its_own_repository_name_by_default() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    let o = restore_local(&env, &dest, &[]);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    assert!(dest.join("index.json").is_file());
}

#[test]
fn a_local_store_asked_for_another_repository_says_which_it_models() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let dest = env.dest();
    let o = restore_local(&env, &dest, &["--repository", "local/elsewhere"]);
    assert_refused(
        &o,
        exit_code(Exit::Invalid),
        &format!("models repository {REPO}"),
        &dest,
    );
    assert!(
        !stderr(&o).contains("provenance") && !stderr(&o).contains("integrity"),
        "{}",
        stderr(&o)
    );
}
