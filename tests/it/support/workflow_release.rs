//! tier1 as another repository sees it, for the adoption scenario: a git repository holding this
//! checkout's actions (`action.yml`, `install/`, `publish/`, `promote/`) that a workflow names as
//! `tier1-bench/tier1[/path]@<commit>` (the harness's remote actions), and a release `v<version>`
//! served by the fake GitHub: the tarball `release.yml` builds (the binaries this test built, as
//! symbolic links, and the suite reference) and its `SHA256SUMS`. Needs `workflow_harness` and
//! `fake_github` beside it.
#![allow(dead_code)]

use crate::support::fake_github::{FakeGithub, Release};
use crate::support::nightly_repo::git;
use crate::support::workflow_harness::{BINS, manifest_dir};
use std::path::Path;
use std::process::Command;

/// The repository the release and the actions come from (Cargo.toml's `repository`).
pub const TIER1_REPOSITORY: &str = "tier1-bench/tier1";

/// The workflow that signs the release's build provenance (its certificate identity, which `gh
/// attestation verify --cert-identity` compares, is `https://github.com/<this>@refs/tags/v<version>`).
pub const SIGNER_WORKFLOW: &str = "tier1-bench/tier1/.github/workflows/release.yml";

/// The files of this checkout a pinned commit of tier1 carries for the actions.
const ACTION_FILES: [&str; 7] = [
    "action.yml",
    "install/action.yml",
    "install/install.sh",
    "publish/action.yml",
    "promote/action.yml",
    "validate/action.yml",
    "validate/validate-request.sh",
];

/// Make `dir` a git repository holding this checkout's actions; returns its commit.
pub fn tier1_action_repository(dir: &Path) -> String {
    let root = manifest_dir();
    for rel in ACTION_FILES {
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), &to).unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "tier1 actions"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The release asset name of `version` (release.yml: `tier1-v<version>-<target>`).
pub fn tarball_stem(version: &str) -> String {
    format!("tier1-v{version}-x86_64-unknown-linux-gnu")
}

/// The assets of release `version` as release.yml builds them, made under `work`: the tarball (the
/// binaries this test built, as symbolic links, README and the docs) and `SHA256SUMS`.
pub fn release_assets(version: &str, work: &Path) -> Vec<(String, Vec<u8>)> {
    let stem = tarball_stem(version);
    let dir = work.join(&stem);
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    for (name, path) in BINS {
        std::os::unix::fs::symlink(path, dir.join(name)).unwrap();
    }
    for doc in [
        "README.md",
        "docs/suite.md",
        "docs/adoption.md",
        "docs/command-targets.md",
        "helpers/python/tier1_bench.py",
        "helpers/c/tier1_bench.h",
        "examples/command_target.py",
        "examples/command_target.c",
    ] {
        std::fs::create_dir_all(dir.join(doc).parent().unwrap()).unwrap();
        std::fs::copy(manifest_dir().join(doc), dir.join(doc)).unwrap();
    }
    let tarball = format!("{stem}.tar.gz");
    let out = Command::new("tar")
        .current_dir(work)
        .args(["-czf", &tarball, &stem])
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "tar: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(work.join(&tarball)).unwrap();
    let out = Command::new("sha256sum")
        .current_dir(work)
        .arg(&tarball)
        .output()
        .expect("sha256sum runs");
    assert!(out.status.success());
    vec![(tarball, bytes), ("SHA256SUMS".into(), out.stdout)]
}

/// Publish `assets` as release `v<version>` of [`TIER1_REPOSITORY`] on the fake GitHub.
pub fn publish_release(fake: &FakeGithub, version: &str, assets: Vec<(String, Vec<u8>)>) {
    fake.add_release(Release {
        repo: TIER1_REPOSITORY.into(),
        tag: format!("v{version}"),
        assets,
    });
}

/// The SHA-256 of the tarball among `assets` (as its `SHA256SUMS` line gives it).
pub fn tarball_sha256(assets: &[(String, Vec<u8>)]) -> String {
    let sums = assets
        .iter()
        .find(|(n, _)| n == "SHA256SUMS")
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .expect("SHA256SUMS");
    sums.split_whitespace()
        .next()
        .expect("a digest")
        .to_string()
}
