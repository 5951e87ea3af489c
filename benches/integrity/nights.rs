//! Whole nights with and without side by side (`TIER1_INTEGRITY_REAL_ONLY=nights`, N =
//! `TIER1_INTEGRITY_REAL_RUNS` nights per change and mode): the local main job (`tier1::nightly`)
//! in a scratch git checkout that holds the code of a Python and a C command target
//! (tests/fixtures/nights) and its own store. A bootstrap and a few unchanged nights make the
//! history; then, for each change (`TIER1_NIGHTS_CHANGES`, default `0,5,10,20` percent), a commit
//! that slows both targets' optimized variant by that much (0: a commit that changes only a
//! comment, the false-alarm case) and N nights with side by side (`auto`, the default) alternated
//! with N nights with `TIER1_SIDE_BY_SIDE=off`, on the same history. Counted per mode: nights that
//! failed the gate, each target listed as a regression, side by side's verdicts, the night's
//! wall time and what the confirmations cost (measuring and builds). With `TIER1_NIGHTS_HOGS=N`
//! the nights run beside N CPU spinners and bursts (`benches/neighbours.rs`; `TIER1_NIGHTS_BURSTS=0`
//! leaves the bursts out), with `TIER1_NIGHTS_LOAD=L` beside as many spinners as keep the
//! machine's runnable tasks near L (issue 37's crowded machine: 3 x the cores), started before the
//! bootstrap and killed after the last night; every night's line carries the load average before
//! it.

use crate::real::{Said, bootstrap_with, detection, git, night, regressions, said};
use std::path::{Path, PathBuf};
use std::time::Instant;

const KEYS: [&str; 2] = ["nights:py_dot", "nights:c_matmul"];

/// A scratch checkout of the fixture's suite, targets and the protocol helpers, committed, with
/// the C target built into the ignored `build/`.
fn checkout() -> (tempfile::TempDir, PathBuf) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t = tempfile::tempdir().expect("scratch directory");
    let root = t.path().to_path_buf();
    for f in ["suite.yaml", "dot.py", "matmul.c", "build.sh"] {
        std::fs::copy(repo.join("tests/fixtures/nights").join(f), root.join(f)).expect("copy");
    }
    for (dir, f) in [("python", "tier1_bench.py"), ("c", "tier1_bench.h")] {
        std::fs::create_dir_all(root.join("helpers").join(dir)).expect("helpers dir");
        std::fs::copy(
            repo.join("helpers").join(dir).join(f),
            root.join("helpers").join(dir).join(f),
        )
        .expect("copy a helper");
    }
    std::fs::write(root.join(".gitignore"), ".tier1/\nbuild/\n").expect("write .gitignore");
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "suite"]);
    build(&root);
    (t, root)
}

fn build(root: &Path) {
    let ok = std::process::Command::new("sh")
        .arg("build.sh")
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "build.sh in {}", root.display());
}

/// Commit the change under test: both targets' optimized work grows by `pct` percent (0: only a
/// comment changes), counted from the original code.
fn commit_change(root: &Path, pct: u32, revision: usize) {
    let edit = |file: &str, from: &str, to: &str, comment: &str| {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).expect("read a target");
        let original = text
            .lines()
            .find(|l| l.starts_with(from))
            .expect("the slowdown line")
            .to_string();
        let body: String = text
            .replace(&original, to)
            .lines()
            .filter(|l| !l.starts_with(comment))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, format!("{body}{comment} revision {revision}\n"))
            .expect("write a target");
    };
    edit(
        "dot.py",
        "SLOWDOWN = ",
        &format!("SLOWDOWN = {}", f64::from(pct) / 100.0),
        "# bench:",
    );
    edit(
        "matmul.c",
        "#define SLOWDOWN_PCT ",
        &format!("#define SLOWDOWN_PCT {pct}"),
        "// bench:",
    );
    git(
        root,
        &["commit", "-q", "-am", &format!("slow down by {pct} %")],
    );
    build(root);
}

