//! The dashboard in a real browser: render the fixture history with the real binary, open it in
//! headless Chromium, check the DOM and the console, and save a screenshot. Skips visibly
//! (`support::skip`) when Chromium is absent, unless `TIER1_CHROMIUM_REQUIRED=1`.
//! `TIER1_DASHBOARD_HISTORY` / `TIER1_DASHBOARD_EVIDENCE` point it at another history root.

use crate::support::exit_code::{Exit, exit_code};
use crate::support::nightly_repo;
use crate::support::skip;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_tier1-dashboard");

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TIER1_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Run a command, killing it if it hangs (a guard, not a performance check).
fn run_guarded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("chromium output")
}

fn browser(bin: &Path, profile: &Path, extra: &[String], url: &str) -> Output {
    let mut cmd = crate::support::command::scrubbed(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url);
    run_guarded(&mut cmd, Duration::from_secs(120))
}

fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("Uncaught")
                || l.contains("ERROR:CONSOLE")
                || l.contains("Refused to")
                || l.contains("net::ERR_")
        })
        .collect()
}

fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    let missing = found
        .is_none()
        .then(|| "chromium not found on PATH".to_string());
    if skip::unless_missing(test, skip::CHROMIUM, missing) {
        found
    } else {
        None
    }
}

#[test]
fn dashboard_opens_in_headless_chromium() {
    let Some(bin) = chromium_or_skip("dashboard_opens_in_headless_chromium") else {
        return;
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dashboard");
    let history = std::env::var_os("TIER1_DASHBOARD_HISTORY")
        .map(PathBuf::from)
        .unwrap_or_else(|| fixtures.join("history"));
    let evidence = std::env::var_os("TIER1_DASHBOARD_EVIDENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| fixtures.join("evidence"));
    render_and_check(
        &bin,
        &history,
        &evidence,
        Some("2026-08-05T00:00:00Z"),
        "dashboard",
    );
}

/// A history made by the real main job: a bootstrap anchor, an accepted run and a regression.
#[test]
fn a_history_made_by_tier1_nightly_opens_in_headless_chromium() {
    let Some(bin) = chromium_or_skip("a_history_made_by_tier1_nightly_opens_in_headless_chromium")
    else {
        return;
    };
    let r = nightly_repo::repo();
    for (speedup, code) in [(2.0, Exit::Ok), (2.0, Exit::Ok), (1.5, Exit::Gate)] {
        let o = nightly_repo::nightly(&r, speedup, &[]);
        assert_eq!(o.code, exit_code(code), "{}\n{}", o.json, o.stderr);
    }
    let history = r.root.join(".tier1/history");
    render_and_check(
        &bin,
        &history,
        &r.root.join(".tier1/no-evidence"),
        None,
        "dashboard-nightly",
    );
}

/// Render `history` with the real binary into the test's output directory `name`, open it in
/// headless Chromium, check the DOM and the console, and save a screenshot.
fn render_and_check(bin: &Path, history: &Path, evidence: &Path, now: Option<&str>, name: &str) {
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).expect("test out dir");
    let site = out_dir.join("site");
    let mut cmd = crate::support::command::scrubbed(BIN);
    cmd.arg("--history-root")
        .arg(history)
        .arg("--output")
        .arg(&site)
        .arg("--evidence-root")
        .arg(evidence);
    if let Some(now) = now {
        cmd.arg("--now").arg(now);
    }
    let o = cmd
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("tier1-dashboard");
    assert_eq!(
        o.status.code(),
        Some(exit_code(Exit::Ok)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let url = format!("file://{}", site.join("index.html").display());

    let profile = tempfile::tempdir().expect("profile dir");
    let dom = browser(bin, profile.path(), &["--dump-dom".into()], &url);
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(dom.status.success(), "chromium failed: {log}");
    assert_eq!(console_errors(&log), Vec::<&str>::new(), "console errors");
    for needle in [
        "id=\"verdict\"",
        "id=\"latest-evidence\"",
        "id=\"latest-accepted\"",
        "id=\"targets\"",
        "<svg class=\"chart\"",
        "id=\"runs\"",
        // The trend axis: ticks with the date and the time of day.
        "class=\"axis x-tick\"",
        " UTC</text>",
        // Absolute times beside speedups, and the detectable change.
        "optimized time over time",
        "the smallest slowdown the comparison detects",
    ] {
        assert!(dom_text.contains(needle), "DOM lacks {needle:?}");
    }
    assert_one_status_per_target(&dom_text);
    assert!(!dom_text.contains("<script"), "no script in the DOM");

    let profile = tempfile::tempdir().expect("profile dir");
    let shot = out_dir.join("dashboard.png");
    let o = browser(
        bin,
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".into(),
        ],
        &url,
    );
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium screenshot failed: {log}");
    assert_eq!(console_errors(&log), Vec::<&str>::new(), "console errors");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "screenshot is a PNG");
    // IHDR: width and height (big-endian) at bytes 16..24; the window asked for.
    let dim = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    assert_eq!((dim(16), dim(20)), (1280, 2000), "screenshot size");
    assert!(
        png.len() > 20_000,
        "a rendered page, not a blank one: {} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}

/// Each row of the rendered targets table carries exactly one status, and none says
/// "succeeded" beside a "regressed".
fn assert_one_status_per_target(dom: &str) {
    let start = dom.find("id=\"targets\"").expect("targets table");
    let table = &dom[start..];
    let table = &table[..table.find("</table>").expect("table end")];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert!(!rows.is_empty(), "target rows: {table}");
    for row in rows {
        assert_eq!(
            row.matches("class=\"status ").count(),
            1,
            "one status: {row}"
        );
        assert!(
            !(row.contains(">succeeded<") && row.contains("regressed")),
            "succeeded beside regressed: {row}"
        );
    }
}
