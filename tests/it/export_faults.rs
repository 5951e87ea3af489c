//! Kills of the history's writers and what the next run finds, with the fault-injection points
//! (docs/fault-injection.md): `tier1-export` killed at every rename point and at write points
//! spread over an export (between placing its digest file and its archive included) is rerun and
//! completes the pair, the archive never visible without its digest; and the temporary trees a
//! killed `tier1-export`, `tier1-restore --from-export` or `tier1-publish` leaves beside its
//! output carry its pid and are collected by the next run of another binary writing there.

use crate::history_compaction::Long;
use crate::history_export::exported;
use crate::history_support::Ran;
use crate::support::command;
use crate::support::exit_code::{Exit, exit_code};
use std::path::{Path, PathBuf};

/// `bin` with `args` and, when given, `TIER1_FAULT`.
fn run(bin: &str, args: &[String], fault: Option<String>) -> Ran {
    let mut cmd = command::scrubbed(command::bin(bin));
    if let Some(f) = fault {
        cmd.env("TIER1_FAULT", f);
    }
    let out = cmd
        .args(args)
        .env("TIER1_LOG", "warn")
        .output()
        .expect("binary runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn export_args(root: &Path, file: &Path) -> Vec<String> {
    vec![
        "--history-root".into(),
        root.display().to_string(),
        "--output".into(),
        file.display().to_string(),
    ]
}

fn from_export_args(file: &Path, dest: &Path) -> Vec<String> {
    vec![
        "--from-export".into(),
        file.display().to_string(),
        "--destination".into(),
        dest.display().to_string(),
    ]
}

/// tier1's temporary entries in `dir` (`.tier1-…`).
fn leftovers(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".tier1-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The points an uninterrupted run of `bin args` reaches, as `(point, path)`.
fn points(bin: &str, args: &[String], scratch: &Path) -> Vec<(String, String)> {
    let file = scratch.join("points.txt");
    let r = run(bin, args, Some(format!("count:{}", file.display())));
    assert_eq!(r.code, exit_code(Exit::Ok), "counting run: {}", r.stderr);
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| {
            let (p, path) = l.split_once(' ').unwrap();
            (p.to_string(), path.to_string())
        })
        .collect()
}

/// The `n`th point of kind `kind` in `all`, counted from 1, and `count` of them spread evenly.
fn spread(all: &[(String, String)], kind: &str, count: usize) -> Vec<(u64, String)> {
    let of_kind: Vec<&String> = all
        .iter()
        .filter(|(p, _)| p == kind)
        .map(|(_, p)| p)
        .collect();
    let n = of_kind.len();
    let mut picked: Vec<usize> = (0..count.min(n))
        .map(|i| i * n / count.min(n).max(1))
        .chain(n.checked_sub(1))
        .collect();
    picked.sort_unstable();
    picked.dedup();
    picked
        .into_iter()
        .map(|i| (i as u64 + 1, of_kind[i].clone()))
        .collect()
}

#[test]
fn a_killed_export_is_completed_by_its_rerun_and_never_shows_an_archive_without_its_digest() {
    let l = Long::new(30);
    let t = l.env.tmp.path();
    let scratch = t.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let all = points(
        "tier1-export",
        &export_args(&l.live, &scratch.join("x.zip")),
        &scratch,
    );
    let renames = spread(&all, "rename", usize::MAX);
    assert!(renames.len() >= 3, "{all:?}");
    let mut kills: Vec<(String, u64, String)> = renames
        .into_iter()
        .map(|(n, p)| ("rename".to_string(), n, p))
        .collect();
    kills.extend(
        spread(&all, "write", 8)
            .into_iter()
            .map(|(n, p)| ("write".to_string(), n, p)),
    );
    let want = tier1::digest::Digest::of_file(&scratch.join("x.zip")).unwrap();
    for (i, (kind, n, at)) in kills.iter().enumerate() {
        let dir = t.join(format!("exports-{i}"));
        let file = dir.join("history.zip");
        let sidecar = dir.join("history.zip.sha256");
        let args = export_args(&l.live, &file);
        let killed = run("tier1-export", &args, Some(format!("{kind}:{n}:kill")));
        assert_ne!(killed.code, 0, "{kind} {n} ({at}) was not reached");
        assert!(
            !file.exists() || sidecar.exists(),
            "killed at {kind} {n} ({at}): the archive is visible without its digest"
        );
        let rerun = run("tier1-export", &args, None);
        assert_eq!(
            rerun.code,
            exit_code(Exit::Ok),
            "rerun after a kill at {kind} {n} ({at}): {}",
            rerun.stderr
        );
        assert_eq!(tier1::digest::Digest::of_file(&file).unwrap(), want);
        assert_eq!(
            std::fs::read_to_string(&sidecar).unwrap(),
            format!("{}  history.zip\n", want.hex())
        );
        assert_eq!(
            leftovers(&dir),
            Vec::<String>::new(),
            "after {kind} {n} ({at})"
        );
    }
}

/// A kill of `bin args` at its `n`th write point, which must leave `.tier1-` entries in `dir`,
/// all of one kind and all naming the killed process: that kind (`.tier1-stage-p`).
fn killed_leaving(bin: &str, args: &[String], n: u64, dir: &Path) -> String {
    let r = run(bin, args, Some(format!("write:{n}:kill")));
    assert_ne!(
        r.code,
        exit_code(Exit::Ok),
        "{bin} was not killed: {}",
        r.stderr
    );
    let left = leftovers(dir);
    assert!(!left.is_empty(), "{bin} left nothing");
    let owner = |name: &str| name.split('-').nth(2).map(str::to_string);
    let first = owner(&left[0]).unwrap_or_default();
    assert!(
        first.starts_with('p') && first[1..].bytes().all(|b| b.is_ascii_digit()),
        "{bin}: the temporary name carries the owner's pid: {left:?}"
    );
    assert!(
        left.iter()
            .all(|n| owner(n).as_deref() == Some(first.as_str())),
        "{bin}: {left:?}"
    );
    let kind: Vec<&str> = left[0].splitn(3, '-').take(2).collect();
    format!("{}-{first}", kind.join("-"))
}

#[test]
fn a_killed_writer_s_temporary_tree_is_collected_by_the_next_binary_writing_there() {
    // Long enough to compact: the export carries a sealed segment.
    let l = Long::new(400);
    let t = l.env.tmp.path();
    let (out, file, _) = exported(&l);
    let shared: PathBuf = t.join("shared");
    std::fs::create_dir_all(&shared).unwrap();

    // tier1-export killed while linking its tree: the next tier1-restore --from-export there
    // collects it.
    let name = killed_leaving(
        "tier1-export",
        &export_args(&out, &shared.join("a.zip")),
        3,
        &shared,
    );
    assert!(name.starts_with(".tier1-export-p"), "{name}");
    let r = run(
        "tier1-restore",
        &from_export_args(&file, &shared.join("restored")),
        None,
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(leftovers(&shared), Vec::<String>::new());

    // tier1-restore --from-export killed while extracting: the next tier1-export there collects
    // its staged tree.
    let name = killed_leaving(
        "tier1-restore",
        &from_export_args(&file, &shared.join("restored-2")),
        5,
        &shared,
    );
    assert!(name.starts_with(".tier1-stage-p"), "{name}");
    let r = run(
        "tier1-export",
        &export_args(&out, &shared.join("b.zip")),
        None,
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(leftovers(&shared), Vec::<String>::new());
    assert!(!shared.join("restored-2").exists());

    // tier1-publish killed while staging its output root: the next tier1-restore collects it.
    let publish_out = shared.join("published");
    let o = l.publish_with_fault(&l.live, &publish_out, "write:5:kill");
    assert_ne!(o.status.code(), Some(exit_code(Exit::Ok)));
    let left = leftovers(&shared);
    assert!(
        !left.is_empty() && left.iter().all(|n| n.starts_with(".tier1-stage-p")),
        "{left:?}"
    );
    let r = run(
        "tier1-restore",
        &from_export_args(&file, &shared.join("restored-3")),
        None,
    );
    assert_eq!(r.code, exit_code(Exit::Ok), "{}", r.stderr);
    assert_eq!(leftovers(&shared), Vec::<String>::new());
}