/// One night's record.
pub(crate) struct Night {
    side_by_side: bool,
    load: f64,
    exit: i32,
    wall_s: f64,
    regressed: Vec<String>,
    said: Vec<Said>,
    confirm_s: f64,
}

/// The child's side of [`run_night`]: with `TIER1_NIGHTS_CHILD=<checkout>` set, this process
/// runs one night there and prints its run id; `true` when it did (the bench itself does not run).
pub fn child() -> bool {
    let Ok(root) = std::env::var("TIER1_NIGHTS_CHILD") else {
        return false;
    };
    let (exit, s) = night(Path::new(&root));
    println!("run_id={}", s.map(|s| s.run_id).unwrap_or_default());
    std::process::exit(i32::from(exit.code()));
}

/// One night in a child process of this bench (the off switch, `TIER1_SIDE_BY_SIDE=off`, is set in
/// the child's environment only).
fn run_night(root: &Path, side_by_side: bool) -> Night {
    let mut cmd = std::process::Command::new(std::env::current_exe().expect("the bench binary"));
    cmd.env("TIER1_NIGHTS_CHILD", root);
    run_night_with(cmd, root, side_by_side, &KEYS)
}

/// One night of `cmd` (this bench's child, or a `tier1-nightly` binary) run in the checkout
/// `root` that keeps its published history in `.tier1/history`; the run id is read from a
/// `run_id=` line or from the job's JSON on stdout. What it said of `keys` is recorded.
pub(crate) fn run_night_with(
    mut cmd: std::process::Command,
    root: &Path,
    side_by_side: bool,
    keys: &[&str],
) -> Night {
    cmd.current_dir(root).env_remove("TIER1_SIDE_BY_SIDE");
    if !side_by_side {
        cmd.env("TIER1_SIDE_BY_SIDE", "off");
    }
    let t = Instant::now();
    let load = crate::neighbours::load_avg();
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run a night");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let run_id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("run_id=").map(str::to_string))
        .or_else(|| {
            serde_json::from_str::<serde_json::Value>(&stdout)
                .ok()
                .and_then(|v| v["run_id"].as_str().map(str::to_string))
        })
        .filter(|id| !id.is_empty());
    let exit = out.status.code().unwrap_or(-1);
    let wall_s = t.elapsed().as_secs_f64();
    let reg = run_id
        .as_deref()
        .map(|id| detection(root, id))
        .unwrap_or_default();
    let regressed = regressions(&reg);
    let confirm_s = reg["side_by_side"]["checks"].as_array().map_or(0.0, |cs| {
        cs.iter()
            .map(|c| {
                c["seconds"].as_f64().unwrap_or(0.0) + c["build_seconds"].as_f64().unwrap_or(0.0)
            })
            // A fold from +0.0: `Sum` of no f64 is -0.0, printed as "-0.0 s".
            .fold(0.0, |a, b| a + b)
    });
    let night = Night {
        side_by_side,
        load,
        exit,
        wall_s,
        regressed,
        said: keys.iter().map(|k| said(&reg, k)).collect(),
        confirm_s,
    };
    println!(
        "- night {} (side by side {}, load {load:.1}): exit {}, {:.1} s, regressed {:?}, verdicts {:?}, side by side {:?}, confirmations {:.1} s",
        run_id.unwrap_or_default(),
        if side_by_side { "auto" } else { "off" },
        night.exit,
        night.wall_s,
        night.regressed,
        night
            .said
            .iter()
            .map(|s| s.verdict.as_str())
            .collect::<Vec<_>>(),
        night
            .said
            .iter()
            .map(|s| s.side_by_side.as_deref().unwrap_or("-"))
            .collect::<Vec<_>>(),
        night.confirm_s,
    );
    night
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    tier1::stats::median(xs).unwrap_or(f64::NAN)
}

