//! The machine's state around each target, recorded in the evidence: CPU load average and clock
//! frequency (where the kernel exposes them), and on a GPU the NVML clocks, temperature and
//! throttle reasons. A target measured while the GPU throttled is re-measured once, then
//! recorded as throttled (and compared by the reference rules only, never an anchor).

use crate::json::Finite;
use serde::{Deserialize, Serialize};

/// NVML throttle reasons that slow the device down (idle, application-clock, sync-boost and
/// display reasons do not).
pub(crate) const THROTTLING_REASONS: [&str; 5] = [
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
    "sw_power_cap",
];

/// One GPU's state (NVML).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuState {
    /// Current SM clock (MHz).
    #[serde(default)]
    pub(crate) sm_clock_mhz: Option<u32>,
    /// Maximum SM clock (MHz).
    #[serde(default)]
    pub(crate) max_sm_clock_mhz: Option<u32>,
    /// Current memory clock (MHz).
    #[serde(default)]
    pub(crate) memory_clock_mhz: Option<u32>,
    /// Core temperature (°C).
    #[serde(default)]
    pub(crate) temperature_c: Option<u32>,
    /// Current throttle reasons (NVML names, lower case).
    #[serde(default)]
    pub(crate) throttle_reasons: Vec<String>,
}

impl GpuState {
    /// The throttle reasons that slow the device ([`THROTTLING_REASONS`]).
    pub(crate) fn throttling(&self) -> Vec<&str> {
        self.throttle_reasons
            .iter()
            .map(String::as_str)
            .filter(|r| THROTTLING_REASONS.contains(r))
            .collect()
    }
}

/// The machine at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MachineState {
    /// One-minute load average (`/proc/loadavg`).
    #[serde(default)]
    pub(crate) load_avg_1m: Option<Finite>,
    /// Mean current CPU clock over the cores (MHz, `/proc/cpuinfo` or cpufreq).
    #[serde(default)]
    pub(crate) cpu_mhz: Option<Finite>,
    /// Online cores (`crate::bench::load::cores`); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores: Option<u32>,
    /// Tasks runnable at this instant, the reader included (`procs_running` of `/proc/stat`,
    /// `crate::bench::load::runnable`); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) runnable: Option<u32>,
    /// The GPU, on the CUDA backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gpu: Option<GpuState>,
}

impl MachineState {
    /// The CPU side now (the backend adds the GPU side).
    pub(crate) fn cpu_now() -> MachineState {
        MachineState {
            load_avg_1m: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|s| parse_loadavg(&s))
                .map(Finite::from),
            cpu_mhz: cpu_mhz().map(Finite::from),
            cores: u32::try_from(crate::bench::load::cores()).ok(),
            runnable: crate::bench::load::runnable(),
            gpu: None,
        }
    }

    /// Throttle reasons that slow the device, if any.
    pub(crate) fn throttling(&self) -> Vec<&str> {
        self.gpu
            .as_ref()
            .map(GpuState::throttling)
            .unwrap_or_default()
    }
}

/// The state before and after one measurement of a target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineWindow {
    /// Before the first timed round.
    pub(crate) before: MachineState,
    /// After the last timed round.
    pub(crate) after: MachineState,
}

impl MachineWindow {
    /// How busy the machine was: the larger load average of either end, and the fewer tasks
    /// runnable at the two ends (a burst at one end is not a crowd; neighbours that started a
    /// moment ago, which the load average has not caught up with, show at both), over the cores
    /// (`None` without a load average or the cores).
    pub(crate) fn overload(&self) -> Option<crate::history::overload::Overload> {
        let load = [self.before.load_avg_1m, self.after.load_avg_1m]
            .into_iter()
            .flatten()
            .map(f64::from)
            .reduce(f64::max)?;
        let runnable = self
            .before
            .runnable
            .zip(self.after.runnable)
            .map(|(b, a)| f64::from(b.min(a)));
        Some(crate::history::overload::Overload {
            cores: self.before.cores.or(self.after.cores)?,
            load_avg_1m: load,
            runnable,
            cpu_share: None,
            steal_pct: None,
        })
    }

