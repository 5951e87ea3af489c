//! install/install.sh, the installer of every tier1 action, against the fake GitHub's public
//! releases: a release whose tarball matches its SHA256SUMS is installed (binaries on PATH and in
//! the `bin` output); a tampered tarball, a wrong pinned digest, a missing release or asset, and a
//! malformed version are refused with a message naming what was expected and found.

use crate::support::fake_github;
use crate::support::workflow_harness;
use crate::support::workflow_release;

use fake_github::FakeGithub;
use std::path::Path;
use std::process::Command;
use workflow_harness::manifest_dir;

struct Install {
    ok: bool,
    stdout: String,
    output: String,
    path: String,
}

fn install(fake: &FakeGithub, tmp: &Path, env: &[(&str, &str)]) -> Install {
    let runner_temp = tmp.join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let (output, path) = (tmp.join("output"), tmp.join("path"));
    std::fs::write(&output, "").unwrap();
    std::fs::write(&path, "").unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg(manifest_dir().join("install/install.sh"))
        .env("RUNNER_TEMP", &runner_temp)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_PATH", &path)
        .env("GITHUB_API_URL", fake.api_url())
        .env("TIER1_REPOSITORY", workflow_release::TIER1_REPOSITORY)
        .env("TIER1_VERIFY_PROVENANCE", "false")
        .env_remove("TIER1_SHA256")
        .env_remove("TIER1_BUILD_FROM_SOURCE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    Install {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
        output: std::fs::read_to_string(&output).unwrap(),
        path: std::fs::read_to_string(&path).unwrap(),
    }
}

fn world() -> (tempfile::TempDir, FakeGithub, Vec<(String, Vec<u8>)>) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    tier1::store::local::LocalStore::create(&store, "acme/kernels").unwrap();
    let fake = FakeGithub::start(&store, "token");
    let work = tmp.path().join("release");
    std::fs::create_dir_all(&work).unwrap();
    let assets = workflow_release::release_assets("0.1.0", &work);
    (tmp, fake, assets)
}

#[test]
fn a_release_matching_its_checksums_is_installed_on_path() {
    let (tmp, fake, assets) = world();
    let digest = String::from_utf8(assets[1].1.clone()).unwrap();
    let digest = digest.split_whitespace().next().unwrap().to_string();
    workflow_release::publish_release(&fake, "0.1.0", assets);
    let r = install(
        &fake,
        tmp.path(),
        &[("TIER1_VERSION", "0.1.0"), ("TIER1_SHA256", &digest)],
    );
    assert!(r.ok, "{}", r.stdout);
    let bin = r.output.trim().strip_prefix("bin=").expect("bin output");
    assert!(Path::new(bin).join("tier1-run").exists(), "{bin}");
    assert!(
        Path::new(bin).join("docs/suite.md").is_file(),
        "the suite reference ships"
    );
    assert_eq!(r.path.trim(), bin);
}

#[test]
fn a_tampered_or_unpinned_release_is_refused() {
    let (tmp, fake, mut assets) = world();
    // v0.1.0: the tarball replaced after SHA256SUMS was written; v0.2.0 as built.
    assets[0].1.push(0);
    workflow_release::publish_release(&fake, "0.1.0", assets);
    let work = tmp.path().join("release-0.2.0");
    std::fs::create_dir_all(&work).unwrap();
    let good = workflow_release::release_assets("0.2.0", &work);
    workflow_release::publish_release(&fake, "0.2.0", good);
    let zeros = "0".repeat(64);
    let cases: [(&[(&str, &str)], String); 5] = [
        (
            &[("TIER1_VERSION", "0.1.0")],
            "does not match SHA256SUMS of v0.1.0".into(),
        ),
        (
            &[("TIER1_VERSION", "0.2.0"), ("TIER1_SHA256", &zeros)],
            format!("expected sha256 {zeros}"),
        ),
        (
            &[("TIER1_VERSION", "9.9.9")],
            "no release v9.9.9 in tier1-bench/tier1".into(),
        ),
        (
            &[("TIER1_VERSION", "latest")],
            "expected a version like 0.1.0, found 'latest'".into(),
        ),
        (
            &[
                ("TIER1_VERSION", "0.2.0"),
                ("TIER1_VERIFY_PROVENANCE", "maybe"),
            ],
            "verify-provenance: expected auto, true or false, found 'maybe'".into(),
        ),
    ];
    for (env, message) in cases {
        let r = install(&fake, tmp.path(), env);
        assert!(
            !r.ok && r.stdout.contains(&message),
            "{env:?}: {}",
            r.stdout
        );
    }
}
