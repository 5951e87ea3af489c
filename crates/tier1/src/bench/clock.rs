//! The clock a CPU sample is read from (`profile.clock`): wall time, or the CPU time the whole
//! process consumed (user + system, every thread). On a shared machine a pinned measurement is
//! preempted by its neighbours: wall time then counts their time slices too (measured on this
//! project's 2-core VM at load 7: a 8.5 ms loop read 32.6 ms median wall, CV 13 %, against
//! 8.5 ms CPU, CV 1.8 %), while the process's CPU time counts only its own work. Device times
//! (CUDA events) are used whatever the clock says.
#![allow(unsafe_code)] // clock_gettime is a libc call; the block says why it is sound.

use std::time::Instant;

pub use crate::suite::Clock;

impl Clock {
    /// A reading to measure from.
    pub(crate) fn start(self) -> Reading {
        match self {
            Clock::Wall => Reading::Wall(Instant::now()),
            Clock::Cpu => Reading::Cpu(process_cpu_ns()),
        }
    }
}

/// A clock reading.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reading {
    /// Wall time.
    Wall(Instant),
    /// Process CPU time in nanoseconds (`None` when the clock could not be read).
    Cpu(Option<u128>),
}

impl Reading {
    /// Milliseconds since this reading; `None` when the CPU clock cannot be read (the caller
    /// reports it as a failed sample).
    pub(crate) fn elapsed_ms(self) -> Option<f64> {
        match self {
            Reading::Wall(t) => Some(t.elapsed().as_secs_f64() * 1e3),
            Reading::Cpu(start) => {
                let (start, now) = (start?, process_cpu_ns()?);
                Some(now.saturating_sub(start) as f64 / 1e6)
            }
        }
    }
}

/// CPU time of the process in nanoseconds.
fn process_cpu_ns() -> Option<u128> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call; the kernel writes one
    // timespec and nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    let secs = u128::try_from(ts.tv_sec).ok()?;
    let nanos = u128::try_from(ts.tv_nsec).ok()?;
    Some(secs * 1_000_000_000 + nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(ms: f64) {
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_secs_f64() * 1e3 < ms {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }

    #[test]
    fn both_clocks_read_forward() {
        // The process clock counts every thread of this test binary, so only its lower bound
        // can be asserted here (that preemption does not count is measured in docs/harness.md).
        let r = Clock::Cpu.start();
        spin(20.0);
        let worked = r.elapsed_ms().expect("the CPU clock reads");
        assert!(worked > 5.0, "20 ms of spinning read {worked} ms of CPU");
        let r = Clock::Wall.start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(r.elapsed_ms().unwrap() >= 19.0);
        assert_eq!((Clock::Cpu.as_str(), Clock::Wall.as_str()), ("cpu", "wall"));
    }
}