    /// Throttle reasons seen at either end.
    pub(crate) fn throttling(&self) -> Vec<&str> {
        let mut r = self.before.throttling();
        for x in self.after.throttling() {
            if !r.contains(&x) {
                r.push(x);
            }
        }
        r
    }
}

fn parse_loadavg(s: &str) -> Option<f64> {
    s.split_whitespace()
        .next()?
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

fn cpu_mhz() -> Option<f64> {
    // cpufreq is exact where present; /proc/cpuinfo's "cpu MHz" is the fallback (VMs often have
    // only that, sometimes a fixed value).
    let mut freqs = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in dir.flatten() {
            let p = e.path().join("cpufreq/scaling_cur_freq");
            if let Some(khz) = std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
            {
                freqs.push(khz / 1000.0);
            }
        }
    }
    if freqs.is_empty() {
        freqs = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .map(|s| parse_cpuinfo_mhz(&s))
            .unwrap_or_default();
    }
    crate::stats::mean(&freqs).filter(|m| m.is_finite() && *m > 0.0)
}

fn parse_cpuinfo_mhz(s: &str) -> Vec<f64> {
    s.lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split_once(':')?.1.trim().parse::<f64>().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        assert_eq!(parse_loadavg("0.52 0.58 0.59 2/361 12345\n"), Some(0.52));
        assert_eq!(parse_loadavg(""), None);
        let info = "processor\t: 0\ncpu MHz\t\t: 2000.000\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n";
        assert_eq!(parse_cpuinfo_mhz(info), vec![2000.0, 3000.5]);
        let now = MachineState::cpu_now();
        assert!(now.gpu.is_none());
    }

    /// Issue 37: four CPU-bound neighbours started with the night; the one-minute load average
    /// still read 1.2 when a target was measured (it lags by about a minute), so the measurement
    /// was not called overloaded and its reading `improved +19.8 %` was claimed. The tasks
    /// runnable at both ends of the window (`procs_running`, 5 on 2 cores) say what the load
    /// average has not caught up with yet; one end alone (a burst) does not.
    #[test]
    fn tasks_runnable_at_both_ends_make_the_window_overloaded_before_the_load_average_rises() {
        let window = |before: u32, after: u32| -> MachineWindow {
            serde_json::from_value(serde_json::json!({
                "before": {"load_avg_1m": 1.2, "cores": 2, "runnable": before},
                "after": {"load_avg_1m": 1.3, "cores": 2, "runnable": after},
            }))
            .expect("a window with runnable tasks")
        };
        let crowded = window(5, 6).overload().unwrap();
        assert!(crowded.overloaded(), "{crowded:?}");
        assert_eq!(
            crowded.note().unwrap(),
            "the machine was overloaded: load 1.3 on 2 cores, 5 tasks runnable at once; rerun on a quieter machine"
        );
        // A burst at one end, or a neighbour per core: not overloaded.
        assert!(!window(5, 1).overload().unwrap().overloaded());
        assert!(!window(2, 3).overload().unwrap().overloaded());
        // An older result without the field: the load average alone, as before.
        let old: MachineWindow = serde_json::from_value(serde_json::json!({
            "before": {"load_avg_1m": 1.2, "cores": 2}, "after": {"load_avg_1m": 4.5, "cores": 2}
        }))
        .unwrap();
        assert!(old.overload().unwrap().overloaded());
        assert_eq!(old.overload().unwrap().runnable, None);
        assert!(MachineState::cpu_now().runnable.is_some_and(|r| r >= 1));
    }

    #[test]
    fn only_slowing_reasons_count_as_throttling() {
        let gpu = |r: &[&str]| MachineState {
            gpu: Some(GpuState {
                throttle_reasons: r.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let w = MachineWindow {
            before: gpu(&["gpu_idle", "applications_clocks_setting"]),
            after: gpu(&["sw_power_cap", "gpu_idle"]),
        };
        assert_eq!(w.throttling(), ["sw_power_cap"]);
        assert!(MachineWindow::default().throttling().is_empty());
    }
}
