//! Hostile inputs to `tier1-nightly` are refused before anything runs (exit 3, the file or option
//! and the field named, the store byte for byte as it was): suites whose numbers would overflow a
//! clock or exhaust memory, a suite file without end or not UTF-8, free text too large for the
//! history, and notes or requesters with control characters. A shape too large for the machine
//! fails that target alone, before anything is allocated.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::faults::{assert_unchanged, nightly_at, snapshot};
use crate::support::nightly_repo::{Repo, git, nightly, repo};
use std::path::PathBuf;

fn published() -> Repo {
    let r = repo();
    let o = nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    r
}

fn store(r: &Repo) -> PathBuf {
    r.root.join(".tier1/store")
}

/// Write `suite` as `hostile.yaml` (committed: the checkout stays clean) and run a night with it.
fn night_with_suite(r: &Repo, name: &str, suite: &[u8]) -> crate::support::nightly_repo::Out {
    std::fs::write(r.root.join(name), suite).unwrap();
    git(&r.root, &["add", name]);
    git(&r.root, &["commit", "-q", "-m", "a hostile suite"]);
    nightly_at(r, &store(r), &[], &["--suite-config", name])
}

fn fixture_suite(r: &Repo) -> String {
    std::fs::read_to_string(r.root.join("suite.yaml")).unwrap()
}

#[test]
fn suite_values_that_would_crash_the_run_are_refused_naming_the_field() {
    let r = published();
    let base = fixture_suite(&r);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "timeout",
            base.replacen("timeout_s: 60", "timeout_s: 18446744073709551615", 1),
            "profiles.smoke.timeout_s",
        ),
        (
            "budget",
            base.replacen("budget_s: 1", "budget_s: 1e308", 1),
            "profiles.smoke.budget_s",
        ),
        (
            "rounds",
            base.replacen("iterations: 5", "iterations: 5\n    max_rounds: 4000000000", 1),
            "profiles.smoke.max_rounds",
        ),
        (
            "description",
            base.replacen(
                "description: Deterministic fixture suite.",
                &format!("description: {}", "x".repeat(5000)),
                1,
            ),
            "description",
        ),
        (
            "shape",
            base.replacen(
                "    command: [python3, fixed_target.py]\n",
                "    command: [python3, fixed_target.py]\n    shapes:\n      smoke: { n: 18446744073709551615 }\n",
                1,
            ),
            "targets.0.shapes.smoke.n",
        ),
    ];
    for (i, (what, text, field)) in cases.into_iter().enumerate() {
        assert_ne!(text, base, "{what}: the fixture changed");
        let before = snapshot(&store(&r));
        let o = night_with_suite(&r, &format!("hostile{i}.yaml"), text.as_bytes());
        assert_eq!(
            o.code,
            exit_code(Exit::Invalid),
            "{what}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains(field) && o.stderr.contains("expected at most"),
            "{what}: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{what}: {}", o.stderr);
        assert_unchanged(
            &before,
            &store(&r),
            &format!("{what}: refused before anything runs"),
        );
    }
}

#[test]
fn a_suite_file_without_end_or_not_utf8_is_refused() {
    let r = published();
    let before = snapshot(&store(&r));
    let o = nightly_at(&r, &store(&r), &[], &["--suite-config", "/dev/zero"]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert!(
        o.stderr.contains("/dev/zero") && o.stderr.contains("larger than"),
        "{}",
        o.stderr
    );
    assert_unchanged(&before, &store(&r), "refused before anything runs");
    let mut latin1 = fixture_suite(&r).into_bytes();
    latin1.extend_from_slice(b"# caf\xe9\n");
    let o = night_with_suite(&r, "latin1.yaml", &latin1);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}\n{}", o.json, o.stderr);
    assert!(
        o.stderr.contains("latin1.yaml") && o.stderr.contains("not UTF-8"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_shape_too_large_for_the_machine_fails_that_target_alone() {
    let r = published();
    let base = fixture_suite(&r);
    let huge = format!(
        "{base}  - key: block_scaling\n    category: gemm\n    target: labs/block_scaling:block_scaling\n    tolerance: {{ rtol: 1.0e-2, atol: 1.0e-1 }}\n    shapes:\n      smoke: {{ m: 2147483647, n: 2147483647, k: 1024 }}\n"
    );
    let o = night_with_suite(&r, "huge.yaml", huge.as_bytes());
    assert_eq!(o.code, exit_code(Exit::Gate), "{}\n{}", o.json, o.stderr);
    let failures = o.json["run"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["key"], "block_scaling");
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .contains("bytes of memory"),
        "{failures:?}"
    );
}

#[test]
fn notes_and_requesters_with_control_characters_are_refused_before_the_run() {
    let r = published();
    let before = snapshot(&store(&r));
    for args in [
        vec!["--accept", "--note", "fine\u{1b}[2J"],
        vec!["--accept", "--note", "ok", "--requester", "bob\nevil"],
        vec!["--accept", "--note", "ok", "--requester", "\u{202e}alice"],
    ] {
        let o = nightly_at(&r, &store(&r), &[], &args);
        assert_eq!(
            o.code,
            exit_code(Exit::Invalid),
            "{args:?}: {}\n{}",
            o.json,
            o.stderr
        );
        assert!(
            o.stderr.contains("control character"),
            "{args:?}: {}",
            o.stderr
        );
        assert_unchanged(
            &before,
            &store(&r),
            &format!("{args:?}: refused before anything runs"),
        );
    }
    let long = "n".repeat(5000);
    let o = nightly_at(&r, &store(&r), &[], &["--accept", "--note", &long]);
    assert_eq!(o.code, exit_code(Exit::Invalid), "{}", o.stderr);
    assert!(
        o.stderr.contains("--note: expected at most"),
        "{}",
        o.stderr
    );
    assert_unchanged(&before, &store(&r), "unchanged");
}
