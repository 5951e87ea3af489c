//! One way to start a tier1 binary in a test: a `Command` whose environment has none of the
//! variables the binaries read as defaults (`GITHUB_*`, `RUNNER_*`, `ACTIONS_*`, `TIER1_*`), so
//! neither the machine nor a GitHub Actions job running the tests changes what a test sees. A test
//! sets what it needs on top.
#![allow(dead_code)]

use std::process::Command;

/// The prefixes of the environment variables removed from every test command.
pub const SCRUBBED_PREFIXES: [&str; 4] = ["GITHUB_", "RUNNER_", "ACTIONS_", "TIER1_"];

/// `program` with a scrubbed environment (see the module docs).
pub fn scrubbed(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) {
            cmd.env_remove(&k);
        }
    }
    cmd
}
