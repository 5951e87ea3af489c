//! install/install.sh, the installer of every tier1 action, against the fake GitHub's public
//! releases: a release whose tarball matches its SHA256SUMS is installed (binaries on PATH and in
//! the `bin` output); a tampered tarball, a wrong pinned digest, a missing release or asset, and a
//! malformed version are refused with a message naming what was expected and found. Issue 20: the
//! release API is asked with the token (the unauthenticated hour of a shared address may be
//! spent), rate limits are waited out or named, and a tarball neither pinned by `tier1-sha256` nor
//! provenance-checked (`gh attestation verify`, pinned to the release workflow and the tag) is
//! refused unless the caller opts out by name (`allow-unverified`).

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
    install_with(fake, tmp, None, env)
}

/// [`install`] with `gh_dir` first on `PATH` and no `TIER1_GH`: the installer takes whatever `gh`
/// the runner has, as on a self-hosted runner with the distribution's package.
fn install_with_path_gh(
    fake: &FakeGithub,
    tmp: &Path,
    gh_dir: &Path,
    env: &[(&str, &str)],
) -> Install {
    install_with(fake, tmp, Some(gh_dir), env)
}

fn install_with(
    fake: &FakeGithub,
    tmp: &Path,
    gh_dir: Option<&Path>,
    env: &[(&str, &str)],
) -> Install {
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
        // Never the machine's gh CLI: a test that wants one gives a stand-in.
        .env("TIER1_GH", tmp.join("no-gh-here"))
        .env("TIER1_INSTALL_MAX_WAIT", "5")
        .env_remove("GH_TOKEN")
        .env_remove("TIER1_ALLOW_UNVERIFIED")
        .env_remove("TIER1_SHA256")
        .env_remove("TIER1_BUILD_FROM_SOURCE");
    if let Some(dir) = gh_dir {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env_remove("TIER1_GH")
            .env("PATH", format!("{}:{path}", dir.display()));
    }
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

/// A world with release 0.1.0 published; the tarball's digest.
fn published() -> (tempfile::TempDir, FakeGithub, String) {
    let (tmp, fake, assets) = world();
    let digest = pinned(&assets);
    workflow_release::publish_release(&fake, "0.1.0", assets);
    (tmp, fake, digest)
}

/// The pinned digest of the tarball in `assets` (its SHA256SUMS line).
fn pinned(assets: &[(String, Vec<u8>)]) -> String {
    let sums = String::from_utf8(assets[1].1.clone()).unwrap();
    sums.split_whitespace().next().unwrap().to_string()
}

/// A `gh` stand-in of a recent release (2.62.0) that logs its arguments to `<dir>/gh.log` and
/// exits `code`.
fn gh_stand_in(dir: &Path, code: i32) -> std::path::PathBuf {
    gh_release_stand_in(dir, &format!("gh-{code}"), "2.62.0", code)
}

/// A `gh` stand-in named `name` in `dir`: `gh --version` prints `gh version <version> (…)` as gh
/// does; every other command is logged to `<dir>/gh.log` and exits `code`, except that a release
/// before 2.49.0 knows no `attestation` command (gh: `unknown command "attestation" for "gh"`).
fn gh_release_stand_in(dir: &Path, name: &str, version: &str, code: i32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let gh = dir.join(name);
    let log = dir.join("gh.log");
    let old = version
        .split('.')
        .take(2)
        .map(|p| p.parse::<u32>().unwrap_or(0))
        .collect::<Vec<_>>()
        < vec![2, 49];
    let attestation = if old {
        "[[ \"$1\" == attestation ]] && { echo 'unknown command \"attestation\" for \"gh\"' >&2; exit 1; }\n"
    } else {
        ""
    };
    std::fs::write(
        &gh,
        format!(
            "#!/usr/bin/env bash\n[[ \"$1\" == --version ]] && {{ echo 'gh version {version} (2024-01-01)'; echo 'https://github.com/cli/cli/releases/tag/v{version}'; exit 0; }}\necho \"gh $*\" >> '{}'\n{attestation}exit {code}\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    gh
}

#[test]
fn the_release_api_is_asked_with_the_token_when_the_address_spent_its_unauthenticated_hour() {
    let (tmp, fake, digest) = published();
    fake.set_unauthenticated_remaining(0);
    let r = install(
        &fake,
        tmp.path(),
        &[
            ("TIER1_VERSION", "0.1.0"),
            ("TIER1_SHA256", &digest),
            ("GH_TOKEN", "token"),
        ],
    );
    assert!(r.ok, "{}", r.stdout);
    let asked = fake.requests_to("/releases/tags/v0.1.0");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].header("authorization"), Some("Bearer token"));
    // The asset downloads (public, from the storage host) never carry it.
    let downloads: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|q| q.listener == "blob")
        .collect();
    assert_eq!(downloads.len(), 2, "{downloads:?}");
    assert!(
        downloads
            .iter()
            .all(|q| q.header("authorization").is_none())
    );
}

