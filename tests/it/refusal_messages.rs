//! Refusals say what and where, with the documented code, and write nothing: a suite number out of
//! its field's range names the field and the value (a table); a negative sample among valid ones
//! names its variant and index; a sample too small to divide by is never reported as `NaN`; a
//! store whose `store.json` or artifact is a symbolic link is integrity (exit 4) for
//! `tier1-restore` as for the nightly; `--profile` and `--branch` are checked before the nightly
//! records a run; help and version on a full stdout fail; and a failed write while packing shows
//! the real error only.

use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{Repo, git, repo};
use serde_json::Value;
use std::process::Output;

fn text(o: &Output) -> (String, Value) {
    (
        String::from_utf8_lossy(&o.stderr).into_owned(),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
    )
}

/// `tier1-run` in `r` with the fixture suite (edited by the caller) and the `smoke` profile.
fn tier1_run(r: &Repo, envs: &[(&str, &str)]) -> Output {
    let mut cmd = command::scrubbed(command::bin("tier1-run"));
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.current_dir(&r.root)
        .args(["--suite-config", "suite.yaml", "--profile", "smoke"])
        .args(["--run-id", "msg", "--history-root", "out/history"])
        .args(["--evidence-root", "out/runs"])
        .output()
        .expect("tier1-run runs")
}

/// Replace `from` by `to` in the checkout's suite and commit it.
fn edit_suite(r: &Repo, from: &str, to: &str) {
    let p = r.root.join("suite.yaml");
    let s = std::fs::read_to_string(&p).unwrap();
    assert!(s.contains(from), "{from:?} not in the fixture suite");
    std::fs::write(&p, s.replacen(from, to, 1)).unwrap();
    git(&r.root, &["commit", "-q", "-am", "edit"]);
}

#[test]
fn a_suite_number_out_of_range_names_the_field_and_the_value() {
    let table = [
        (
            "iterations: 5",
            "iterations: 4294967296",
            "iterations: expected a whole number from 0 to 4294967295, found 4294967296",
        ),
        (
            "warmup: 5",
            "warmup: 18446744073709551615",
            "warmup: expected a whole number from 0 to 4294967295, found 18446744073709551615",
        ),
        (
            "timeout_s: 60",
            "timeout_s: 1e26",
            "timeout_s: expected a whole number from 0 to 18446744073709551615, found 1e26",
        ),
        (
            "timeout_s: 60",
            "timeout_s: -5",
            "timeout_s: expected a whole number from 0 to 18446744073709551615, found -5",
        ),
    ];
    for (from, to, want) in table {
        let r = repo();
        edit_suite(&r, from, to);
        let o = tier1_run(&r, &[]);
        let (err, _) = text(&o);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "{to}: {err}"
        );
        assert!(
            err.contains("suite.yaml: line ") && err.contains(want),
            "{to}: {err}"
        );
        assert!(!r.root.join("out").exists(), "{to}: nothing written");
    }
}

/// The message of the one failed target of a run.
fn target_failure(o: &Output) -> String {
    let (err, json) = text(o);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Gate)), "{err}");
    json["failures"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{json}\n{err}"))
        .to_string()
}

/// A fixture suite whose `fixed_a` target prints `samples` as its optimized variant's samples.
fn with_optimized_samples(samples: &str) -> Repo {
    let r = repo();
    let script = format!(
        "import json\nsig = {{\"seed\": 42, \"inputs\": []}}\nver = {{\"passed\": True, \"elements\": 1, \"mismatches\": 0, \"max_abs_err\": 0.0, \"max_rel_err\": 0.0}}\nprint(json.dumps({{\"schema\": \"tier1.command_result.v1\", \"variants\": [{{\"name\": \"baseline\", \"samples_ms\": [2.0, 2.0, 2.0, 2.0, 2.0, 2.0], \"input_signature\": sig}}, {{\"name\": \"optimized_x\", \"samples_ms\": {samples}, \"input_signature\": sig, \"verification\": ver}}]}}))\n"
    );
    std::fs::write(r.root.join("odd.py"), script).unwrap();
    git(&r.root, &["add", "odd.py"]);
    git(&r.root, &["commit", "-q", "-m", "odd"]);
    edit_suite(
        &r,
        "    command: [python3, fixed_target.py]\n  - key: fixed_b",
        "    command: [python3, odd.py]\n  - key: fixed_b",
    );
    r
}

#[test]
fn a_negative_sample_is_named_by_variant_and_index() {
    let r = with_optimized_samples("[1.0, 1.0, 1.0, -1.0, 1.0, 1.0]");
    let m = target_failure(&tier1_run(&r, &[]));
    assert!(
        m.contains("variants[1] (optimized_x).samples_ms[3]: expected a finite number of milliseconds in 0..=86400000, found -1.0"),
        "{m}"
    );
}

#[test]
fn a_sample_too_small_to_divide_by_is_named_never_nan() {
    let r = with_optimized_samples("[5e-324, 5e-324, 5e-324, 5e-324, 5e-324, 5e-324]");
    let m = target_failure(&tier1_run(&r, &[]));
    assert!(!m.contains("NaN"), "{m}");
    assert!(m.contains("5e-324"), "{m}");
}

