//! One way to start a tier1 binary in a test: a `Command` whose environment has none of the
//! variables the binaries read as defaults (`GITHUB_*`, `RUNNER_*`, `ACTIONS_*`, `TIER1_*`), so
//! neither the machine nor a GitHub Actions job running the tests changes what a test sees. A test
//! sets what it needs on top.
#![allow(dead_code)]

use std::process::Command;

/// The prefixes of the environment variables removed from every test command.
pub const SCRUBBED_PREFIXES: [&str; 4] = ["GITHUB_", "RUNNER_", "ACTIONS_", "TIER1_"];

/// Where the commands keep their private state (the build cache's keys): under the test build's
/// own temporary directory, never the user's home.
pub const STATE_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/tier1-state");

/// `program` with a scrubbed environment (see the module docs); `TIER1_STATE_DIR` is
/// [`STATE_DIR`].
pub fn scrubbed(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) {
            cmd.env_remove(&k);
        }
    }
    cmd.env("TIER1_STATE_DIR", STATE_DIR);
    cmd
}

/// [`scrubbed`] `program` started by bash after `limits` (`ulimit` commands, such as `ulimit -v
/// 1048576` to cap its address space at 1 GiB: a test bounds a binary's memory this way, never by
/// timing it). Arguments added to the command go to `program`.
pub fn limited(program: impl AsRef<std::ffi::OsStr>, limits: &str) -> Command {
    let mut cmd = scrubbed("bash");
    cmd.arg("-c")
        .arg(format!("{limits} && exec \"$0\" \"$@\""))
        .arg(program);
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
        "tier1-bisect" => env!("CARGO_BIN_EXE_tier1-bisect"),
        "tier1-compare" => env!("CARGO_BIN_EXE_tier1-compare"),
        "tier1-dashboard" => env!("CARGO_BIN_EXE_tier1-dashboard"),
        "tier1-evidence" => env!("CARGO_BIN_EXE_tier1-evidence"),
        "tier1-export" => env!("CARGO_BIN_EXE_tier1-export"),
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
