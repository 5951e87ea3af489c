//! `tier1-dashboard` end to end (without a browser): the fixture history renders with its verdict,
//! cards, table, charts and changes; text is escaped; no absolute or runner path leaks; refusals
//! leave the destination untouched; 1000 runs paginate and thin.

use crate::support::dashboard_history;
use crate::support::exit_code::{Exit, exit_code};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_tier1-dashboard");
const NOW: &str = "2026-08-05T00:00:00Z";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dashboard")
        .join(name)
}

fn run(args: &[&std::ffi::OsStr], summary: Option<&Path>) -> Output {
    let mut cmd = crate::support::command::scrubbed(BIN);
    cmd.args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("TIER1_LOG", "warn");
    if let Some(s) = summary {
        cmd.env("GITHUB_STEP_SUMMARY", s);
    }
    cmd.output().expect("run tier1-dashboard")
}

fn render(history: &Path, out: &Path, evidence: Option<&Path>, summary: Option<&Path>) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "--history-root".as_ref(),
        history.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
        "--now".as_ref(),
        NOW.as_ref(),
    ];
    if let Some(e) = evidence {
        args.extend(["--evidence-root".as_ref(), e.as_os_str()]);
    }
    run(&args, summary)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn fixture_renders_verdict_cards_table_charts_and_changes() {
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("site");
    let step = t.path().join("step_summary.md");
    fs::write(&step, "# earlier step\n").expect("seed step summary");
    let o = render(
        &fixture("history"),
        &out,
        Some(&fixture("evidence")),
        Some(&step),
    );
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout JSON");
    // The latest run's only finding is a regression cleared by its recheck: the gate passes it,
    // so the dashboard does too, and says why the run can never become an anchor.
    assert_eq!(json["ready"], true, "{json}");
    assert_eq!(json["total_runs"], 4);
    assert_eq!(json["accepted_runs"], 3);
    assert!(
        json["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap_or("")
            .contains("cleared only by a recheck")),
        "{json}"
    );

    let html = fs::read_to_string(out.join("index.html")).expect("index.html");
    for needle in [
        "Release ready",
        "id=\"latest-evidence\"",
        "id=\"latest-accepted\"",
        "id=\"anchor\"",
        "id=\"targets\"",
        "<svg class=\"chart\"",
        "class=\"clipped\"",
        "id=\"suppressed\"",
        "id=\"declines\"",
        "id=\"rechecks\"",
        "octo-lead",
        "perf-reviewer",
        "<a href=\"https://github.com/tier1-bench/tier1/actions/runs/123\">",
        "NVIDIA H100 80GB HBM3",
        "driver 570.86.15",
        "renew it within 26 days",
        // The 14450x rejected outlier does not become the best speedup seen.
        "id=\"best-seen\">14.4×</strong>",
        // Present under --evidence-root: shown as a local relative path.
        "<code class=\"local\">20260604_031500_tier1_nightly_dddddddd/results/benchmark_test_results.json</code>",
        // Not present: shown as an artifact reference.
        "artifact://tier1-evidence-dddddddd-1/20260604_031500_tier1_nightly_dddddddd/manifest.json",
        "not a portable path; withheld",
    ] {
        assert!(html.contains(needle), "index.html lacks {needle:?}");
    }
    // The anchor note carries `<script>`: it is escaped, and the page has no script at all.
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(
        !html.to_ascii_lowercase().contains("<script"),
        "no script element"
    );
    assert!(!html.contains("http://"), "no plain-http fetch or link");

    let md = fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(md.contains("Release ready"));
    assert!(md.contains("&lt;script&gt;"));
    assert!(!md.contains("<script"));
    let appended = fs::read_to_string(&step).expect("step summary");
    assert_eq!(appended, format!("# earlier step\n{md}"));

    for (name, text) in [("index.html", &html), ("summary.md", &md)] {
        for leak in [
            t.path().to_string_lossy().as_ref(),
            env!("CARGO_MANIFEST_DIR"),
            "/home/",
            "/runner/",
            "_work",
            "/tmp/",
        ] {
            assert!(!text.contains(leak), "{name} leaks the path {leak:?}");
        }
    }
}

