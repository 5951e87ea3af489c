//! Restore, verify and promote on archives made by GitHub's own artifact client (issue 20):
//! tests/fixtures/github-zips holds zips that `@actions/artifact` 6.2.1 (the client
//! upload-artifact v7 uses) made once of a real tier1-nightly night, with data descriptors on every
//! entry, real times and modes (README.md there says exactly how). The fake GitHub serves them as
//! GitHub would: `tier1-restore --store github` restores the history zip, `tier1-evidence verify`
//! verifies the evidence zip, and `tier1-promote` ratifies the candidate history with the evidence
//! zip as downloaded, the approval read from the fake's approvals API.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::fake_github::{FakeGithub, approval_record, environment_record};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use tier1::store::local::{LocalStore, NewRun};

const TOKEN: &str = "ghs_githubShapedZipsTOKEN";
const REPO: &str = "acme/kernels";
const ENV: &str = "tier1-canonical-acceptance";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/github-zips")
}

fn fixture() -> Value {
    serde_json::from_slice(&std::fs::read(dir().join("fixture.json")).unwrap()).unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// A store with one completed nightly run at the fixture's commit that uploaded `uploads`
/// ((artifact name, fixture file) as GitHub stores them: the bytes as uploaded), served by a fake.
fn served(tmp: &Path, uploads: &[(&str, &str)]) -> (FakeGithub, u64) {
    let f = fixture();
    let store_dir = tmp.join("store");
    let store = LocalStore::create(&store_dir, REPO).unwrap();
    let commit = f["git_commit"].as_str().unwrap();
    let run = store
        .create_run(&NewRun::new("tier1-nightly.yml", "main", commit))
        .unwrap();
    for (name, file) in uploads {
        let meta = store
            .upload_file(run.id, name, &dir().join(file), 90)
            .unwrap();
        assert_eq!(
            meta.digest
                .as_deref()
                .unwrap()
                .trim_start_matches("sha256:"),
            f["sha256"][file].as_str().unwrap(),
            "{file} is the committed fixture"
        );
    }
    store.complete_run(run.id, "success").unwrap();
    (FakeGithub::start(&store_dir, TOKEN), run.id)
}

fn github(bin: &str, fake: &FakeGithub) -> std::process::Command {
    let mut c = crate::support::command::scrubbed(bin);
    c.env("GITHUB_API_URL", fake.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("TIER1_GITHUB_RETRY_BASE_MS", "5")
        .env_remove("GITHUB_ACTIONS");
    c
}

#[test]
fn the_fixture_zips_are_shaped_as_github_makes_them() {
    for file in ["history.zip", "candidate-history.zip", "evidence.zip"] {
        let mut z = zip::ZipArchive::new(std::fs::File::open(dir().join(file)).unwrap()).unwrap();
        assert!(z.len() >= 3, "{file}");
        for i in 0..z.len() {
            let entry = z.by_index_raw(i).unwrap();
            let name = entry.name().unwrap().to_string();
            assert_eq!(entry.unix_mode(), Some(0o100644), "{file}: {name}");
            let when = entry.last_modified().expect("a time");
            assert!(when.year() > 1980, "{file}: {name}: a real time");
        }
        // Flag bit 3 (data descriptor) on every local header: CRC and sizes follow the data.
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let headers: Vec<usize> = bytes
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == b"PK\x03\x04")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(headers.len(), z.len(), "{file}");
        for at in headers {
            let flags = u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]);
            assert_eq!(flags & 0x8, 0x8, "{file}: local header at {at}");
        }
    }
}

