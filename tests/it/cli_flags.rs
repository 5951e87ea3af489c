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
