//! One round of a side-by-side comparison as recorded (`rounds.json`): which build ran first,
//! each build's estimate, and how busy the machine was ([`RoundMachine`]); and the balanced order
//! of the builds ([`Order`]): rounds come in pairs, the first of a pair draws which build goes
//! first (seeded) and the second reverses it (A B, B A), so every pair of rounds has both orders
//! and an advantage of a position in the round (the first invocation after the parent slept, the
//! second after the first warmed the caches, a burst of a neighbour that starts mid-round) adds
//! as much to one build as to the other (issue 37: with a coin per round, the anchor went first
//! in 8 of 10 rounds of a night that read identical code `worse`).

use crate::bench::load::{self, CpuTicks};
use crate::bench::rng::Rng;
use crate::history::overload::Overload;
use crate::sidebyside::outcome::Side;
use serde::Serialize;

/// The balanced order of the two builds, round by round.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    rng: Rng,
    last: usize,
}

impl Order {
    /// The order drawn from `seed`.
    pub(crate) fn new(seed: u64) -> Order {
        Order {
            rng: Rng::new(seed, 0x7369_6465_6279_7369),
            last: 0,
        }
    }

    /// Which build (0 or 1) goes first in round `n` (1-based): drawn in odd rounds, the other
    /// one in even rounds.
    pub(crate) fn first(&mut self, n: u32) -> usize {
        if n % 2 == 1 {
            self.last = self.rng.below(2) as usize;
            self.last
        } else {
            1 - self.last
        }
    }
}

/// One invocation reduced to its best verified variant (fastest samples), with what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Estimate {
    /// The variant.
    pub(crate) variant: String,
    /// Its speedup over the baseline (fastest baseline sample / fastest of its samples).
    pub(crate) speedup: f64,
    /// Its fastest sample (ms).
    pub(crate) optimized_ms: f64,
}

/// What one invocation cost: its wall time and the CPU time its processes got.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Cost {
    /// Wall seconds from start to exit.
    pub(crate) wall_s: f64,
    /// CPU seconds of its processes (user + system), when readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_s: Option<f64>,
}

impl Cost {
    /// CPU time against wall time (1: one full core).
    pub(crate) fn cpu_share(&self) -> Option<f64> {
        self.cpu_s
            .filter(|_| self.wall_s > 0.0)
            .map(|c| c / self.wall_s)
    }
}

/// How busy the machine was during one round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct RoundMachine {
    /// One-minute load average at the round's end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) load_avg_1m: Option<f64>,
    /// Tasks runnable at the round's end, this process included (`procs_running`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runnable: Option<u32>,
    /// Online cores.
    pub(crate) cores: u32,
    /// Percent of the round's CPU time stolen by the hypervisor (where reported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) steal_pct: Option<f64>,
    /// The current build's invocation.
    pub(crate) current: Cost,
    /// The anchor build's invocation.
    pub(crate) anchor: Cost,
}

impl RoundMachine {
    /// The round as an [`Overload`] record (`None` without a load average).
    pub(crate) fn overload(&self) -> Option<Overload> {
        let shares: Vec<f64> = [self.current, self.anchor]
            .iter()
            .filter_map(Cost::cpu_share)
            .collect();
        Some(Overload {
            cores: self.cores,
            load_avg_1m: self.load_avg_1m?,
            runnable: self.runnable.map(f64::from),
            cpu_share: crate::stats::mean(&shares),
            steal_pct: self.steal_pct,
        })
    }
}

/// The machine over the rounds of a comparison: the median load and the median tasks runnable
/// at the rounds' ends (a burst in one round does not make the whole comparison overloaded), the
/// median CPU share of the invocations, the largest steal; `None` without any load reading.
pub(crate) fn over_rounds(rounds: &[Round]) -> Option<Overload> {
    let each: Vec<Overload> = rounds.iter().filter_map(|r| r.machine.overload()).collect();
    let median = |xs: Vec<f64>| crate::stats::median(&xs);
    let first = each.first()?;
    Some(Overload {
        cores: first.cores,
        load_avg_1m: median(each.iter().map(|o| o.load_avg_1m).collect())?,
        runnable: median(each.iter().filter_map(|o| o.runnable).collect()),
        cpu_share: median(each.iter().filter_map(|o| o.cpu_share).collect()),
        steal_pct: each.iter().filter_map(|o| o.steal_pct).reduce(f64::max),
    })
}

