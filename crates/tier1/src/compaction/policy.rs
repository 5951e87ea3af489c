//! When to compact and how much to keep ([`Policy`]): due past three tails of live runs or half a
//! restore cap, and sealing only whole batches.

use crate::archive::{MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::history_check::restorable::Footprint;

/// Runs always kept live at the end of the history when the detection window is smaller.
pub(crate) const MIN_TAIL_RUNS: usize = 100;

/// Compaction is due when the live runs outnumber this many tails.
pub(crate) const MAX_TAILS_LIVE: usize = 3;

/// When to compact and how much to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The detection window (`thresholds.history_window`).
    pub window: usize,
    /// The newest runs kept live: `max(window, min(5 × window, 100))`.
    pub tail: usize,
    /// Compaction is due when there are more live runs than this: `MAX_TAILS_LIVE` tails.
    pub max_live_runs: usize,
    /// Compaction is due when the live part has more members than this: half of restore's cap.
    pub max_members: usize,
    /// Compaction is due when the live part expands to more bytes than this: half of restore's cap.
    pub max_bytes: u64,
    /// A due compaction seals only when at least this many runs can be sealed at once (one tail)...
    pub min_batch: usize,
    /// ...or when the live part has more members than this (three quarters of restore's cap)...
    pub urgent_members: usize,
    /// ...or expands to more bytes than this (three quarters of restore's cap).
    pub urgent_bytes: u64,
}

impl Policy {
    /// The policy of a suite whose detection window is `window` runs.
    pub fn for_window(window: usize) -> Policy {
        let tail = window.max((5 * window).min(MIN_TAIL_RUNS));
        Policy {
            window,
            tail,
            max_live_runs: MAX_TAILS_LIVE * tail,
            max_members: MAX_MEMBERS / 2,
            max_bytes: MAX_EXPANDED_BYTES / 2,
            min_batch: tail,
            urgent_members: MAX_MEMBERS / 4 * 3,
            urgent_bytes: MAX_EXPANDED_BYTES / 4 * 3,
        }
    }

    /// Whether compaction is due for `live` live runs and the live part's footprint `f`.
    pub(crate) fn needs_compaction(&self, live: usize, f: Footprint) -> bool {
        live > self.max_live_runs
            || f.members > self.max_members
            || f.expanded_bytes > self.max_bytes
    }

    /// Whether a due compaction that could seal `sealable` runs does: a batch of at least
    /// `min_batch` runs, or any batch when the live part is past the urgent margins.
    pub(crate) fn seals(&self, sealable: usize, f: Footprint) -> bool {
        sealable > 0
            && (sealable >= self.min_batch
                || f.members > self.urgent_members
                || f.expanded_bytes > self.urgent_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(members: usize, mib: u64) -> Footprint {
        Footprint {
            members,
            expanded_bytes: mib * 1024 * 1024,
            archive_bytes_bound: 0,
        }
    }

    /// Hysteresis: due past three tails or half a cap of the live part; seals a batch of at least
    /// a tail, or anything past three quarters of a cap; never a segment a night.
    #[test]
    fn compaction_is_due_late_and_seals_whole_batches() {
        let p = Policy::for_window(20);
        assert_eq!((p.tail, p.max_live_runs, p.min_batch), (100, 300, 100));
        assert!(!p.needs_compaction(300, f(1500, 20)));
        assert!(p.needs_compaction(301, f(1500, 20)));
        assert!(p.needs_compaction(150, f(5001, 20)), "members");
        assert!(p.needs_compaction(150, f(700, 33)), "bytes");
        assert!(p.seals(100, f(1500, 20)));
        assert!(!p.seals(99, f(1500, 20)), "a small batch waits");
        assert!(
            !p.seals(1, f(700, 40)),
            "one run a night never, under the urgent margin"
        );
        assert!(
            p.seals(1, f(700, 49)),
            "past three quarters of the byte cap"
        );
        assert!(
            p.seals(1, f(7501, 20)),
            "past three quarters of the member cap"
        );
        assert!(!p.seals(0, f(9999, 63)), "nothing to seal");
    }
}
