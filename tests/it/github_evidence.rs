//! `tier1-evidence verify` against the fake GitHub API, and `tier1-restore --store github` end to
//! end: success, refusals with exit codes, step outputs, and the token never printed or written.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github;

use crate::restore_support::*;
use chrono::Duration;
use fake_github::{FakeGithub, Fault};
use std::path::Path;
use std::process::{Command, Output};
use tier1::digest::Digest;

const TOKEN: &str = "ghs_fakeTOKENvalue123";

fn github_cmd(bin: &str, fake: &FakeGithub) -> Command {
    let mut c = crate::support::command::scrubbed(bin);
    c.env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_RUN_ID")
        .env_remove("TIER1_STORE");
    c
}

/// The token must not appear in the process output or any file under `root`.
fn assert_token_absent(o: &Output, root: &Path) {
    assert!(!String::from_utf8_lossy(&o.stdout).contains(TOKEN));
    assert!(!stderr(o).contains(TOKEN));
    for f in tier1::fsx::list_files(root).unwrap() {
        let bytes = std::fs::read(root.join(&f)).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "token written to {f}"
        );
    }
}

fn verify(fake: &FakeGithub, run: u64, file: &Path, args: &[&str], out: &Path) -> Output {
    github_cmd(env!("CARGO_BIN_EXE_tier1-evidence"), fake)
        .args(["verify", "--workflow-run-id", &run.to_string(), "--file"])
        .arg(file)
        .arg("--github-output")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn verify_accepts_equal_digests_and_writes_outputs() {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(1));
    let file = env.tmp.path().join(format!("evidence-{}.zip", p.run.id));
    let hex = Digest::of_file(&file).unwrap().hex().to_uppercase();
    let out = env.tmp.path().join("gh_output");
    let o = verify(
        &fake,
        p.run.id,
        &file,
        &[
            "--artifact-name",
            &p.evidence.name,
            "--expected-digest",
            &hex,
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["status"], "verified");
    assert_eq!(v["evidence_artifact_id"], p.evidence.id);
    let digest = p.evidence.digest.clone().unwrap();
    assert_eq!(v["evidence_artifact_digest"], digest.as_str());
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text,
        format!(
            "evidence_artifact_name={}\nevidence_artifact_id={}\nevidence_artifact_digest={digest}\n",
            p.evidence.name, p.evidence.id
        )
    );
    // By id as well.
    let o = verify(
        &fake,
        p.run.id,
        &file,
        &[
            "--artifact-id",
            &p.evidence.id.to_string(),
            "--expected-digest",
            &hex,
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    assert_token_absent(&o, env.tmp.path());
}

#[test]
fn verify_refuses_mismatches_naming_both_digests() {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(1));
    let file = env.tmp.path().join(format!("evidence-{}.zip", p.run.id));
    let local = Digest::of_file(&file).unwrap();
    let out = env.tmp.path().join("gh_output");
    // The action's output disagrees with the local file.
    let other = Digest::of_bytes(b"other");
    let o = verify(
        &fake,
        p.run.id,
        &file,
        &[
            "--artifact-name",
            &p.evidence.name,
            "--expected-digest",
            other.hex(),
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Integrity)),
        "stderr: {}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(local.as_str()) && stderr(&o).contains(other.as_str()),
        "{}",
        stderr(&o)
    );
    // The REST digest disagrees with the local file.
    env.store_at(t0())
        .update(|s| {
            s.artifacts
                .iter_mut()
                .find(|a| a.id == p.evidence.id)
                .unwrap()
                .digest = Some(other.to_string());
            Ok(())
        })
        .unwrap();
    let o = verify(
        &fake,
        p.run.id,
        &file,
        &[
            "--artifact-name",
            &p.evidence.name,
            "--expected-digest",
            local.hex(),
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Integrity)),
        "stderr: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("REST digest differs")
            && err.contains(local.as_str())
            && err.contains(other.as_str()),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    assert!(!out.exists(), "no step outputs on refusal");
    // An artifact of another run is not this run's evidence.
    let o = verify(
        &fake,
        p.run.id + 100,
        &file,
        &[
            "--artifact-id",
            &p.evidence.id.to_string(),
            "--expected-digest",
            local.hex(),
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Unavailable)),
        "stderr: {}",
        stderr(&o)
    );
    assert!(!out.exists());
    assert_token_absent(&o, env.tmp.path());
}