/// The readings taken around a round.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Readings {
    ticks: Option<CpuTicks>,
    cores: u32,
}

impl Readings {
    /// The readings at a round's start.
    pub(crate) fn start() -> Readings {
        Readings {
            ticks: CpuTicks::now(),
            cores: u32::try_from(load::cores()).unwrap_or(u32::MAX),
        }
    }

    /// The round's machine record at its end, with both invocations' costs.
    pub(crate) fn finish(self, current: Cost, anchor: Cost) -> RoundMachine {
        let steal_pct = self
            .ticks
            .zip(CpuTicks::now())
            .and_then(|(a, b)| a.steal_pct_until(b));
        RoundMachine {
            load_avg_1m: load::load_avg_1m(),
            runnable: load::runnable(),
            cores: self.cores,
            steal_pct,
            current,
            anchor,
        }
    }
}

/// One round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Round {
    /// 1-based.
    pub(crate) round: u32,
    /// The build invoked first.
    pub(crate) first: Side,
    /// The current build's estimate.
    pub(crate) current: Estimate,
    /// The anchor build's estimate.
    pub(crate) anchor: Estimate,
    /// How busy the machine was.
    pub(crate) machine: RoundMachine,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: every pair of rounds has both orders, whatever the seed.
    #[test]
    fn every_pair_of_rounds_has_both_orders() {
        for seed in 0..200u64 {
            let mut o = Order::new(seed);
            let firsts: Vec<usize> = (1..=20).map(|n| o.first(n)).collect();
            for pair in firsts.chunks(2) {
                assert_ne!(pair[0], pair[1], "seed {seed}: {firsts:?}");
            }
            assert_eq!(firsts.iter().filter(|f| **f == 0).count(), 10);
        }
        // Seeded: the same seed gives the same order; the draws differ between seeds.
        let draw = |seed| {
            let mut o = Order::new(seed);
            (1..=20).map(|n| o.first(n)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert!((0..20u64).any(|s| draw(s) != draw(7)));
    }

    fn cost(wall_s: f64, cpu_s: f64) -> Cost {
        Cost {
            wall_s,
            cpu_s: Some(cpu_s),
        }
    }

    fn round(load: f64, steal: Option<f64>) -> Round {
        let e = Estimate {
            variant: "v".into(),
            speedup: 2.0,
            optimized_ms: 1.0,
        };
        Round {
            round: 1,
            first: Side::Current,
            current: e.clone(),
            anchor: e,
            machine: RoundMachine {
                load_avg_1m: Some(load),
                runnable: None,
                cores: 2,
                steal_pct: steal,
                current: cost(1.0, 0.4),
                anchor: cost(2.0, 1.0),
            },
        }
    }

    #[test]
    fn the_rounds_machine_is_the_median_load_and_the_largest_steal() {
        assert_eq!(cost(2.0, 1.0).cpu_share(), Some(0.5));
        assert_eq!(
            Cost {
                wall_s: 0.0,
                cpu_s: Some(1.0)
            }
            .cpu_share(),
            None
        );
        let rounds = [
            round(1.0, None),
            round(9.0, Some(4.0)),
            round(5.0, Some(1.0)),
        ];
        let o = over_rounds(&rounds).unwrap();
        assert_eq!((o.cores, o.load_avg_1m, o.steal_pct), (2, 5.0, Some(4.0)));
        assert!((o.cpu_share.unwrap() - 0.45).abs() < 1e-12);
        // One burst round among quiet ones does not make the comparison overloaded.
        let quiet = [round(1.0, None), round(9.0, None), round(1.5, None)];
        assert!(!over_rounds(&quiet).unwrap().overloaded());
        // Neighbours that started a moment ago: the load average still low, the runnable tasks
        // at most rounds' ends twice the cores (the median, 5 on 2 cores).
        let crowded: Vec<Round> = [5, 1, 6]
            .into_iter()
            .map(|n| {
                let mut r = round(1.0, None);
                r.machine.runnable = Some(n);
                r
            })
            .collect();
        let o = over_rounds(&crowded).unwrap();
        assert_eq!(o.runnable, Some(5.0));
        assert!(o.overloaded(), "{o:?}");
        assert!(over_rounds(&[]).is_none());
        assert!(
            Readings::start()
                .finish(cost(1.0, 1.0), cost(1.0, 1.0))
                .cores
                >= 1
        );
    }
}
