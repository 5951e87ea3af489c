//! Where a run's time went, per target and per phase: its measurement, the further passes of a
//! run that may become the anchor, its recheck and its side-by-side comparison (measuring, and
//! the builds it needed). Printed in the run's JSON (`timings`) and on stderr, so a user sees
//! which target and which phase make a night long.

use crate::bench::options::PassSeconds;
use crate::history::SideBySideBlock;
use serde::Serialize;

/// One target's seconds, by phase (`null`: the phase did not run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TargetTimings {
    /// Target key.
    pub(crate) key: String,
    /// Its measurement (the first pass).
    pub(crate) measure_s: f64,
    /// The further passes of a run that may become the anchor (`anchor_passes` − 1 of them).
    pub(crate) anchor_passes_s: Option<f64>,
    /// Its recheck (one more measurement of a suspected target).
    pub(crate) recheck_s: Option<f64>,
    /// Its side-by-side comparison with the anchor's own code: the rounds.
    pub(crate) side_by_side_s: Option<f64>,
    /// The builds the comparison needed (0 when the build cache or the checkout served them).
    pub(crate) side_by_side_build_s: Option<f64>,
    /// Every phase together.
    pub(crate) total_s: f64,
}

/// The timings of every measured target, in suite order: `main` from the run's measurement,
/// `rechecks` (key, seconds), and the side-by-side block of the comparison.
pub(crate) fn collect(
    main: &[PassSeconds],
    rechecks: &[(String, f64)],
    side_by_side: Option<&SideBySideBlock>,
) -> Vec<TargetTimings> {
    main.iter()
        .map(|p| {
            let measure_s = p.passes.first().copied().unwrap_or(0.0);
            let anchor_passes_s = (p.passes.len() > 1).then(|| p.passes[1..].iter().sum());
            let recheck_s = sum(rechecks.iter().filter(|r| r.0 == p.key).map(|r| r.1));
            let checks: Vec<_> = side_by_side
                .map(|b| b.checks.iter().filter(|c| c.key == p.key).collect())
                .unwrap_or_default();
            let side_by_side_s = sum(checks.iter().map(|c| f64::from(c.seconds)));
            let side_by_side_build_s =
                sum(checks.iter().filter_map(|c| c.build_seconds.map(f64::from)));
            let total_s = measure_s
                + [
                    anchor_passes_s,
                    recheck_s,
                    side_by_side_s,
                    side_by_side_build_s,
                ]
                .into_iter()
                .flatten()
                .sum::<f64>();
            TargetTimings {
                key: p.key.clone(),
                measure_s: round(measure_s),
                anchor_passes_s: anchor_passes_s.map(round),
                recheck_s: recheck_s.map(round),
                side_by_side_s: side_by_side_s.map(round),
                side_by_side_build_s: side_by_side_build_s.map(round),
                total_s: round(total_s),
            }
        })
        .collect()
}

/// The sum of `xs`, `None` when there are none.
fn sum(xs: impl Iterator<Item = f64>) -> Option<f64> {
    xs.fold(None, |acc, x| Some(acc.unwrap_or(0.0) + x))
}

/// Seconds to the millisecond (what a person compares; the JSON stays short).
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One stderr line per target: `cc_primes: 41.2 s (measure 31.0 s, recheck 10.2 s)`.
pub(crate) fn log(timings: &[TargetTimings]) {
    for t in timings {
        tracing::info!(target = %t.key, "time: {}", describe(t));
    }
}

/// A target's time in words.
pub(crate) fn describe(t: &TargetTimings) -> String {
    let phases: Vec<String> = [
        ("measure", Some(t.measure_s)),
        ("anchor passes", t.anchor_passes_s),
        ("recheck", t.recheck_s),
        ("side by side", t.side_by_side_s),
        (
            "side-by-side builds",
            t.side_by_side_build_s.filter(|s| *s > 0.0),
        ),
    ]
    .into_iter()
    .filter_map(|(name, s)| s.map(|s| format!("{name} {s:.1} s")))
    .collect();
    format!("{:.1} s ({})", t.total_s, phases.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{SbsVerdict, SideBySideCheck};

    fn check(key: &str, seconds: f64, build: Option<f64>) -> SideBySideCheck {
        SideBySideCheck {
            target: format!("t:{key}"),
            key: key.into(),
            suspected_as: "regressed".into(),
            verdict: SbsVerdict::Same,
            reason: String::new(),
            cause: None,
            threshold_pct: 5.0.into(),
            decided_on: "both".into(),
            optimized_time_ratio: None,
            speedup_ratio: None,
            rounds: 10,
            seconds: seconds.into(),
            build_seconds: build.map(Into::into),
            evidence_dir: None,
            overloaded: None,
        }
    }

    #[test]
    fn each_phase_is_summed_per_target_and_absent_phases_are_null() {
        let main = [
            PassSeconds {
                key: "a".into(),
                passes: vec![2.0, 3.0, 4.0],
            },
            PassSeconds {
                key: "b".into(),
                passes: vec![1.5],
            },
        ];
        let rechecks = [("b".to_string(), 1.3)];
        let block = SideBySideBlock {
            enabled: true,
            reason: String::new(),
            anchor_commit: None,
            current_commit: None,
            checks: vec![check("b", 6.0, Some(0.5))],
            warning: None,
        };
        let t = collect(&main, &rechecks, Some(&block));
        assert_eq!(t[0].key, "a");
        assert_eq!(
            (t[0].measure_s, t[0].anchor_passes_s, t[0].recheck_s),
            (2.0, Some(7.0), None)
        );
        assert_eq!((t[0].side_by_side_s, t[0].total_s), (None, 9.0));
        assert_eq!(
            (t[1].measure_s, t[1].anchor_passes_s, t[1].recheck_s),
            (1.5, None, Some(1.3))
        );
        assert_eq!(
            (t[1].side_by_side_s, t[1].side_by_side_build_s, t[1].total_s),
            (Some(6.0), Some(0.5), 9.3)
        );
        assert_eq!(
            describe(&t[1]),
            "9.3 s (measure 1.5 s, recheck 1.3 s, side by side 6.0 s, side-by-side builds 0.5 s)"
        );
        let json = serde_json::to_value(&t[0]).unwrap();
        assert_eq!(json["recheck_s"], serde_json::Value::Null);
    }
}
