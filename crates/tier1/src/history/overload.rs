//! How busy the machine was over a measurement or a comparison, as results and history record it
//! (`measurement.overloaded`, a side-by-side record's `machine`), and the one rule that calls a
//! machine **overloaded** ([`Overload::overloaded`]): a measurement or comparison taken then says
//! so, and a run measured then stays out of the noise window of later nights
//! (docs/regression-model.md §7). The readings come from the harness (`bench::load`).

use serde::{Deserialize, Serialize};

/// Load average (or tasks runnable at once) per core at or above which the machine is
/// overloaded: twice as many runnable tasks as cores, so a single-threaded benchmark gets at most about half a core (on the 2-core
/// VM, issue 37: comparisons went wrong from load 4 to 9; beside one CPU-bound neighbour, load
/// about 2, they held).
pub const OVERLOADED_LOAD_PER_CORE: f64 = 2.0;

/// Share of CPU time stolen by the hypervisor (percent) at or above which the machine is
/// overloaded.
pub const OVERLOADED_STEAL_PCT: f64 = 10.0;

/// How [`Overload::note`] begins; its figures follow.
pub(crate) const NOTE_HEAD: &str = "the machine was overloaded: ";
/// How [`Overload::note`] ends.
pub(crate) const NOTE_TAIL: &str = "; rerun on a quieter machine";

/// How busy the machine was over a measurement or a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overload {
    /// Online cores.
    pub cores: u32,
    /// The largest one-minute load average seen.
    pub load_avg_1m: f64,
    /// Tasks runnable at once (`procs_running`): the fewer of a window's two ends, or the median
    /// over a comparison's rounds (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable: Option<f64>,
    /// CPU time the measured processes got against their wall time (median; 1 = one full core;
    /// absent when not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_share: Option<f64>,
    /// Percent of CPU time stolen by the hypervisor (the largest seen; absent where the kernel
    /// does not report it or it was not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
}

impl Overload {
    /// Load average per core.
    pub(crate) fn load_per_core(&self) -> f64 {
        self.load_avg_1m / f64::from(self.cores.max(1))
    }

    /// The tasks runnable at once, when read and at least [`OVERLOADED_LOAD_PER_CORE`] per core.
    fn crowding_runnable(&self) -> Option<f64> {
        self.runnable
            .filter(|r| r / f64::from(self.cores.max(1)) >= OVERLOADED_LOAD_PER_CORE)
    }

    /// Whether the machine was overloaded: load per core, or tasks runnable at once per core, at
    /// least [`OVERLOADED_LOAD_PER_CORE`] (the load average lags by about a minute; the runnable
    /// tasks show neighbours that just started), or steal at least [`OVERLOADED_STEAL_PCT`].
    pub fn overloaded(&self) -> bool {
        self.load_per_core() >= OVERLOADED_LOAD_PER_CORE
            || self.crowding_runnable().is_some()
            || self.steal_pct.is_some_and(|s| s >= OVERLOADED_STEAL_PCT)
    }

    /// The sentence a verdict carries when the machine was overloaded (`None` otherwise): `the
    /// machine was overloaded: load 8.9 on 2 cores (the benchmark processes got 41 % of a core);
    /// rerun on a quieter machine`.
    pub fn note(&self) -> Option<String> {
        if !self.overloaded() {
            return None;
        }
        let mut figures = vec![format!(
            "load {:.1} on {} core{}",
            self.load_avg_1m,
            self.cores,
            if self.cores == 1 { "" } else { "s" }
        )];
        if let Some(r) = self.crowding_runnable() {
            figures.push(format!("{r:.0} tasks runnable at once"));
        }
        if let Some(s) = self.steal_pct.filter(|s| *s >= OVERLOADED_STEAL_PCT) {
            figures.push(format!("{s:.0} % of the CPU time stolen"));
        }
        let share = self
            .cpu_share
            .map(|c| {
                format!(
                    " (the benchmark processes got {:.0} % of a core)",
                    c * 100.0
                )
            })
            .unwrap_or_default();
        Some(format!(
            "{NOTE_HEAD}{}{share}{NOTE_TAIL}",
            figures.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: a comparison at load 8.9 on 2 cores said nothing of it. The rule: load per core
    /// at least 2, or steal at least 10 %; the note names the figures and what to do.
    #[test]
    fn overload_is_load_per_core_or_steal_and_the_note_says_what_to_do() {
        let o = |load: f64, steal: Option<f64>| Overload {
            cores: 2,
            load_avg_1m: load,
            runnable: None,
            cpu_share: Some(0.41),
            steal_pct: steal,
        };
        assert!(!o(2.5, None).overloaded());
        assert_eq!(o(2.5, None).note(), None);
        assert!(o(4.0, None).overloaded());
        assert_eq!(
            o(8.9, None).note().unwrap(),
            "the machine was overloaded: load 8.9 on 2 cores (the benchmark processes got 41 % of a core); rerun on a quieter machine"
        );
        assert!(o(1.0, Some(12.0)).overloaded());
        assert!(
            o(1.0, Some(12.0))
                .note()
                .unwrap()
                .contains("load 1.0 on 2 cores, 12 % of the CPU time stolen")
        );
    }
}