#[test]
fn control_characters_in_stored_text_are_rendered_visibly_never_raw() {
    let t = tempfile::tempdir().expect("tmp");
    let hist = t.path().join("history");
    tier1::fsx::copy_tree(&fixture("history"), &hist).expect("copy fixture");
    let index = hist.join("index.json");
    let text = fs::read_to_string(&index).expect("index");
    let hostile = "Reviewed\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m \\u202egpj.exe";
    let edited = text.replace(
        "Reviewed the immutable evidence package <script>alert('x')</script>",
        hostile,
    );
    assert_ne!(edited, text, "the fixture note was found");
    fs::write(&index, edited).expect("write index");
    let out = t.path().join("site");
    let step = t.path().join("step_summary.md");
    let o = render(&hist, &out, None, Some(&step));
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let html = fs::read_to_string(out.join("index.html")).expect("index.html");
    let md = fs::read_to_string(out.join("summary.md")).expect("summary.md");
    let appended = fs::read_to_string(&step).expect("step summary");
    for (name, text) in [
        ("index.html", &html),
        ("summary.md", &md),
        ("step", &appended),
    ] {
        for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(c), "{name} holds a raw {c:?}");
        }
    }
    assert!(
        html.contains("Reviewed\\u{1b}]0;pwned\\u{7}"),
        "shown visibly"
    );
    assert!(md.contains("Reviewed\\u{1b}"), "shown visibly");
}

#[test]
fn non_empty_output_is_refused_and_left_byte_identical() {
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("site");
    fs::create_dir_all(&out).expect("mkdir");
    fs::write(out.join("keep.txt"), b"precious").expect("seed");
    let o = render(&fixture("history"), &out, None, None);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Conflict)),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("is not empty"), "{}", stderr(&o));
    assert_eq!(fs::read(out.join("keep.txt")).expect("kept"), b"precious");
    assert_eq!(fs::read_dir(&out).expect("list").count(), 1);
    assert_eq!(
        fs::read_dir(t.path()).expect("list").count(),
        1,
        "no stray stage"
    );
}

#[test]
fn invalid_history_is_refused_with_the_validation_error() {
    let t = tempfile::tempdir().expect("tmp");
    let history = t.path().join("history");
    let out = t.path().join("site");
    tier1::fsx::copy_tree(&fixture("history"), &history).expect("copy fixture");
    let index = history.join("index.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&fs::read(&index).expect("index")).expect("json");
    v["runs"][1]["run_accepted"] = serde_json::Value::Bool(false);
    v["runs"][1]["baseline_eligible"] = serde_json::Value::Bool(true);
    fs::write(&index, serde_json::to_vec_pretty(&v).expect("ser")).expect("write");
    let expected = tier1::history_check::validate_history_root(&history)
        .expect_err("fixture made invalid")
        .to_string();
    let before = fs::read(&index).expect("index");
    let o = render(&history, &out, None, None);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Invalid)),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&expected),
        "{} lacks {expected}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing written");
    assert_eq!(fs::read(&index).expect("index"), before, "input untouched");
}