#[test]
fn an_exhausted_rate_limit_is_named_and_a_short_one_is_waited_out() {
    let (tmp, fake, digest) = published();
    fake.set_unauthenticated_remaining(0);
    let r = install(
        &fake,
        tmp.path(),
        &[("TIER1_VERSION", "0.1.0"), ("TIER1_SHA256", &digest)],
    );
    assert!(!r.ok, "{}", r.stdout);
    for fragment in [
        "the GitHub API rate limit is exhausted (HTTP 403, x-ratelimit-limit 60 per hour, unauthenticated",
        "give the action a token (the github-token input",
    ] {
        assert!(
            r.stdout.contains(fragment),
            "{fragment} not in {}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("no release"), "{}", r.stdout);
    assert_eq!(r.output, "", "nothing installed");

    // A limit that resets within the wait is waited out, then the install goes on.
    fake.set_unauthenticated_remaining(60);
    let reset = (chrono::Utc::now() + chrono::Duration::seconds(1)).timestamp();
    fake.inject(fake_github::Fault::Status {
        on: "/releases/tags/".into(),
        status: 403,
        headers: vec![
            ("x-ratelimit-limit".into(), "60".into()),
            ("x-ratelimit-remaining".into(), "0".into()),
            ("x-ratelimit-reset".into(), reset.to_string()),
        ],
        times: 1,
    });
    let before = fake.requests_to("/releases/tags/").len();
    let r = install(
        &fake,
        tmp.path(),
        &[("TIER1_VERSION", "0.1.0"), ("TIER1_SHA256", &digest)],
    );
    assert!(r.ok, "{}", r.stdout);
    assert!(r.stdout.contains("rate limited (HTTP 403"), "{}", r.stdout);
    assert_eq!(fake.requests_to("/releases/tags/").len(), before + 2);
}

#[test]
fn an_unverified_tarball_is_refused_unless_the_caller_opts_out_by_name() {
    let (tmp, fake, digest) = published();
    let v = ("TIER1_VERSION", "0.1.0");
    // No pinned digest and no gh CLI (verify-provenance auto): SHA256SUMS alone is not enough.
    let r = install(&fake, tmp.path(), &[v, ("TIER1_VERIFY_PROVENANCE", "auto")]);
    assert!(!r.ok, "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "not verified: neither tier1-sha256 is pinned nor was its build provenance checked"
        ) && r.stdout.contains("allow-unverified: true"),
        "{}",
        r.stdout
    );
    assert_eq!(r.output, "", "nothing installed");
    // Opting out by name installs, with a loud warning.
    let r = install(&fake, tmp.path(), &[v, ("TIER1_ALLOW_UNVERIFIED", "true")]);
    assert!(r.ok, "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "::warning::tier1 install: tier1-v0.1.0-x86_64-unknown-linux-gnu.tar.gz is NOT VERIFIED"
        ),
        "{}",
        r.stdout
    );
    // verify-provenance: true without gh is refused even with a pinned digest.
    let r = install(
        &fake,
        tmp.path(),
        &[
            v,
            ("TIER1_SHA256", &digest),
            ("TIER1_VERIFY_PROVENANCE", "true"),
        ],
    );
    assert!(
        !r.ok
            && r.stdout
                .contains("verify-provenance: true needs gh 2.49.0 or newer"),
        "{}",
        r.stdout
    );
}

#[test]
fn provenance_is_verified_against_the_release_workflow_and_the_tag() {
    let (tmp, fake, _) = published();
    let gh_ok = gh_stand_in(tmp.path(), 0);
    let r = install(
        &fake,
        tmp.path(),
        &[
            ("TIER1_VERSION", "0.1.0"),
            ("TIER1_VERIFY_PROVENANCE", "auto"),
            ("TIER1_GH", gh_ok.to_str().unwrap()),
        ],
    );
    assert!(r.ok, "{}", r.stdout);
    let log = std::fs::read_to_string(tmp.path().join("gh.log")).unwrap();
    for flag in [
        "attestation verify ",
        "--repo tier1-bench/tier1",
        "--cert-identity https://github.com/tier1-bench/tier1/.github/workflows/release.yml@refs/tags/v0.1.0",
        "--deny-self-hosted-runners",
    ] {
        assert!(log.contains(flag), "{flag} not in {log}");
    }
    // Never --signer-workflow: gh matches it as a prefix (cli/cli#9507, `validateSignerWorkflow`
    // in pkg/cmd/attestation/verify/policy.go: `^https://` + the value), so `release.yml` would
    // also admit `release.yml-evil.yml`; the certificate identity is compared exactly.
    assert!(!log.contains("--signer-workflow"), "{log}");
    // An attestation that does not verify refuses the install.
    let gh_no = gh_stand_in(tmp.path(), 1);
    let r = install(
        &fake,
        tmp.path(),
        &[
            ("TIER1_VERSION", "0.1.0"),
            ("TIER1_VERIFY_PROVENANCE", "auto"),
            ("TIER1_GH", gh_no.to_str().unwrap()),
        ],
    );
    assert!(!r.ok, "{}", r.stdout);
    assert!(
        r.stdout.contains("gh attestation verify found no build provenance signed by https://github.com/tier1-bench/tier1/.github/workflows/release.yml@refs/tags/v0.1.0"),
        "{}",
        r.stdout
    );
}

