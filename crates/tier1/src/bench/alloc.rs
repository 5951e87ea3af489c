//! The counting global allocator: live and peak heap bytes of the whole process, so the harness can
//! report the peak bytes a variant allocates during its timed region. Binaries that run benchmarks
//! (and the bench test binaries) install it with `#[global_allocator]`; without it the counters stay
//! at zero and memory is reported as unmeasured.
#![allow(unsafe_code)] // a GlobalAlloc implementation is unsafe by definition; it only forwards to System

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Forwards to the system allocator and counts live and peak bytes.
#[derive(Debug, Default)]
pub struct CountingAlloc;

impl CountingAlloc {
    /// A new allocator value (for `#[global_allocator] static A: CountingAlloc = CountingAlloc::new();`).
    pub const fn new() -> CountingAlloc {
        CountingAlloc
    }
}

fn grew(size: usize) {
    INSTALLED.store(true, Ordering::Relaxed);
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's layout unchanged; the counters are
// plain atomics and never affect the returned memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

/// True once the counting allocator has served an allocation in this process.
pub(crate) fn is_installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Start a measurement: reset the peak to the live level and return that level.
pub(crate) fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// Peak live bytes since the last `reset_peak` (the harness resets it per measurement; a process
/// that never resets it, such as a child of `cargo bench --bench core`, gets its whole peak).
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_counts_a_large_temporary_allocation() {
        let _guard = crate::bench::harness::MEASURE_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let start = reset_peak();
        let v = vec![1u8; 32 << 20];
        std::hint::black_box(&v);
        drop(v);
        assert!(is_installed());
        assert!(
            peak_bytes() - start >= 32 << 20,
            "{} {}",
            peak_bytes(),
            start
        );
    }
}

/// The counting allocator of the library's unit tests (the harness's memory counting reads it).
#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: CountingAlloc = CountingAlloc::new();
