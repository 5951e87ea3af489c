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

/// The path of tier1 binary `name`: the one this test build made, or the same name under
/// `$IT_BIN_DIR` when set (to run the tests against other builds, e.g. to see a new test fail on
/// the code before its fix).
pub fn bin(name: &str) -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("IT_BIN_DIR") {
        return std::path::Path::new(&dir).join(name);
    }
    let built = match name {
        "tier1-attest" => env!("CARGO_BIN_EXE_tier1-attest"),
        "tier1-compare" => env!("CARGO_BIN_EXE_tier1-compare"),
        "tier1-dashboard" => env!("CARGO_BIN_EXE_tier1-dashboard"),
        "tier1-evidence" => env!("CARGO_BIN_EXE_tier1-evidence"),
        "tier1-nightly" => env!("CARGO_BIN_EXE_tier1-nightly"),
        "tier1-preflight" => env!("CARGO_BIN_EXE_tier1-preflight"),
        "tier1-promote" => env!("CARGO_BIN_EXE_tier1-promote"),
        "tier1-publish" => env!("CARGO_BIN_EXE_tier1-publish"),
        "tier1-restore" => env!("CARGO_BIN_EXE_tier1-restore"),
        "tier1-run" => env!("CARGO_BIN_EXE_tier1-run"),
        "tier1-shard" => env!("CARGO_BIN_EXE_tier1-shard"),
        other => panic!("no tier1 binary named {other}"),
    };
    built.into()
}