/// Issue 36, N2: a self-hosted runner with its distribution's `gh` (Debian 12 ships 2.23.0; `gh
/// attestation verify` exists from 2.49.0 on). The installer reads gh's version before it relies
/// on it: too old, it says which version it found and which it needs, installs when the pinned
/// `tier1-sha256` verified the tarball, refuses otherwise — and never blames the release.
#[test]
fn an_old_distribution_gh_is_named_by_its_version_and_never_blames_the_release() {
    let (tmp, fake, digest) = published();
    let bin = tmp.path().join("distribution-bin");
    std::fs::create_dir_all(&bin).unwrap();
    gh_release_stand_in(&bin, "gh", "2.23.0", 0);
    let log = tmp.path().join("distribution-bin/gh.log");
    let v = ("TIER1_VERSION", "0.1.0");
    let auto = ("TIER1_VERIFY_PROVENANCE", "auto");
    // Pinned: installed, the old gh named and left alone.
    let r = install_with_path_gh(
        &fake,
        tmp.path(),
        &bin,
        &[v, auto, ("TIER1_SHA256", &digest)],
    );
    assert!(r.ok, "{}", r.stdout);
    assert!(
        r.stdout.contains("gh 2.23.0") && r.stdout.contains("2.49.0"),
        "{}",
        r.stdout
    );
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("attestation"),
        "an old gh was asked to verify"
    );
    // Not pinned: refused, naming the versions, not the release.
    let r = install_with_path_gh(&fake, tmp.path(), &bin, &[v, auto]);
    assert!(!r.ok, "{}", r.stdout);
    for fragment in [
        "not verified: neither tier1-sha256 is pinned nor was its build provenance checked",
        "gh 2.23.0",
        "2.49.0 or newer",
    ] {
        assert!(
            r.stdout.contains(fragment),
            "{fragment} not in {}",
            r.stdout
        );
    }
    assert!(
        !r.stdout.contains("found no build provenance"),
        "the release is blamed: {}",
        r.stdout
    );
    assert_eq!(r.output, "", "nothing installed");
    // Required: refused by name, even with the digest pinned.
    let r = install_with_path_gh(
        &fake,
        tmp.path(),
        &bin,
        &[
            v,
            ("TIER1_VERIFY_PROVENANCE", "true"),
            ("TIER1_SHA256", &digest),
        ],
    );
    assert!(!r.ok, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("verify-provenance: true needs gh 2.49.0 or newer (gh attestation verify), found gh 2.23.0"),
        "{}",
        r.stdout
    );
    assert_eq!(r.output, "", "nothing installed");
}

/// Issue 36, N2: a recent `gh` on `PATH` (no `TIER1_GH`) verifies the provenance with the exact
/// certificate identity of the release workflow at the tag.
#[test]
fn a_recent_gh_on_path_verifies_the_exact_signer() {
    let (tmp, fake, _) = published();
    let bin = tmp.path().join("gh-bin");
    std::fs::create_dir_all(&bin).unwrap();
    gh_release_stand_in(&bin, "gh", "2.62.0", 0);
    let r = install_with_path_gh(
        &fake,
        tmp.path(),
        &bin,
        &[
            ("TIER1_VERSION", "0.1.0"),
            ("TIER1_VERIFY_PROVENANCE", "auto"),
        ],
    );
    assert!(r.ok, "{}", r.stdout);
    let log = std::fs::read_to_string(bin.join("gh.log")).unwrap();
    assert!(
        log.contains("attestation verify ")
            && log.contains("--cert-identity https://github.com/tier1-bench/tier1/.github/workflows/release.yml@refs/tags/v0.1.0")
            && !log.contains("--signer-workflow"),
        "{log}"
    );
}
