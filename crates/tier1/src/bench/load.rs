//! How busy the machine was while something was measured: the one-minute load average per core
//! (`/proc/loadavg` over the online cores), the CPU time the measured child processes got against
//! their wall time (`getrusage(RUSAGE_CHILDREN)`), and the share of CPU time the hypervisor stole
//! (`/proc/stat`, where the kernel reports it). What they make of a measurement, and the rule that
//! calls a machine overloaded, is [`crate::history::overload::Overload`].
#![allow(unsafe_code)] // getrusage is a libc call; the block says why it is sound.

/// The online cores: the `cpuN` lines of `/proc/stat` (every core of the machine, whatever this
/// thread's affinity), else the available parallelism.
pub(crate) fn cores() -> usize {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .map(|s| parse_cores(&s))
        .filter(|n| *n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

fn parse_cores(stat: &str) -> usize {
    stat.lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

/// The one-minute load average (`/proc/loadavg`), when readable.
pub(crate) fn load_avg_1m() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0)
}

/// The tasks runnable at this instant, the reader included (`procs_running` of `/proc/stat`),
/// when readable. Unlike the load average, which lags by about a minute, it shows neighbours
/// that started a moment ago; one reading is a sample, so callers read it at both ends of a
/// window or over many rounds.
pub(crate) fn runnable() -> Option<u32> {
    parse_procs_running(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn parse_procs_running(stat: &str) -> Option<u32> {
    stat.lines()
        .find_map(|l| l.strip_prefix("procs_running"))?
        .trim()
        .parse()
        .ok()
}

/// The aggregate CPU counters of `/proc/stat` (clock ticks): all time and stolen time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuTicks {
    /// user + nice + system + idle + iowait + irq + softirq + steal.
    pub(crate) total: u64,
    /// steal (0 where the kernel does not report it).
    pub(crate) steal: u64,
}

impl CpuTicks {
    /// The counters now, when readable.
    pub(crate) fn now() -> Option<CpuTicks> {
        parse_cpu_ticks(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Percent of the time between `self` and `later` that was stolen (`None` when no time
    /// passed).
    pub(crate) fn steal_pct_until(self, later: CpuTicks) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let steal = later.steal.checked_sub(self.steal)?;
        (total > 0).then(|| steal as f64 / total as f64 * 100.0)
    }
}

fn parse_cpu_ticks(stat: &str) -> Option<CpuTicks> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
    // counted in user.
    let total = v.iter().take(8).sum();
    Some(CpuTicks {
        total,
        steal: v.get(7).copied().unwrap_or(0),
    })
}

/// User + system CPU time of the waited-for children of this process, in seconds
/// (`getrusage(RUSAGE_CHILDREN)`); `None` when it cannot be read. The difference around one
/// invocation is the CPU time that invocation's processes got.
pub(crate) fn children_cpu_s() -> Option<f64> {
    // SAFETY: `rusage` is plain old data for which all-zero bytes are a valid value; the kernel
    // writes one `rusage` into the pointer, which is valid and writable for the whole call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: see above; RUSAGE_CHILDREN is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    if rc != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 5 50 800 10 0 5 30 0 0\ncpu0 50 2 25 400 5 0 2 15 0 0\n\
                        cpu1 50 3 25 400 5 0 3 15 0 0\nintr 1 2 3\nctxt 5\n\
                        procs_running 5\nprocs_blocked 0\n";

    #[test]
    fn proc_stat_gives_the_cores_and_the_stolen_share() {
        assert_eq!(parse_cores(STAT), 2);
        let a = parse_cpu_ticks(STAT).unwrap();
        assert_eq!(
            a,
            CpuTicks {
                total: 1000,
                steal: 30
            }
        );
        let b = CpuTicks {
            total: 1200,
            steal: 70,
        };
        assert_eq!(a.steal_pct_until(b), Some(20.0));
        assert_eq!(a.steal_pct_until(a), None);
        // A kernel without the steal column: no steal.
        let old = parse_cpu_ticks("cpu 1 2 3 4\n").unwrap();
        assert_eq!((old.total, old.steal), (10, 0));
        assert!(parse_cpu_ticks("cpu x\n").is_none());
        assert!(cores() >= 1);
        assert_eq!(parse_procs_running(STAT), Some(5));
        assert_eq!(parse_procs_running("cpu 1 2 3 4\n"), None);
        assert!(runnable().is_some_and(|r| r >= 1));
        assert!(children_cpu_s().is_some_and(|s| s >= 0.0));
    }
}
