//! A flag the binaries share is refused the same way by every binary that takes it: a bad
//! `--artifact-prefix` (or `TIER1_ARTIFACT_PREFIX`) is invalid input, exit 3, said as
//! `<tool>: error: --artifact-prefix: expected …, found "…"` before anything is read or written.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};

/// (tool, its arguments besides the prefix, whether the prefix comes from the environment).
const CASES: [(&str, &[&str], bool); 5] = [
    (
        "tier1-restore",
        &["--destination", "out", "--branch", "main"],
        false,
    ),
    ("tier1-nightly", &["--store", "store"], false),
    ("tier1-nightly", &["--store", "store"], true),
    (
        "tier1-dashboard",
        &["--store", "local:store", "--output", "out"],
        false,
    ),
    (
        "tier1-compare",
        &["run", "--repository", "o/r", "--branch", "main"],
        true,
    ),
];

#[test]
fn a_bad_artifact_prefix_is_invalid_input_in_every_binary() {
    for (tool, args, from_env) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = command::scrubbed(command::bin(tool));
        cmd.current_dir(dir.path()).args(args);
        if from_env {
            cmd.env("TIER1_ARTIFACT_PREFIX", "tier1-history");
        } else {
            cmd.args(["--artifact-prefix", "tier1-history"]);
        }
        let o = cmd.output().expect("the binary runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "{tool} {args:?}: {err}"
        );
        assert!(
            err.starts_with(&format!("{tool}: error: --artifact-prefix: expected ")),
            "{tool}: {err}"
        );
        assert!(err.contains("found \"tier1-history\""), "{tool}: {err}");
        assert!(o.stdout.is_empty(), "{tool}: no JSON on refusal");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{tool} wrote {left:?}");
    }
}

/// Issue 41: the two run ids have one name each. tier1's run id is `--run-id` or `TIER1_RUN_ID`
/// (its former variable `RUN_ID` still read when `TIER1_RUN_ID` is not set) in every binary that
/// takes it; a GitHub workflow run's id is `--workflow-run-id` or `GITHUB_RUN_ID` (its former
/// flag `--run-id` still accepted, hidden from the help).
#[test]
fn each_run_id_has_one_name_and_the_former_spellings_are_still_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    let pack = |env: &[(&str, &str)]| {
        let mut cmd = command::scrubbed(command::bin("tier1-evidence"));
        cmd.current_dir(dir.path())
            .args(["pack", "--evidence-root", "runs", "--output", "e.zip"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("tier1-evidence runs")
    };
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let none = pack(&[]);
    assert_eq!(
        none.status.code(),
        Some(exit_code(Exit::Usage)),
        "{}",
        text(&none)
    );
    assert!(text(&none).contains("--run-id"), "{}", text(&none));
    for env in [
        &[("TIER1_RUN_ID", "night_a")][..],
        &[("RUN_ID", "night_a")][..],
        &[("TIER1_RUN_ID", "night_a"), ("RUN_ID", "night_b")][..],
    ] {
        let o = pack(env);
        assert_ne!(
            o.status.code(),
            Some(exit_code(Exit::Usage)),
            "{env:?}: {}",
            text(&o)
        );
        assert!(text(&o).contains("night_a"), "{env:?}: {}", text(&o));
        assert!(!text(&o).contains("night_b"), "{env:?}: {}", text(&o));
        assert!(!dir.path().join("e.zip").exists(), "{env:?}");
    }
    for (tool, args) in [
        ("tier1-run", &[][..]),
        ("tier1-evidence", &["bind"][..]),
        ("tier1-evidence", &["pack"][..]),
        ("tier1-publish", &[][..]),
        ("tier1-promote", &[][..]),
    ] {
        let o = command::scrubbed(command::bin(tool))
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("--run-id") && help.contains("TIER1_RUN_ID"),
            "{tool} {args:?}: {help}"
        );
    }

    // The workflow run: both spellings reach the request (run 0 is refused by the request's own
    // check, the same way), and the help names only the new one.
    let verify = |flag: &str| {
        command::scrubbed(command::bin("tier1-evidence"))
            .current_dir(dir.path())
            .args([
                "verify",
                flag,
                "0",
                "--file",
                "absent.zip",
                "--artifact-id",
                "9",
            ])
            .args(["--expected-digest", &"a".repeat(64), "--repository", "o/r"])
            .env("GITHUB_TOKEN", "t")
            .output()
            .unwrap()
    };
    let new = verify("--workflow-run-id");
    let former = verify("--run-id");
    assert_eq!(
        new.status.code(),
        Some(exit_code(Exit::Invalid)),
        "{}",
        text(&new)
    );
    assert!(text(&new).contains("run id must be > 0"), "{}", text(&new));
    assert_eq!(new.status.code(), former.status.code(), "{}", text(&former));
    assert_eq!(text(&new), text(&former));
    for (tool, args) in [
        ("tier1-evidence", &["verify"][..]),
        ("tier1-attest", &[][..]),
    ] {
        let o = command::scrubbed(command::bin(tool))
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("--workflow-run-id") && help.contains("GITHUB_RUN_ID"),
            "{tool}: {help}"
        );
        // The former flag is accepted but not listed (its name appears only in the new one's
        // description).
        assert!(
            !help.lines().any(|l| l.trim_start().starts_with("--run-id")),
            "{tool}: {help}"
        );
    }
}