#[test]
fn bad_now_is_refused_before_writing() {
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("site");
    let history = fixture("history");
    let args: Vec<&std::ffi::OsStr> = vec![
        "--history-root".as_ref(),
        history.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
        "--now".as_ref(),
        "yesterday".as_ref(),
    ];
    let o = run(&args, None);
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Invalid)),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("expected an RFC 3339 time"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn empty_history_says_so_plainly() {
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("site");
    let o = render(&t.path().join("no-history"), &out, None, None);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let html = fs::read_to_string(out.join("index.html")).expect("html");
    assert!(html.contains("No history yet"));
    assert!(html.contains("the history holds no run yet"));
    let md = fs::read_to_string(out.join("summary.md")).expect("md");
    assert!(md.contains("No history yet"));
}

#[test]
fn a_thousand_runs_paginate_and_thin() {
    let t = tempfile::tempdir().expect("tmp");
    let history = t.path().join("history");
    dashboard_history::write_history(&history, 1000);
    let out = t.path().join("site");
    let o = render(&history, &out, None, None);
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let html = fs::read_to_string(out.join("index.html")).expect("html");
    assert!(
        html.contains("Showing the 50 most recent of 1000 runs; 950 older runs are not listed.")
    );
    let suite_chart = html
        .split("<svg class=\"chart\"")
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .expect("suite chart");
    let line_points = suite_chart
        .split("points=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("polyline")
        .split(' ')
        .count();
    assert!(line_points <= 220, "{line_points} line points drawn");
    assert!(line_points >= 100, "{line_points} line points drawn");
    let rejected = suite_chart.matches("class=\"rejected\"").count()
        + suite_chart.matches("class=\"clipped\"").count();
    assert!(
        (1..=220).contains(&rejected),
        "{rejected} rejected points drawn"
    );
    assert!(
        suite_chart.matches("class=\"anchor\"").count() == 10,
        "every anchor kept"
    );
    let fa = html
        .split("<title>flashattention4_alibi speedup over time</title>")
        .nth(1)
        .expect("flashattention chart");
    let fa = fa.split("</svg>").next().unwrap_or_default();
    assert_eq!(
        fa.matches("class=\"clipped\"").count(),
        1,
        "the 1000x rejected outlier is drawn clipped"
    );
}

#[test]
fn thresholds_come_from_the_suite_config_not_the_embedded_suite() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("tier1.yaml");
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/benchmark_suites/tier1.yaml"),
    )
    .unwrap();
    assert!(text.contains("  speedup_regression_pct: 5.0"));
    fs::write(
        &suite,
        text.replace(
            "  speedup_regression_pct: 5.0",
            "  speedup_regression_pct: 7.5",
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let history = fixture("history");
    let o = run(
        &[
            "--history-root".as_ref(),
            history.as_os_str(),
            "--output".as_ref(),
            out.as_os_str(),
            "--now".as_ref(),
            NOW.as_ref(),
            "--suite-config".as_ref(),
            suite.as_os_str(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(exit_code(Exit::Ok)), "{}", stderr(&o));
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("speedup −7.5% or latency +5%"),
        "the suite's threshold"
    );
    assert!(
        !html.contains("speedup −5% or latency"),
        "not the embedded one"
    );
}

#[test]
fn a_store_without_history_renders_no_history_and_a_missing_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    tier1::store::local::LocalStore::create(&store, "local/store").unwrap();
    let spec = format!("local:{}", store.display());
    let out = tmp.path().join("dash");
    let o = run(
        &[
            "--store".as_ref(),
            spec.as_ref(),
            "--output".as_ref(),
            out.as_os_str(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("No history yet: this history root holds no run."),
        "{md}"
    );

    // A store that does not exist: refused by name (exit 5), nothing written.
    let missing = format!("local:{}", tmp.path().join("nowhere").display());
    let out2 = tmp.path().join("dash2");
    let o = run(
        &[
            "--store".as_ref(),
            missing.as_ref(),
            "--output".as_ref(),
            out2.as_os_str(),
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Unavailable)),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("nowhere"), "{}", stderr(&o));
    assert!(!out2.exists());
    // --history-root and --store together are a usage error.
    let o = run(
        &[
            "--store".as_ref(),
            spec.as_ref(),
            "--history-root".as_ref(),
            tmp.path().as_os_str(),
            "--output".as_ref(),
            out2.as_os_str(),
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Usage)),
        "{}",
        stderr(&o)
    );
    assert!(!out2.exists());
}

/// Issue 41: `--store` is the flag the other store-reading binaries share, with their variable
/// `TIER1_STORE`; a store given that way is read like `--store`, and a missing one is refused by
/// name with nothing written.
#[test]
fn the_store_is_the_shared_store_flag_with_its_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    tier1::store::local::LocalStore::create(&store, "local/store").unwrap();
    let out = tmp.path().join("dash");
    let o = crate::support::command::scrubbed(BIN)
        .args(["--output".as_ref(), out.as_os_str()])
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("TIER1_LOG", "warn")
        .env("TIER1_STORE", format!("local:{}", store.display()))
        .output()
        .expect("run tier1-dashboard");
    assert!(o.status.success(), "{}", stderr(&o));
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("No history yet: this history root holds no run."),
        "{md}"
    );
    let out2 = tmp.path().join("dash2");
    let o = crate::support::command::scrubbed(BIN)
        .args(["--output".as_ref(), out2.as_os_str()])
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("TIER1_LOG", "warn")
        .env(
            "TIER1_STORE",
            format!("local:{}", tmp.path().join("nowhere").display()),
        )
        .output()
        .expect("run tier1-dashboard");
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Unavailable)),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("nowhere"), "{}", stderr(&o));
    assert!(!out2.exists());
}
