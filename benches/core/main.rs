//! Core benchmarks (`cargo bench --bench core`): streaming SHA-256 (`digest::copy_hashed` over a
//! 128 MiB file) side by side with `openssl speed -evp sha256` in the same run, then histories of
//! 1,000, 10,000 and 50,000 runs grown from four real `tier1-nightly` nights the way publication
//! grows them (`core/nights.rs`): restore, publish, a compacting publish, promote, the dashboard
//! and export of the fullest package of a compaction cycle, each beside `unzip -q` of the same
//! package (`core/scale.rs`). Prints tables; numbers go to docs/performance.md under `## Core`
//! and "History at scale on real nights".

mod nights;
mod scale;

/// Counts the heap of each child (`scale.rs`): its peak of live bytes beside `VmHWM`, which can
/// exceed it by tens of MiB of the allocator's heap growth (docs/performance.md, issue 38).
#[global_allocator]
static ALLOC: tier1::bench::alloc::CountingAlloc = tier1::bench::alloc::CountingAlloc::new();

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const RUNS: usize = 5;
const HASH_BYTES: usize = 128 * 1024 * 1024;

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

fn ms(x: f64) -> String {
    format!("{:.0}", x * 1000.0)
}

/// The SHA-256 table (skipped with `TIER1_CORE_BENCH_SCALE_ONLY`).
fn sha256_table(dir: &Path) {
    let (ours, openssl_cpu, openssl_wall) = hash_bench(dir);
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
}

fn main() {
    if scale::child_main() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    if std::env::var_os("TIER1_CORE_BENCH_SCALE_ONLY").is_none() {
        sha256_table(tmp.path());
    }
    println!();
    let dir = tmp.path().join("nights");
    let nights = nights::real_nights(&dir);
    let mut g = nights::Grower::new(&nights, &dir);
    println!(
        "Scale: real nights ({}; promoted: {}, grown from {}'s package), each figure min / median / max of {} runs in ms, peak RSS the largest VmHWM of a run, heap the largest peak of live heap bytes; \
         `unzip -q` of the same package, interleaved with restore. Goal: restore <= 1.2x unzip and < 64 MiB, publish < 64 MiB, flat in the history's age.",
        nights.run_ids().join(", "),
        nights.promotable().run_id,
        nights.base().run_id,
        scale::reps()
    );
    println!();
    println!(
        "| runs | live / segments | package: members, expanded, zip (after compaction) | nights per cycle | bytes a night adds to the next download | restore ms (RSS) | `unzip -q` ms | restore / unzip | publish ms (RSS) | compacting publish ms (RSS) | promote ms (RSS) | dashboard ms (RSS) | export ms (RSS) | load average (1/5/15 min) at start / end, nproc |"
    );
    println!("|---:|---|---|---:|---:|---|---|---:|---|---|---|---|---|---|");
    let mib = |k: u64| format!("{:.1} MiB", k as f64 / 1024.0);
    let mmm = |(a, b, c): (f64, f64, f64)| format!("{} / {} / {}", ms(a), ms(b), ms(c));
    let op = |o: scale::Op| format!("{} ({}; heap {})", mmm(o.time), mib(o.kib), mib(o.heap_kib));
    for runs in scale::sizes() {
        let load = || {
            std::fs::read_to_string("/proc/loadavg")
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        let start = load();
        let f = scale::measure(&mut g, &nights, runs);
        let end = load();
        let cpus = std::thread::available_parallelism().map_or(0, usize::from);
        println!(
            "| {} | {} / {} | {}, {:.1} MiB, {:.2} MiB ({:.2} MiB) | {} | {:.1} KiB | {} | {} | {:.2}x | {} | {} | {} | {} | {} | {start} / {end}, {cpus} |",
            f.runs,
            f.live_runs,
            f.segments,
            f.members,
            f.expanded_bytes as f64 / 1048576.0,
            f.zip_bytes as f64 / 1048576.0,
            f.zip_bytes_after_compaction as f64 / 1048576.0,
            f.nights_per_cycle,
            f.night_bytes as f64 / 1024.0,
            op(f.restore),
            mmm(f.unzip),
            f.ratio,
            op(f.publish),
            op(f.compacting_publish),
            op(f.promote),
            op(f.dashboard),
            op(f.export),
        );
    }
}
