//! A test that cannot run here says so, the one way every such test goes through: a `SKIPPED:` line
//! written straight to stderr (libtest captures `eprintln!` of a passing test, not this), numbered
//! within the run, and the same line in `target/tmp/skipped-tests.txt`; or, where CI installs the
//! missing tool and sets its `TIER1_*_REQUIRED=1`, a failure instead of a skip.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// A tool a test needs, the variable that makes its absence a failure, and how to provide it.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Set to `1` (CI does, where it installs the tool): missing is a failure, not a skip.
    pub required_env: &'static str,
    /// How to provide the tool.
    pub hint: &'static str,
}

/// Headless Chromium (`.ci/run` sets the variable after `.ci/chromium.sh`).
pub const CHROMIUM: Tool = Tool {
    required_env: "TIER1_CHROMIUM_REQUIRED",
    hint: "`bash .ci/chromium.sh` installs it, or TIER1_CHROMIUM names it",
};
/// node and the npm packages of tests/workflows (`.ci/run` sets the variable after
/// `.ci/workflow-tests.sh`).
pub const WORKFLOW_TESTS: Tool = Tool {
    required_env: "TIER1_WORKFLOW_TESTS_REQUIRED",
    hint: "`bash .ci/workflow-tests.sh` installs them",
};
/// NVRTC, libnvrtc.so.12 (`source .ci/nvrtc.sh` provides it and sets the variable).
pub const NVRTC: Tool = Tool {
    required_env: "TIER1_NVRTC_REQUIRED",
    hint: "`source .ci/nvrtc.sh` provides it",
};
/// The benchmarking tools of the importer tests (`source .ci/importers.sh` installs them and sets
/// the variable).
pub const IMPORTERS: Tool = Tool {
    required_env: "TIER1_IMPORTERS_REQUIRED",
    hint: "`source .ci/importers.sh` installs it",
};

/// The file listing this run's skips (rewritten by the first skip of each test process).
pub fn log_path() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt")
}

/// Skips so far in this process; `None` until the first one has rewritten the log.
static COUNT: Mutex<Option<usize>> = Mutex::new(None);

/// Whether `test` may run: `missing` is `None`. Otherwise it panics when `tool.required_env` is
/// `1`, else records the skip (see [`skipped`]) and returns false.
pub fn unless_missing(test: &str, tool: Tool, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    if std::env::var(tool.required_env).as_deref() == Ok("1") {
        panic!("{test}: {why}, and {}=1 ({})", tool.required_env, tool.hint);
    }
    skipped(
        test,
        &format!(
            "{why} ({}; set {}=1 to make this a failure)",
            tool.hint, tool.required_env
        ),
    );
    false
}

/// Records that `test` (or a named part of it) did not run here and why: a numbered `SKIPPED:`
/// line on stderr, uncaptured, and in [`log_path`].
pub fn skipped(test: &str, why: &str) {
    let mut count = COUNT.lock().unwrap_or_else(|e| e.into_inner());
    let first = count.is_none();
    let n = count.unwrap_or(0) + 1;
    *count = Some(n);
    let line = format!("SKIPPED: {test}: {why}");
    let _ = writeln!(
        std::io::stderr(),
        "{line} [skip {n} of this run; all in {}]",
        log_path().display()
    );
    let log = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(!first)
        .truncate(first)
        .open(log_path());
    if let Ok(mut f) = log {
        let _ = writeln!(f, "{line}");
    }
}