/// One table row per mode for the nights of one change; `keys` as the nights recorded them.
fn report(pct: u32, nights: &[Night], keys: &[&str]) {
    for mode in [true, false] {
        let ns: Vec<&Night> = nights.iter().filter(|n| n.side_by_side == mode).collect();
        let failed = ns.iter().filter(|n| n.exit != 0).count();
        let caught: Vec<String> = keys
            .iter()
            .map(|k| {
                ns.iter()
                    .filter(|n| n.regressed.iter().any(|r| r == k))
                    .count()
                    .to_string()
            })
            .collect();
        let sbs = |v: &str| {
            ns.iter()
                .flat_map(|n| &n.said)
                .filter(|s| s.side_by_side.as_deref() == Some(v))
                .count()
        };
        let confirmations: Vec<f64> = ns
            .iter()
            .filter(|n| n.confirm_s > 0.0)
            .map(|n| n.confirm_s)
            .collect();
        let mut walls: Vec<f64> = ns.iter().map(|n| n.wall_s).collect();
        let mut confirm = confirmations.clone();
        println!(
            "| {pct} % | {} | {} | {failed} | {} | {}/{}/{} | {:.1} s | {} |",
            if mode { "auto" } else { "off" },
            ns.len(),
            caught.join(" | "),
            sbs("worse"),
            sbs("same"),
            sbs("unknown"),
            median(&mut walls),
            if confirm.is_empty() {
                "-".to_string()
            } else {
                format!(
                    "{} nights, median {:.1} s, max {:.1} s",
                    confirm.len(),
                    median(&mut confirm),
                    confirmations.iter().cloned().fold(0.0, f64::max)
                )
            },
        );
    }
}

/// The nights of one bench: a bootstrap (tried up to three times) and `history` unchanged nights
/// with side by side, then per change a commit (`commit(pct, revision)`) and `n` nights with side
/// by side alternated with `n` without (`night(side_by_side)`).
pub(crate) struct Cells {
    /// Per change, its nights.
    pub(crate) cells: Vec<(u32, Vec<Night>)>,
    /// Bootstrap nights it took.
    pub(crate) attempts: usize,
    /// Unchanged nights of history, and how many of them failed the gate.
    pub(crate) history: usize,
    pub(crate) history_failures: usize,
    /// Seconds in all.
    pub(crate) seconds: f64,
}

