//! The human ending of a night (issue 37): `tier1-nightly` ends on stderr with the run's table
//! (target, verdict, change, detectable change, decided by) and one line that says what the exit
//! code means, while the JSON stays on stdout for every consumer that reads a pipe; a normal night
//! prints about 30 lines on stderr (per-round lines are at debug level). `tier1-nightly
//! --emit-target` measures a built-in target like `tier1-run --emit-target` (side by side invokes
//! the running binary that way).

use crate::nightly_side_by_side::{bootstrap, checkout};
use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo::{git, nightly, repo};
use serde_json::Value;

/// The lines of stderr after the last log line: the ending.
fn ending(stderr: &str) -> Vec<&str> {
    let lines: Vec<&str> = stderr.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.starts_with("target ") || l.starts_with("no anchor yet"))
        .unwrap_or_else(|| panic!("no ending on stderr:\n{stderr}"));
    lines[start..].to_vec()
}

#[test]
fn a_night_ends_with_its_table_and_what_the_exit_code_means() {
    let r = repo();
    let first = nightly(&r, 2.0, &[]);
    assert_eq!(first.code, exit_code(Exit::Ok), "{}", first.stderr);
    assert!(first.json["run_id"].is_string(), "the JSON stays on stdout");
    let e = ending(&first.stderr);
    assert!(e[0].starts_with("no anchor yet"), "{e:?}");
    assert!(
        e.last().unwrap().starts_with("exit 0: the gate passed"),
        "{e:?}"
    );

    let same = nightly(&r, 2.0, &[]);
    assert_eq!(same.code, exit_code(Exit::Ok), "{}", same.stderr);
    let e = ending(&same.stderr);
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        words(e[0]),
        "target verdict change detectable decided by",
        "{e:?}"
    );
    for key in ["fixed_a", "fixed_b"] {
        let row = e
            .iter()
            .find(|l| l.starts_with(key))
            .expect("a row per target");
        assert!(
            row.contains("unchanged") && row.contains("history"),
            "{row}"
        );
    }
    assert!(
        e.last().unwrap().starts_with("exit 0: the gate passed"),
        "{e:?}"
    );
    assert!(
        same.stderr.lines().count() <= 40,
        "a normal night prints at most about 40 lines on stderr, found {}:\n{}",
        same.stderr.lines().count(),
        same.stderr
    );

    let slower = nightly(&r, 1.5, &[]);
    assert_eq!(slower.code, exit_code(Exit::Gate), "{}", slower.stderr);
    let e = ending(&slower.stderr);
    let regressed: Vec<&&str> = e.iter().filter(|l| l.contains("regressed")).collect();
    assert_eq!(regressed.len(), 2, "{e:?}");
    // The optimized time moved most (10 ms / 1.5 against 10 ms / 2: +33.3 %).
    assert!(regressed[0].contains("time +33.3 %"), "{e:?}");
    assert!(
        e.last().unwrap().starts_with("exit 1: the gate failed: "),
        "{e:?}"
    );
    assert_eq!(slower.json["verdict"]["passed"], Value::Bool(false));
}

/// Issue 37: a newcomer's second night (seven targets, most suspected, each compared side by
/// side) printed 64 lines on stderr: two per measured target, three per recheck, two or three per
/// comparison. Per-target steps are at debug level: seven suspected targets compared side by
/// side print at most about 40 lines, one `time:` line per target and one row of the table each
/// among them.
#[test]
fn a_night_with_seven_suspects_compared_side_by_side_prints_at_most_40_lines() {
    let r = checkout("");
    let p = r.root.join("suite.yaml");
    let suite = std::fs::read_to_string(&p).unwrap();
    let (head, a) = suite.split_at(suite.find("  - key: fixed_a").unwrap());
    let a = &a[..a.find("  - key: fixed_b").unwrap()];
    let mut more = String::from(head);
    for k in ["a", "b", "c", "d", "e", "f", "g"] {
        more.push_str(
            &a.replace("fixed_a", &format!("fixed_{k}"))
                .replace("gemm", if k == "a" { "gemm" } else { "decode" }),
        );
    }
    std::fs::write(&p, more).unwrap();
    git(&r.root, &["commit", "-qam", "seven targets"]);
    bootstrap(&r);
    // Unchanged code whose history comparison is suspect (a 25 % speedup drop through the
    // environment): every target suspected, each cleared side by side.
    let o = nightly(&r, 1.5, &[]);
    assert_eq!(o.code, exit_code(Exit::Ok), "{}\n{}", o.json, o.stderr);
    let sbs = o.json["run"]["timings"].as_array().unwrap();
    assert_eq!(sbs.len(), 7, "{}", o.json);
    assert!(
        sbs.iter().all(|t| t["side_by_side_s"].is_number()),
        "{sbs:?}"
    );
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert!(
        lines.len() <= 40,
        "a normal night prints at most about 40 lines on stderr, found {}:\n{}",
        lines.len(),
        o.stderr
    );
    for k in ["a", "b", "c", "d", "e", "f", "g"] {
        let key = format!("fixed_{k}");
        let time = format!("target={key}");
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains(" time: ") && l.contains(&time))
                .count(),
            1,
            "one time line for {key}:\n{}",
            o.stderr
        );
        assert!(
            ending(&o.stderr).iter().any(|l| l.starts_with(&key)),
            "a row for {key}"
        );
    }
}

#[test]
fn tier1_nightly_emits_a_built_in_target_like_tier1_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = command::scrubbed(command::bin("tier1-nightly"))
        .current_dir(dir.path())
        .args(["--emit-target", "persistent_decode", "--profile", "smoke"])
        .env("TIER1_ITERATIONS", "2")
        .env("TIER1_WARMUP", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "tier1.command_result.v1");
    // Side by side invokes it many times a night: it logs at warn unless TIER1_LOG says more.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("INFO"), "{stderr}");
    assert_eq!(
        doc["variants"][0]["samples_ms"].as_array().unwrap().len(),
        2
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "writes nothing"
    );
    let bad = command::scrubbed(command::bin("tier1-nightly"))
        .current_dir(dir.path())
        .args(["--emit-target", "no_such", "--profile", "smoke"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(exit_code(Exit::Invalid)));
}