/// A store with one published night, and a restore from it into `dest`.
fn restore_from(store: &std::path::Path, dest: &std::path::Path) -> Output {
    command::scrubbed(command::bin("tier1-restore"))
        .arg("--store")
        .arg(format!("local:{}", store.display()))
        .args([
            "--repository",
            "local/store",
            "--workflow",
            "tier1-nightly.yml",
        ])
        .args(["--branch", "main", "--destination"])
        .arg(dest)
        .output()
        .expect("tier1-restore runs")
}

#[test]
fn a_linked_store_file_is_integrity_for_restore_as_for_the_nightly() {
    let r = repo();
    let store = r.root.join(".tier1/store");
    let o = crate::support::nightly_repo::nightly(&r, 2.0, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}", o.stderr);
    let elsewhere = r.root.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for victim in ["store.json", "artifacts/1.bin"] {
        let copy = r
            .root
            .parent()
            .unwrap()
            .join(format!("copy-{}", victim.replace('/', "-")));
        crate::support::faults::copy_dir(&store, &copy);
        let moved = elsewhere.join(victim.replace('/', "-"));
        std::fs::rename(copy.join(victim), &moved).unwrap();
        std::os::unix::fs::symlink(&moved, copy.join(victim)).unwrap();
        let before = crate::support::faults::snapshot(&elsewhere);
        let dest = copy
            .parent()
            .unwrap()
            .join(format!("dest-{}", victim.replace('/', "-")));
        let o = restore_from(&copy, &dest);
        let (err, _) = text(&o);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Integrity)),
            "{victim}: {err}"
        );
        assert!(err.contains("is a symbolic link"), "{victim}: {err}");
        assert!(!dest.exists(), "{victim}");
        crate::support::faults::assert_unchanged(&before, &elsewhere, victim);
    }
}

#[test]
fn profile_and_branch_are_refused_before_the_nightly_records_a_run() {
    for (extra, want) in [
        (
            vec!["--profile", "nope"],
            "--profile: expected a profile of the suite (smoke), found \"nope\"",
        ),
        (vec!["--branch", ""], "--branch: expected a branch name"),
        (vec!["--branch", "a..b"], "--branch: expected a branch name"),
    ] {
        let r = repo();
        let store = r.root.join(".tier1/store");
        let o = command::scrubbed(command::bin("tier1-nightly"))
            .current_dir(&r.root)
            .args(["--suite-config", "suite.yaml", "--store"])
            .arg(&store)
            .args(&extra)
            .output()
            .expect("tier1-nightly runs");
        let (err, _) = text(&o);
        assert_eq!(
            o.status.code(),
            Some(exit_code(Exit::Invalid)),
            "{extra:?}: {err}"
        );
        assert!(
            err.contains(want) && err.contains("nothing was recorded"),
            "{extra:?}: {err}"
        );
        assert!(!store.exists(), "{extra:?}: no store, no run recorded");
    }
}

#[test]
fn help_and_version_on_a_full_stdout_fail() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        panic!("/dev/full is required by this test");
    };
    for bin in [
        "tier1-attest",
        "tier1-bisect",
        "tier1-compare",
        "tier1-dashboard",
        "tier1-evidence",
        "tier1-export",
        "tier1-nightly",
        "tier1-preflight",
        "tier1-promote",
        "tier1-publish",
        "tier1-restore",
        "tier1-run",
    ] {
        for flag in ["--help", "--version"] {
            let o = command::scrubbed(command::bin(bin))
                .arg(flag)
                .stdout(full.try_clone().unwrap())
                .output()
                .expect("binary runs");
            assert_eq!(
                o.status.code(),
                Some(exit_code(Exit::DiskFull)),
                "{bin} {flag}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let ok = command::scrubbed(command::bin(bin))
                .arg(flag)
                .output()
                .unwrap();
            assert_eq!(ok.status.code(), Some(exit_code(Exit::Ok)), "{bin} {flag}");
            assert!(!ok.stdout.is_empty(), "{bin} {flag}");
        }
    }
}

#[test]
fn a_failed_write_while_packing_shows_the_real_error_only() {
    let t = tempfile::tempdir().unwrap();
    let runs = t.path().join("runs");
    std::fs::create_dir_all(runs.join("r1/results")).unwrap();
    // Six files of 60,000 incompressible bytes: each is copied under the file size limit below,
    // while the archive of all of them outgrows it as a member is written.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..6 {
        let noise: String = (0..60_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect();
        std::fs::write(
            runs.join(format!("r1/results/big{i}.json")),
            format!("\"{noise}\""),
        )
        .unwrap();
    }
    let out = t.path().join("evidence.zip");
    // A file size limit of 100 KiB (EFBIG past it, SIGXFSZ ignored): a write fails as on a full
    // disk.
    let o = command::limited(
        command::bin("tier1-evidence"),
        "trap '' XFSZ && ulimit -f 100",
    )
    .args(["pack", "--evidence-root"])
    .arg(&runs)
    .args(["--run-id", "r1", "--output"])
    .arg(&out)
    .output()
    .expect("bash runs");
    let (err, _) = text(&o);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Io)), "{err}");
    assert!(!err.contains("ZipWriter"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
    assert!(
        err.contains(&format!("{}: File too large", out.display())),
        "the archive is named: {err}"
    );
    assert!(!out.exists());
}
