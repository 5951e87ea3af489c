//! Heavy neighbours for the benches that measure on a crowded machine (`benches/crowded.rs`, the
//! integrity bench's real nights with `TIER1_NIGHTS_HOGS` or `TIER1_NIGHTS_LOAD`): CPU spinners
//! for the whole run (a fixed number, or as many as keep the runnable tasks near a target load),
//! and a thread that starts a burst every 5 to 15 s, in turn a parallel build's worth of CPU jobs
//! (twice the cores, 3 to 6 s) and 256 MB written and synced to disk. Every process started here
//! is killed by its own id when the neighbours are dropped.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The one-minute load average (NaN when unreadable).
pub fn load_avg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A CPU spinner: a shell loop that never sleeps.
fn spinner() -> Child {
    Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .expect("start a CPU spinner")
}

/// How many CPU spinners run beside the measurement.
#[derive(Debug, Clone, Copy)]
pub enum Hogs {
    /// This many, for the whole run.
    Fixed(usize),
    /// As many as keep the machine's runnable tasks (the `running` count of `/proc/loadavg`,
    /// averaged over 5 s) near this target: none when the machine is already that busy.
    Load(f64),
}

/// The neighbours: spinners for the whole bench (a fixed number, or adjusted every 5 s toward a
/// target load), and a thread that starts a burst every 5 to 15 s (in turn: a parallel build's
/// worth of CPU jobs for 3 to 6 s, or 256 MB written and synced).
pub struct Neighbours {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Where the I/O bursts write (removed last).
    _scratch: tempfile::TempDir,
}

impl Neighbours {
    /// Start the spinners and, when `bursts`, the burst thread (its I/O file in a scratch
    /// directory of its own).
    pub fn start(hogs: Hogs, bursts: bool) -> Neighbours {
        let scratch = tempfile::tempdir().expect("a scratch directory for the I/O bursts");
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || spin_loop(&stop, hogs)));
        }
        if bursts {
            let stop = stop.clone();
            let file = scratch.path().join("io-burst");
            threads.push(std::thread::spawn(move || burst_loop(&stop, &file)));
        }
        Neighbours {
            stop,
            threads,
            _scratch: scratch,
        }
    }
}

impl Drop for Neighbours {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Runnable tasks now (`/proc/loadavg`'s fourth field, `running/total`).
fn running() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    s.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

fn spin_loop(stop: &AtomicBool, hogs: Hogs) {
    let mut spinners: Vec<Child> = Vec::new();
    if let Hogs::Fixed(n) = hogs {
        spinners.extend((0..n).map(|_| spinner()));
    }
    while !stop.load(Ordering::SeqCst) {
        let mut seen = Vec::new();
        for _ in 0..5 {
            sleep_unless(stop, Duration::from_secs(1));
            seen.extend(running());
        }
        if let Hogs::Load(target) = hogs
            && !seen.is_empty()
        {
            let now = seen.iter().sum::<f64>() / seen.len() as f64;
            if now < target - 0.5 && spinners.len() < 8 * cores() {
                spinners.push(spinner());
            } else if now > target + 0.5
                && let Some(mut s) = spinners.pop()
            {
                let _ = s.kill();
                let _ = s.wait();
            }
        }
    }
    for s in &mut spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
}

fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn burst_loop(stop: &AtomicBool, file: &std::path::Path) {
    let mut rng = tier1::bench::rng::Rng::new(37, 1);
    let mut k = 0u64;
    while !stop.load(Ordering::SeqCst) {
        sleep_unless(stop, Duration::from_millis(5000 + rng.next_u64() % 10_000));
        if stop.load(Ordering::SeqCst) {
            break;
        }
        k += 1;
        if k % 2 == 1 {
            // A parallel build: twice the cores' worth of short CPU jobs.
            let mut jobs: Vec<Child> = (0..2 * cores()).map(|_| spinner()).collect();
            sleep_unless(stop, Duration::from_millis(3000 + rng.next_u64() % 3000));
            for j in &mut jobs {
                let _ = j.kill();
                let _ = j.wait();
            }
        } else {
            // I/O: 256 MB written and synced, then removed.
            let _ = Command::new("dd")
                .args([
                    "if=/dev/zero",
                    &format!("of={}", file.display()),
                    "bs=1M",
                    "count=256",
                    "conv=fsync",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = std::fs::remove_file(file);
        }
    }
}
