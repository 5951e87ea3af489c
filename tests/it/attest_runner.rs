//! `tier1-attest` end to end: labels from a saved jobs response or a local fake jobs API, runner
//! version from the option or a fake `Runner.Listener`, refusals naming each failed check.

use crate::support::exit_code::{Exit, exit_code};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_tier1-attest");
const ATTESTATION: i32 = exit_code(Exit::Attestation);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runner/jobs_attempt.json")
}

/// The command with a clean environment describing self-hosted Linux x64 runner `b200-node-01`.
fn attest() -> Command {
    let mut c = crate::support::command::scrubbed(BIN);
    c.env_clear()
        .env("RUNNER_NAME", "b200-node-01")
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_ENVIRONMENT", "self-hosted");
    c
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout not JSON ({e}): {:?}", out))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The attestation of the fixture job on runner 2.327.1 (which passes).
fn attested_2_327_1() -> Value {
    let out = attest()
        .arg("--jobs-json")
        .arg(fixture())
        .args(["--runner-version", "2.327.1"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        stderr(&out)
    );
    stdout_json(&out)
}

#[test]
fn accepts_runner_2_327_1_with_all_labels() {
    let a = attested_2_327_1();
    assert_eq!(a["passed"], true);
    assert_eq!(a["runner_name"], "b200-node-01");
    assert_eq!(a["job_id"], 41000000002u64);
    assert_eq!(a["runner_version"], "2.327.1");
    let names: Vec<&str> = a["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "runner_environment",
            "runner_os",
            "runner_arch",
            "machine_os",
            "machine_arch",
            "job",
            "requested_labels",
            "runner_version"
        ]
    );
}

/// Issue 20, defect 6: the jobs API's `labels` are the job's `runs-on`, so comparing them with the
/// policy shows what the job asked for, never what the runner carries; the record says so, and it
/// checks what the machine itself shows (the process's OS and architecture) beside what the runner
/// reports in its environment.
#[test]
fn the_attestation_says_what_it_proves_and_checks_the_machine_itself() {
    let a = attested_2_327_1();
    let check = |name: &str| {
        a["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no check {name}: {a:#}"))
    };
    assert_eq!(check("machine_os")["found"], std::env::consts::OS);
    assert_eq!(check("machine_arch")["found"], std::env::consts::ARCH);
    let requested = check("requested_labels");
    assert!(
        requested["expected"]
            .as_str()
            .unwrap()
            .starts_with("the job's runs-on includes "),
        "{requested}"
    );
    let scope = a["scope"].as_str().unwrap_or_default();
    for part in [
        "not the labels the runner carries",
        "label policy",
        "Set up job",
        "tier1-preflight",
    ] {
        assert!(scope.contains(part), "{part} not in {scope:?}");
    }
}

