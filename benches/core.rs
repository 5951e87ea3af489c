//! Core benchmarks (`cargo bench --bench core`): streaming SHA-256 (`digest::copy_hashed` over a
//! 128 MiB file) side by side with `openssl speed -evp sha256` in the same run, restore of a
//! synthetic 1,000-run history from a local store (wall time, breakdown, peak RSS), and publish of
//! one run into it. Prints a table; numbers go to docs/performance.md under `## Core`.

/// The tests' scrubbed command builder, which `restore_support` starts binaries with.
#[path = "../tests/it/support/command.rs"]
mod command_builder;
#[path = "../tests/it/restore_support/mod.rs"]
mod restore_support;
mod support {
    pub(crate) use super::command_builder as command;
}

use chrono::Duration;
use restore_support::*;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration as StdDuration, Instant};

const RUNS: usize = 5;
const HASH_BYTES: usize = 128 * 1024 * 1024;
const HISTORY_RUNS: usize = 1_000;

fn median(mut xs: Vec<StdDuration>) -> StdDuration {
    xs.sort();
    xs[xs.len() / 2]
}

fn secs(d: StdDuration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// Peak resident set (VmHWM) of this process in KiB.
fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reset the peak RSS counter (Linux >= 4.0: write 5 to clear_refs).
fn reset_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `openssl speed -evp sha256` on 16 KiB blocks for one second, in MiB/s: by default OpenSSL
/// divides by its user CPU time; with `elapsed` by wall-clock time (like our measurement).
fn openssl_speed(elapsed: bool) -> Option<f64> {
    let mut cmd = Command::new("openssl");
    cmd.arg("speed");
    if elapsed {
        cmd.arg("-elapsed");
    }
    let out = cmd
        .args(["-evp", "sha256", "-bytes", "16384", "-seconds", "1"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().rev().find(|l| l.starts_with("sha256"))?;
    let kbps: f64 = line
        .split_whitespace()
        .nth(1)?
        .trim_end_matches('k')
        .parse()
        .ok()?;
    Some(kbps * 1000.0 / (1024.0 * 1024.0))
}

/// Medians of (tier1 MiB/s, OpenSSL CPU-time MiB/s, OpenSSL wall-clock MiB/s), interleaved runs.
fn hash_bench(dir: &Path) -> (f64, Option<f64>, Option<f64>) {
    let path = dir.join("blob.bin");
    let mut f = std::fs::File::create(&path).expect("create");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunk = vec![0u8; 1 << 20];
    for _ in 0..HASH_BYTES / chunk.len() {
        for b in chunk.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        f.write_all(&chunk).expect("write");
    }
    f.sync_all().expect("sync");
    drop(f);
    let mib = HASH_BYTES as f64 / (1024.0 * 1024.0);
    let (mut ours, mut cpu, mut wall) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let t = Instant::now();
        let mut src = std::fs::File::open(&path).expect("open");
        let (_, n) =
            tier1::digest::copy_hashed(&mut src, &mut std::io::sink(), u64::MAX).expect("hash");
        ours.push(mib / t.elapsed().as_secs_f64());
        assert_eq!(n as usize, HASH_BYTES);
        cpu.extend(openssl_speed(false));
        wall.extend(openssl_speed(true));
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    (med(ours).unwrap_or(0.0), med(cpu), med(wall))
}

fn main() {
    let env = Env::new();
    let p = env.nightly(
        t0(),
        "success",
        tier1::store::local::NewRun::new(WORKFLOW, "main", SHA_A),
        |ev, dir| {
            write_history(dir, HISTORY_RUNS, &anchor(ev));
            HistoryUpload::Dir
        },
    );
    let zip_bytes = p.history.as_ref().map_or(0, |h| h.size_in_bytes);
    let store = env.store_at(t0() + Duration::days(1));
    let mut times = Vec::new();
    let mut peak_kib = None;
    let mut last_dest = None;
    for i in 0..RUNS {
        let dest = env.tmp.path().join(format!("restored-{i}"));
        let opts = tier1::restore::RestoreOptions {
            repository: REPO.into(),
            workflow: WORKFLOW.into(),
            branch: "main".into(),
            current_run_id: None,
            destination: dest.clone(),
            allow_bootstrap: false,
            allow_anchor_renewal: false,
            artifact_prefix: Default::default(),
        };
        let reset = reset_hwm();
        let t = Instant::now();
        let out = tier1::restore::restore(&store, &opts).expect("restore");
        times.push(t.elapsed());
        assert!(out.history_restored);
        if reset {
            peak_kib = peak_kib.max(vm_hwm_kib());
        }
        last_dest = Some(dest);
    }
    let restore_median = median(times);

    // Breakdown: extraction alone, strict read-only validation, restore's sanitizing validation.
    let zip_path = store.artifact_path(p.history.as_ref().expect("history").id);
    let (mut ex, mut strict, mut sanitize) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..RUNS {
        let d = env.tmp.path().join(format!("extract-{i}"));
        let t = Instant::now();
        tier1::archive::extract_safe(&zip_path, &d, &tier1::archive::ExtractPolicy::history())
            .expect("extract");
        ex.push(t.elapsed());
        let t = Instant::now();
        tier1::history_check::validate_history_root(&d).expect("strict");
        strict.push(t.elapsed());
        let t = Instant::now();
        tier1::history_check::sanitize_restored(&d).expect("sanitize");
        sanitize.push(t.elapsed());
    }

    // Publish one new run into the restored 1,000-run history.
    let live = last_dest.expect("restored");
    let cand = env.tmp.path().join("candidate");
    write_history(&cand, HISTORY_RUNS + 1, &anchor(&p.evidence.name));
    let suite = tier1::suite::Suite::embedded();
    let mut pub_times = Vec::new();
    let mut publish_note = String::new();
    for i in 0..RUNS {
        let req = tier1::publish::MergeRequest {
            candidate_root: cand.clone(),
            canonical_root: live.clone(),
            output_root: env.tmp.path().join(format!("published-{i}")),
            run_id: run_id(HISTORY_RUNS),
        };
        let t = Instant::now();
        match tier1::publish::merge(&req, &suite) {
            Ok(_) => pub_times.push(t.elapsed()),
            Err(e) => {
                publish_note = format!("publish failed: {e}");
                break;
            }
        }
    }

    let (ours, openssl_cpu, openssl_wall) = hash_bench(env.tmp.path());
    println!("| benchmark | result | goal |");
    println!("| --- | --- | --- |");
    println!(
        "| SHA-256 streaming a 128 MiB file, `digest::copy_hashed`, wall clock (median of {RUNS}) | {ours:.0} MiB/s | |"
    );
    for (what, theirs) in [
        (
            "`openssl speed -evp sha256` (16 KiB blocks in memory, user CPU time)",
            openssl_cpu,
        ),
        (
            "`openssl speed -elapsed -evp sha256` (wall clock)",
            openssl_wall,
        ),
    ] {
        match theirs {
            Some(t) => println!(
                "| {what}, interleaved (median of {RUNS}) | {t:.0} MiB/s; tier1 / OpenSSL = {:.2}x | >= 0.9x |",
                ours / t
            ),
            None => println!("| {what} | openssl not available | >= 0.9x |"),
        }
    }
    println!(
        "| restore, {HISTORY_RUNS}-run history ({zip_bytes} byte zip), full validation (median of {RUNS}) | {} | < 2 s |",
        secs(restore_median)
    );
    println!(
        "| of which: extraction / strict validation / sanitize_restored (medians) | {} / {} / {} | |",
        secs(median(ex)),
        secs(median(strict)),
        secs(median(sanitize))
    );
    match peak_kib {
        Some(k) => println!(
            "| restore peak RSS (VmHWM, reset before each run) | {:.1} MiB | < 64 MiB |",
            k as f64 / 1024.0
        ),
        None => println!(
            "| restore peak RSS | not measurable (/proc/self/clear_refs unavailable) | < 64 MiB |"
        ),
    }
    if pub_times.len() == RUNS {
        println!(
            "| publish one run into the {HISTORY_RUNS}-run history (median of {RUNS}) | {} | |",
            secs(median(pub_times))
        );
    } else {
        println!("| publish one run into the {HISTORY_RUNS}-run history | {publish_note} | |");
    }
}