/// The changes to commit (`TIER1_NIGHTS_CHANGES`, default `0,5,10,20`) and the unchanged nights
/// of history (`TIER1_NIGHTS_HISTORY`, default `history`).
fn plan(history: usize) -> (Vec<u32>, usize) {
    let changes: Vec<u32> = std::env::var("TIER1_NIGHTS_CHANGES")
        .unwrap_or_else(|_| "0,5,10,20".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let history: usize = std::env::var("TIER1_NIGHTS_HISTORY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(history);
    (changes, history)
}

/// The neighbours `TIER1_NIGHTS_HOGS` (a fixed number of spinners) or `TIER1_NIGHTS_LOAD` (the
/// runnable tasks the spinners keep the machine at) asks for (none by default).
pub(crate) fn neighbours() -> Option<crate::neighbours::Neighbours> {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
    let hogs = match (var("TIER1_NIGHTS_HOGS"), var("TIER1_NIGHTS_LOAD")) {
        (Some(n), _) if n > 0.0 => crate::neighbours::Hogs::Fixed(n as usize),
        (_, Some(l)) if l > 0.0 => crate::neighbours::Hogs::Load(l),
        _ => return None,
    };
    let bursts = std::env::var("TIER1_NIGHTS_BURSTS").map_or(true, |v| v != "0");
    println!(
        "neighbours: CPU spinners {hogs:?}, bursts {} (load average now {:.1} on {} cores)",
        if bursts { "on" } else { "off" },
        crate::neighbours::load_avg(),
        crate::neighbours::cores()
    );
    Some(crate::neighbours::Neighbours::start(hogs, bursts))
}

/// Run the cells of [`Cells`].
pub(crate) fn run_cells(
    n: usize,
    default_history: usize,
    mut night: impl FnMut(bool) -> Night,
    mut commit: impl FnMut(u32, usize),
) -> Cells {
    let (changes, history) = plan(default_history);
    let t0 = Instant::now();
    let ((), attempts) = bootstrap_with(|| (night(true).exit == 0).then_some(()));
    let mut history_failures = 0;
    for _ in 0..history {
        history_failures += usize::from(night(true).exit != 0);
    }
    let mut cells = Vec::new();
    for (revision, pct) in changes.iter().enumerate() {
        commit(*pct, revision);
        println!("\nchange {pct} %:");
        let mut nights = Vec::new();
        for _ in 0..n {
            nights.push(night(true));
            nights.push(night(false));
        }
        cells.push((*pct, nights));
    }
    Cells {
        cells,
        attempts,
        history,
        history_failures,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// The table of [`Cells`]: a heading, then [`report`]'s rows.
pub(crate) fn table(title: &str, c: &Cells, keys: &[&str]) {
    println!(
        "\n### {title}, with and without side by side ({:.0} s in all; bootstrap nights needed: {}; {} unchanged nights of history, gate failures {})\n",
        c.seconds, c.attempts, c.history, c.history_failures
    );
    let regressed: Vec<String> = keys
        .iter()
        .map(|k| format!("{} regressed", k.rsplit(':').next().unwrap_or(k)))
        .collect();
    println!(
        "| change in the commit | side by side | nights | gate failed | {} | side by side worse/same/unknown | night (median) | confirmations |",
        regressed.join(" | ")
    );
    println!(
        "| --- | --- | ---: | ---: | {}--- | ---: | --- |",
        "---: | ".repeat(keys.len())
    );
    for (pct, nights) in &c.cells {
        report(*pct, nights, keys);
    }
}

/// The stated detectable change night by night around a burst of loaded nights
/// (`TIER1_INTEGRITY_REAL_ONLY=heal`, issue 37): a bootstrap, `n` nights, 3 nights beside 4 × the
/// cores of CPU spinners and the bursts, then `n` nights again; per night the load before it,
/// each target's verdict, stated detectable change and the accepted runs behind its noise
/// estimate. The history heals when the nights after the burst state what the nights before did.
pub fn heal(n: usize) {
    let (_t, root) = checkout();
    let ((), attempts) = bootstrap_with(|| (run_night(&root, true).exit == 0).then_some(()));
    println!("\nbootstrap nights: {attempts}\n");
    let mut rows = Vec::new();
    let burst = crate::neighbours::Hogs::Fixed(4 * crate::neighbours::cores());
    for (phase, count, hogs) in [
        ("before", n, None),
        ("burst", 3, Some(burst)),
        ("after", n, None),
    ] {
        let _neighbours = hogs.map(|h| crate::neighbours::Neighbours::start(h, true));
        for _ in 0..count {
            let night = run_night(&root, true);
            rows.push((phase, night));
        }
    }
    println!(
        "\n| night | phase | load before | exit | py_dot verdict, detectable (noise runs) | c_matmul verdict, detectable (noise runs) |"
    );
    println!("| ---: | --- | ---: | ---: | --- | --- |");
    for (i, (phase, night)) in rows.iter().enumerate() {
        let cell = |s: &crate::real::Said| {
            format!(
                "{}, {} ({})",
                s.verdict,
                s.detectable_pct
                    .map_or_else(|| "-".into(), |d| format!("{d:.1} %")),
                s.noise_runs
            )
        };
        println!(
            "| {} | {phase} | {:.1} | {} | {} | {} |",
            i + 1,
            night.load,
            night.exit,
            cell(&night.said[0]),
            cell(&night.said[1])
        );
    }
}

/// Run the whole-night cells.
pub fn main(n: usize) {
    let (_t, root) = checkout();
    let _neighbours = neighbours();
    let c = run_cells(
        n,
        3,
        |side_by_side| run_night(&root, side_by_side),
        |pct, revision| commit_change(&root, pct, revision),
    );
    table("Whole nights of a Python and a C command target", &c, &KEYS);
}