#[test]
fn refuses_runner_2_327_0_when_node24_required() {
    let out = attest()
        .arg("--jobs-json")
        .arg(fixture())
        .args(["--runner-version", "2.327.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(ATTESTATION));
    let err = stderr(&out);
    assert!(
        err.contains(
            "runner_version: expected >= 2.327.1 (required by node24-actions), found 2.327.0"
        ),
        "{err}"
    );
    assert!(!err.contains("labels:"), "{err}");
    let a = stdout_json(&out);
    assert_eq!(a["passed"], false);
}

#[test]
fn old_runner_is_fine_when_node24_is_not_required() {
    let out = attest()
        .arg("--jobs-json")
        .arg(fixture())
        .args([
            "--runner-version",
            "2.300.0",
            "--labels",
            "self-hosted,gpu,b200",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        stderr(&out)
    );
}

#[test]
fn refuses_a_job_missing_any_required_label() {
    let full: Value = serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for label in [
        "self-hosted",
        "linux",
        "x64",
        "gpu",
        "b200",
        "node24-actions",
    ] {
        let mut jobs = full.clone();
        let labels = jobs["jobs"][1]["labels"].as_array_mut().unwrap();
        labels.retain(|l| l != label);
        let path = dir.path().join(format!("jobs-{label}.json"));
        std::fs::write(&path, serde_json::to_vec(&jobs).unwrap()).unwrap();
        let out = attest()
            .arg("--jobs-json")
            .arg(&path)
            .args(["--runner-version", "2.330.0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(ATTESTATION), "{label}");
        let err = stderr(&out);
        assert!(
            err.contains("requested_labels: expected the job's runs-on includes self-hosted,linux,x64,gpu,b200,node24-actions, found "),
            "{err}"
        );
        assert!(
            err.contains(&format!("(missing {label})")),
            "{label}: {err}"
        );
    }
}

#[test]
fn refuses_hosted_runner_and_unknown_runner_name() {
    let out = attest()
        .env("RUNNER_ENVIRONMENT", "github-hosted")
        .env("RUNNER_NAME", "elsewhere")
        .arg("--jobs-json")
        .arg(fixture())
        .args(["--runner-version", "2.330.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(ATTESTATION));
    let err = stderr(&out);
    assert!(
        err.contains("runner_environment: expected self-hosted, found github-hosted"),
        "{err}"
    );
    assert!(
        err.contains(
            "job: expected a job on runner \"elsewhere\", found no job of 2 assigned to this runner"
        ),
        "{err}"
    );
    assert!(
        err.contains("(missing self-hosted,linux,x64,gpu,b200,node24-actions)"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn reads_the_version_from_runner_listener_under_runner_root() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("bin")).unwrap();
    let listener = root.path().join("bin/Runner.Listener");
    for (version, code) in [("2.327.1", exit_code(Exit::Ok)), ("2.327.0", ATTESTATION)] {
        std::fs::write(
            &listener,
            format!("#!/bin/sh\n[ \"$1\" = --version ] && echo {version}\n"),
        )
        .unwrap();
        std::fs::set_permissions(&listener, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = attest()
            .arg("--jobs-json")
            .arg(fixture())
            .arg("--runner-root")
            .arg(root.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{version}: {}", stderr(&out));
        assert_eq!(stdout_json(&out)["runner_version"], version);
    }
}

#[test]
fn unknown_version_outside_a_runner_is_a_failed_check() {
    let out = attest().arg("--jobs-json").arg(fixture()).output().unwrap();
    assert_eq!(out.status.code(), Some(ATTESTATION));
    let err = stderr(&out);
    assert!(err.contains("runner_version: expected >= 2.327.1 (required by node24-actions), found unknown (runner version: expected a Runner.Worker among this process's ancestors"), "{err}");
}

#[test]
fn malformed_jobs_file_is_invalid_input_and_output_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("jobs.json");
    std::fs::write(&bad, br#"{"jobs": "nope"}"#).unwrap();
    let dest = dir.path().join("attestation.json");
    let out = attest()
        .arg("--jobs-json")
        .arg(&bad)
        .args(["--runner-version", "2.330.0", "--output"])
        .arg(&dest)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(exit_code(Exit::Invalid)));
    assert!(
        stderr(&out).contains("jobs.json: invalid JSON"),
        "{}",
        stderr(&out)
    );
    assert!(!dest.exists());
}

/// Serve the fixture's two jobs as two pages of one job each, the first with GitHub's
/// `Link: <...page=2>; rel="next"` header, recording each request line and whether it carried the
/// bearer token.
fn serve_pages(listener: TcpListener) -> std::thread::JoinHandle<Vec<(String, bool)>> {
    let full: Value = serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for (i, stream) in listener.incoming().take(2).enumerate() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut authorized = false;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.to_ascii_lowercase()
                    .starts_with("authorization: bearer test-token")
                {
                    authorized = true;
                }
                if h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let body = serde_json::to_vec(
                &serde_json::json!({"total_count": 2, "jobs": [full["jobs"][i].clone()]}),
            )
            .unwrap();
            let link = if i == 0 {
                format!(
                    "link: <http://{addr}/repos/tier1-bench/tier1/actions/runs/17000000001/attempts/3/jobs?per_page=100&page=2>; rel=\"next\"\r\n"
                )
            } else {
                String::new()
            };
            write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{link}connection: close\r\n\r\n", body.len()).unwrap();
            stream.write_all(&body).unwrap();
            let _ = reader.read(&mut [0u8; 0]);
            seen.push((request_line.trim().to_string(), authorized));
        }
        seen
    })
}

#[test]
fn reads_every_page_of_the_jobs_api_for_this_attempt() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = serve_pages(listener);
    let out = attest()
        .env("GITHUB_API_URL", format!("http://{addr}"))
        .env("GITHUB_REPOSITORY", "tier1-bench/tier1")
        .env("GITHUB_RUN_ID", "17000000001")
        .env("GITHUB_RUN_ATTEMPT", "3")
        .env("GITHUB_TOKEN", "test-token")
        .args(["--runner-version", "2.327.1"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout_json(&out)["job_id"], 41000000002u64);
    let seen = server.join().unwrap();
    assert_eq!(
        seen,
        [
            ("GET /repos/tier1-bench/tier1/actions/runs/17000000001/attempts/3/jobs?per_page=100 HTTP/1.1".to_string(), true),
            ("GET /repos/tier1-bench/tier1/actions/runs/17000000001/attempts/3/jobs?per_page=100&page=2 HTTP/1.1".to_string(), true),
        ]
    );
}

#[test]
fn api_mode_without_a_token_is_invalid_input() {
    let out = attest()
        .env("GITHUB_REPOSITORY", "tier1-bench/tier1")
        .env("GITHUB_RUN_ID", "1")
        .args(["--runner-version", "2.327.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(exit_code(Exit::Invalid)));
    assert!(
        stderr(&out).contains("GITHUB_TOKEN: expected a value (or --jobs-json), found nothing"),
        "{}",
        stderr(&out)
    );
}
