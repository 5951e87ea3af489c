//! Whole nights of the built-in suite with a slowdown committed
//! (`TIER1_INTEGRITY_REAL_ONLY=builtin_nights`, N = `TIER1_INTEGRITY_REAL_RUNS` nights per change
//! and mode): a scratch clone of this repository at its `HEAD` commit, its `tier1-nightly` and
//! `tier1-run` built in release (cargo's target directory beside the clone, so the checkout stays
//! clean), and nights of that `tier1-nightly` on the `cpu` profile against the clone's own store.
//! A bootstrap and `TIER1_NIGHTS_HISTORY` (default 2) unchanged nights make the history; then, for
//! each change (`TIER1_NIGHTS_CHANGES`, default `0,5,10,20` percent), a commit that slows the
//! optimized variant of two built-in targets (gradient_fusion and flashattention4_alibi) by that
//! much, a rebuild, and N nights with side by side alternated with N with
//! `TIER1_SIDE_BY_SIDE=off`. Side by side builds `tier1-run` at the anchor's commit through its
//! build cache (the first confirmation pays that build) and measures it beside this commit's.
//!
//! The slowdown is code in the commit: the target's `optimized` function becomes
//! `optimized_unslowed`, and a new `optimized` runs it and then spins for `pct` % of the process
//! CPU time it took (the `cpu` profile's clock), so every sample is slower by that share.
//! Uncommitted changes of the working tree are not in the clone.

use crate::nights::{Night, run_cells, run_night_with, table};
use crate::real::git;
use std::path::{Path, PathBuf};

/// The targets slowed, as the suite names them.
const KEYS: [&str; 2] = [
    "ch04:gradient_fusion",
    "labs/flashattention4:flashattention4_alibi",
];

/// Their source files, in the order of [`KEYS`].
const SOURCES: [&str; 2] = [
    "crates/tier1/src/bench/targets/gradient_fusion.rs",
    "crates/tier1/src/bench/targets/flashattention4_alibi.rs",
];

/// The line the slowed function starts with.
const SIGNATURE: &str = "pub(crate) fn optimized(";

struct Clone {
    _dir: tempfile::TempDir,
    root: PathBuf,
    target: PathBuf,
    originals: Vec<String>,
}

fn clone() -> Clone {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("scratch directory");
    let root = dir.path().join("tier1");
    let target = dir.path().join("target");
    git(
        dir.path(),
        &["clone", "-q", &repo.display().to_string(), "tier1"],
    );
    let originals = SOURCES
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).expect("read a target's source"))
        .collect();
    let c = Clone {
        _dir: dir,
        root,
        target,
        originals,
    };
    build(&c);
    c
}

/// `cargo build --release --locked` of the two binaries a night needs, in the clone.
fn build(c: &Clone) {
    let t = std::time::Instant::now();
    let ok = std::process::Command::new("cargo")
        .args(["build", "--release", "--locked", "--bin", "tier1-nightly"])
        .args(["--bin", "tier1-run"])
        .current_dir(&c.root)
        .env("CARGO_TARGET_DIR", &c.target)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "cargo build in {}", c.root.display());
    println!("build: {:.0} s", t.elapsed().as_secs_f64());
}

/// The source of a target slowed by `pct` percent (0: only a trailing comment changes).
fn slowed(original: &str, pct: u32, revision: usize) -> String {
    let mut text = original.to_string();
    if pct > 0 {
        let line = original
            .lines()
            .find(|l| l.starts_with(SIGNATURE))
            .expect("the optimized function");
        let params = line[SIGNATURE.len()..]
            .split(')')
            .next()
            .expect("its parameters");
        let names: Vec<&str> = params
            .split(',')
            .filter_map(|p| p.split(':').next())
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        text = text.replacen(SIGNATURE, "fn optimized_unslowed(", 1);
        text.push_str(&format!(
            "\n/// bench: the optimized kernel, then process CPU time spun for {pct} % of what it took.\n\
             pub(crate) fn optimized({params}) {{\n\
             \x20   let clock = crate::suite::Clock::Cpu;\n\
             \x20   let t = clock.start();\n\
             \x20   optimized_unslowed({});\n\
             \x20   let extra = t.elapsed_ms().unwrap_or(0.0) * {};\n\
             \x20   let s = clock.start();\n\
             \x20   while s.elapsed_ms().is_some_and(|ms| ms < extra) {{\n\
             \x20       std::hint::spin_loop();\n\
             \x20   }}\n\
             }}\n",
            names.join(", "),
            f64::from(pct) / 100.0
        ));
    }
    format!("{text}// bench: revision {revision}\n")
}

/// Commit the change under test and rebuild.
fn commit_change(c: &Clone, pct: u32, revision: usize) {
    for (file, original) in SOURCES.iter().zip(&c.originals) {
        std::fs::write(c.root.join(file), slowed(original, pct, revision))
            .expect("write a target's source");
    }
    git(
        &c.root,
        &["commit", "-q", "-am", &format!("slow down by {pct} %")],
    );
    build(c);
}

/// One night of the clone's `tier1-nightly` (the side-by-side build cache uses its own target
/// directory, so this process's `CARGO_TARGET_DIR` is not passed on).
fn run_night(c: &Clone, side_by_side: bool) -> Night {
    let mut cmd = std::process::Command::new(c.target.join("release/tier1-nightly"));
    cmd.args(["--history-out", ".tier1/history"]);
    for var in [
        "CARGO_TARGET_DIR",
        "TIER1_PROFILE",
        "TIER1_SUITE_CONFIG",
        "TIER1_STORE_DIR",
    ] {
        cmd.env_remove(var);
    }
    run_night_with(cmd, &c.root, side_by_side, &KEYS)
}

/// Run the built-in suite's nights.
pub fn main(n: usize) {
    let c = clone();
    let _neighbours = crate::nights::neighbours();
    let cells = run_cells(
        n,
        2,
        |side_by_side| run_night(&c, side_by_side),
        |pct, revision| commit_change(&c, pct, revision),
    );
    table(
        "Whole nights of the built-in suite (cpu profile), gradient_fusion and flashattention4_alibi slowed in the commit",
        &cells,
        &KEYS,
    );
}
