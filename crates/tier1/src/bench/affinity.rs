//! Pinning a suite run to one CPU (`profile.pin_cpu`): the calling thread's affinity is narrowed
//! to the highest CPU it may run on, so every measuring thread it spawns (and every command it
//! starts) inherits it, and restored when the guard drops. On a small shared machine this takes
//! the scheduler's cross-CPU wake-ups and a busy neighbour core out of the timings: the optimized
//! CPU variants then run single-threaded and the speedups are algorithmic (docs/harness.md).
#![allow(unsafe_code)] // sched_getaffinity / sched_setaffinity are libc calls; each block says why.

/// Restores the previous affinity when dropped.
pub(crate) struct Pinned {
    previous: libc::cpu_set_t,
    /// The CPU the thread is pinned to.
    pub(crate) cpu: usize,
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pinned").field("cpu", &self.cpu).finish()
    }
}

fn current() -> Result<libc::cpu_set_t, String> {
    // SAFETY: cpu_set_t is plain data for which all-zero bytes are a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size is that of the set we pass, which the kernel
    // fills and never writes past.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(format!(
            "sched_getaffinity: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(set)
}

fn set(set: &libc::cpu_set_t) -> Result<(), String> {
    // SAFETY: pid 0 is the calling thread; the kernel only reads `size_of::<cpu_set_t>()` bytes.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc != 0 {
        return Err(format!(
            "sched_setaffinity: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Pin the calling thread to the highest CPU of its current set. `Ok(None)` when it may run on
/// one CPU only already.
pub(crate) fn pin_to_one_cpu() -> Result<Option<Pinned>, String> {
    let previous = current()?;
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads bit `i` of the set; `i` is below the set's capacity in bits.
    let allowed: Vec<usize> = (0..max)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &previous) })
        .collect();
    let Some(&cpu) = allowed.last() else {
        return Err("sched_getaffinity returned an empty CPU set".into());
    };
    if allowed.len() == 1 {
        return Ok(None);
    }
    // SAFETY: as in `current`, an all-zero cpu_set_t is a valid empty set; CPU_SET writes bit
    // `cpu`, which is below the capacity (it was read from a set of the same type).
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set(&one)?;
    Ok(Some(Pinned { previous, cpu }))
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Err(e) = set(&self.previous) {
            tracing::warn!(error = %e, "could not restore the CPU affinity");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_narrows_the_parallelism_and_the_guard_restores_it() {
        // Run on a fresh thread so the test harness's own thread keeps its affinity.
        std::thread::spawn(|| {
            let before = std::thread::available_parallelism().map_or(1, |n| n.get());
            let pinned = pin_to_one_cpu().expect("affinity calls work on Linux");
            let during = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert_eq!(during, 1);
            let inherited =
                std::thread::spawn(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                    .join()
                    .unwrap();
            assert_eq!(inherited, 1, "threads spawned while pinned inherit the CPU");
            assert_eq!(pinned.is_some(), before > 1);
            drop(pinned);
            let after = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert_eq!(after, before);
        })
        .join()
        .unwrap();
    }
}
