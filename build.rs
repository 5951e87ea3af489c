//! Records which commit the binaries are built from: `TIER1_BUILD_COMMIT` (the checkout's `HEAD`,
//! empty outside a git checkout) and `TIER1_BUILD_CLEAN` (`1` when no file the build reads
//! differs from that commit: `crates/`, `bins/`, `kernels/`, `configs/`, the manifests and this
//! script, untracked files included). A night proves with them that the running `tier1-nightly`
//! or `tier1-run` is the checkout's own build, so the current side of a built-in target's
//! side-by-side comparison runs it instead of building the commit again
//! (`tier1::sidebyside::running`). The script runs again whenever any of those files or the
//! checkout's `HEAD` or refs change (staging changes nothing the build reads), so the record is never older than the code built.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the binaries are built from.
const INPUTS: [&str; 7] = [
    "crates",
    "bins",
    "kernels",
    "configs",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
];

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn rerun_if_exists(p: &Path) {
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn main() {
    for input in INPUTS {
        rerun_if_exists(Path::new(input));
    }
    let commit = git(&["rev-parse", "--verify", "HEAD"]).unwrap_or_default();
    if let (Some(dir), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) {
        let (dir, common) = (PathBuf::from(dir), PathBuf::from(common));
        rerun_if_exists(&dir.join("HEAD"));
        rerun_if_exists(&common.join("packed-refs"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            rerun_if_exists(&common.join(branch));
        }
    }
    let mut status = vec!["status", "--porcelain=v1", "--untracked-files=all", "--"];
    status.extend(INPUTS);
    let clean = !commit.is_empty() && git(&status).is_some_and(|s| s.is_empty());
    println!("cargo:rustc-env=TIER1_BUILD_COMMIT={commit}");
    println!(
        "cargo:rustc-env=TIER1_BUILD_CLEAN={}",
        if clean { "1" } else { "0" }
    );
}