#[test]
fn restore_takes_a_history_zip_made_by_github_s_client() {
    let f = fixture();
    let t = tempfile::tempdir().unwrap();
    let evidence = f["evidence_artifact_name"].as_str().unwrap();
    let history = evidence.replace("-evidence-", "-history-");
    let (fake, run) = served(
        t.path(),
        &[(evidence, "evidence-pack.zip"), (&history, "history.zip")],
    );
    let dest = t.path().join("restored");
    let o = github(env!("CARGO_BIN_EXE_tier1-restore"), &fake)
        .args([
            "--store",
            "github",
            "--repository",
            REPO,
            "--branch",
            "main",
        ])
        .arg("--destination")
        .arg(&dest)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "restored");
    assert_eq!(v["workflow_run_id"], run);
    assert_eq!(v["artifact_name"], history.as_str());
    assert_eq!(v["anchor_run_id"], f["run_id"]);
    // The restored tree is the zip's, byte for byte.
    let mut z =
        zip::ZipArchive::new(std::fs::File::open(dir().join("history.zip")).unwrap()).unwrap();
    for i in 0..z.len() {
        let mut entry = z.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut want = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut want).unwrap();
        assert_eq!(std::fs::read(dest.join(&name)).unwrap(), want, "{name}");
    }
}

#[test]
fn verify_takes_an_evidence_zip_made_by_github_s_client() {
    let f = fixture();
    let t = tempfile::tempdir().unwrap();
    let name = "tier1-evidence-1-1";
    let (fake, run) = served(t.path(), &[(name, "evidence.zip")]);
    let o = github(env!("CARGO_BIN_EXE_tier1-evidence"), &fake)
        .args([
            "verify",
            "--run-id",
            &run.to_string(),
            "--artifact-name",
            name,
        ])
        .arg("--file")
        .arg(dir().join("evidence.zip"))
        .args([
            "--expected-digest",
            f["sha256"]["evidence.zip"].as_str().unwrap(),
        ])
        .env_remove("GITHUB_OUTPUT")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "verified");
    assert_eq!(
        v["evidence_artifact_digest"],
        format!("sha256:{}", f["sha256"]["evidence.zip"].as_str().unwrap())
    );
}

#[test]
fn promote_ratifies_a_candidate_and_evidence_zipped_by_github_s_client() {
    let f = fixture();
    let t = tempfile::tempdir().unwrap();
    // download-artifact extracts the candidate zip; the evidence zip is given as downloaded.
    let candidate = t.path().join("candidate");
    let mut z =
        zip::ZipArchive::new(std::fs::File::open(dir().join("candidate-history.zip")).unwrap())
            .unwrap();
    z.extract(&candidate).unwrap();
    let (fake, run) = served(t.path(), &[]);
    fake.set_environment(environment_record(ENV, &["bob"], true));
    fake.add_approval(run, approval_record("approved", "bob", 7, ENV));
    let out = t.path().join("ratified");
    let o = github(env!("CARGO_BIN_EXE_tier1-promote"), &fake)
        .arg("--history-root")
        .arg(&candidate)
        .arg("--evidence-archive")
        .arg(dir().join("evidence.zip"))
        .arg("--output-history-root")
        .arg(&out)
        .arg("--suite-config")
        .arg(dir().join("suite.yaml"))
        .args(["--run-id", f["run_id"].as_str().unwrap()])
        .args([
            "--requester",
            "alice",
            "--note",
            "First anchor, reviewed by bob",
        ])
        .args([
            "--workflow-run",
            &format!("https://github.com/{REPO}/actions/runs/{run}"),
        ])
        .args(["--expected-git-commit", f["git_commit"].as_str().unwrap()])
        .args([
            "--expected-evidence-artifact",
            f["evidence_artifact_name"].as_str().unwrap(),
        ])
        .args([
            "--expected-evidence-digest",
            f["sha256"]["evidence.zip"].as_str().unwrap(),
        ])
        .args([
            "--approvals-from-run",
            &run.to_string(),
            "--allow-bootstrap",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", text(&o));
    let v = tier1::history_check::validate_history_root(&out).expect("a valid ratified history");
    let row = v.index.runs.last().unwrap();
    assert_eq!(row.run_id, f["run_id"].as_str().unwrap());
    assert_eq!(row.baseline_acceptance_reviewers, ["bob"]);
    assert_eq!(
        row.baseline_evidence_digest.as_deref(),
        Some(format!("sha256:{}", f["sha256"]["evidence.zip"].as_str().unwrap()).as_str())
    );
}