fn restore_github(fake: &FakeGithub, dest: &Path) -> Output {
    github_cmd(env!("CARGO_BIN_EXE_tier1-restore"), fake)
        .args([
            "--store",
            "github",
            "--repository",
            REPO,
            "--branch",
            "main",
        ])
        .args(["--current-run-id", "999999", "--now"])
        .arg((t0() + Duration::days(2)).to_rfc3339())
        .arg("--destination")
        .arg(dest)
        .output()
        .unwrap()
}

#[test]
fn restore_through_the_github_store() {
    let env = Env::new();
    env.good_nightly(t0(), 1);
    let second = env.good_nightly(t0() + Duration::days(1), 2);
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(2));
    let dest = env.dest();
    let o = restore_github(&fake, &dest);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "stderr: {}",
        stderr(&o)
    );
    let v = stdout_json(&o);
    assert_eq!(v["status"], "restored");
    assert_eq!(v["artifact_id"], second.history.as_ref().unwrap().id);
    assert!(dest.join("index.json").is_file());
    let blob: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.listener == "blob")
        .collect();
    assert!(!blob.is_empty());
    assert!(blob.iter().all(|r| r.header("authorization").is_none()));
    assert_token_absent(&o, env.tmp.path());
}

#[test]
fn restore_through_github_refuses_integrity_faults_leaving_destination_empty() {
    let env = Env::new();
    let p = env.good_nightly(t0(), 1);
    let hist = p.history.unwrap().id;
    for (fault, fragment) in [
        (Fault::CorruptBody { id: hist }, "digest mismatch"),
        (
            Fault::BodyLength {
                id: hist,
                delta: -3,
            },
            "body length differs",
        ),
    ] {
        let fake = FakeGithub::start(&env.store_dir, TOKEN);
        fake.set_now(t0() + Duration::days(2));
        fake.inject(fault);
        let dest = env.dest();
        let o = restore_github(&fake, &dest);
        assert_refused(&o, exit_code(Exit::Integrity), fragment, &dest);
        assert!(
            stderr(&o).contains("GET http://127.0.0.1:"),
            "{}",
            stderr(&o)
        );
        assert_token_absent(&o, env.tmp.path());
    }
}

#[test]
fn restore_through_github_rejects_a_fork_run_named_main() {
    let env = Env::new();
    let mut fork = tier1::store::local::NewRun::new(WORKFLOW, "main", SHA_A);
    fork.head_repository = Some("attacker/repo".into());
    env.nightly(t0(), "success", fork, |ev, dir| {
        write_history(dir, 1, &anchor(ev));
        HistoryUpload::Dir
    });
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(2));
    let dest = env.dest();
    let o = restore_github(&fake, &dest);
    assert_refused(
        &o,
        exit_code(Exit::Unavailable),
        "No prior completed Tier-1 run",
        &dest,
    );
    assert!(
        stderr(&o).contains("head repository is attacker/repo"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn restore_through_github_refuses_an_evidence_provenance_mismatch() {
    let env = Env::new();
    let first = env.good_nightly(t0(), 1);
    // The second run's history names the first run's evidence as its anchor ...
    env.nightly(
        t0() + Duration::days(1),
        "success",
        tier1::store::local::NewRun::new(WORKFLOW, "main", SHA_A),
        |_, dir| {
            write_history(dir, 1, &anchor(&first.evidence.name));
            HistoryUpload::Dir
        },
    );
    // ... and that evidence's run is not the repository's own.
    env.store_at(t0())
        .update(|s| {
            let r = s.runs.iter_mut().find(|r| r.id == first.run.id).unwrap();
            r.repository = "attacker/repo".into();
            r.head_repository = "attacker/repo".into();
            Ok(())
        })
        .unwrap();
    let fake = FakeGithub::start(&env.store_dir, TOKEN);
    fake.set_now(t0() + Duration::days(2));
    let dest = env.dest();
    let o = restore_github(&fake, &dest);
    assert_refused(&o, exit_code(Exit::Integrity), "does not match", &dest);
    assert_token_absent(&o, env.tmp.path());
}
