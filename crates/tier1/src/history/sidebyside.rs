//! The `side_by_side` block of `regression_summary.json` (tier1 extension, docs/formats.md): whether
//! the night compared its suspected targets side by side with the anchor's own code, why (or why
//! not), and per target the comparison's verdict, ratios with their intervals and rounds. The
//! verdict a record states must be the one its own intervals give ([`SideBySideCheck::derived`]):
//! a record whose verdict was edited is refused by [`SideBySideBlock::check`].

use crate::json::Finite;
use serde::{Deserialize, Serialize};

/// `side_by_side` of a regression summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SideBySideBlock {
    /// Whether side-by-side confirmation ran for this night.
    pub(crate) enabled: bool,
    /// Why it ran or why it did not (`side_by_side: off`, no anchor commit, not a repository, ...).
    pub(crate) reason: String,
    /// When it should have run but could not (the anchor's commit could not be fetched, a dirty
    /// checkout, ...): the warning shown wherever the night is read, naming the reason and the
    /// remedy. Absent when it ran or was turned off on purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) warning: Option<String>,
    /// The anchor's commit the suspected targets were compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) anchor_commit: Option<String>,
    /// The night's commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) current_commit: Option<String>,
    /// One record per suspected target, in the order they were compared.
    #[serde(default)]
    pub(crate) checks: Vec<SideBySideCheck>,
}

/// The `cause` of a comparison that measured but could not decide.
pub(crate) const TOO_NOISY: &str = "too_noisy";

/// The three verdicts of a side-by-side comparison, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SbsVerdict {
    /// A significant worsening: a confirmed regression.
    Worse,
    /// No worsening as large as the threshold: cleared (the run is never an anchor).
    Same,
    /// Could not build, run or decide: the target stays as the history test left it.
    Unknown,
}

impl SbsVerdict {
    /// The stored name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SbsVerdict::Worse => "worse",
            SbsVerdict::Same => "same",
            SbsVerdict::Unknown => "unknown",
        }
    }
}

/// A ratio current/anchor with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SbsRatio {
    /// The estimate.
    pub(crate) ratio: Finite,
    /// Lower bound.
    pub(crate) low: Finite,
    /// Upper bound.
    pub(crate) high: Finite,
}

/// One suspected target compared side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SideBySideCheck {
    /// Target string.
    pub(crate) target: String,
    /// Target key.
    pub(crate) key: String,
    /// What the history test said before (`regressed`, `unknown`, `within_noise`).
    pub(crate) suspected_as: String,
    /// The comparison's verdict.
    pub(crate) verdict: SbsVerdict,
    /// One sentence: the figures, or why the verdict is unknown.
    pub(crate) reason: String,
    /// Why an `unknown` verdict is unknown (`build_failed`, `too_noisy`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cause: Option<String>,
    /// The threshold (percent) a worsening was weighed against.
    pub(crate) threshold_pct: Finite,
    /// Which metrics decided: `both`, `optimized_time` or `speedup`.
    pub(crate) decided_on: String,
    /// Optimized time current/anchor (above 1: slower).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) optimized_time_ratio: Option<SbsRatio>,
    /// Speedup current/anchor (below 1: a smaller speedup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speedup_ratio: Option<SbsRatio>,
    /// Complete rounds.
    pub(crate) rounds: u32,
    /// Seconds spent measuring.
    pub(crate) seconds: Finite,
    /// Seconds spent building (0 when cached or in place).
    #[serde(default)]
    pub(crate) build_seconds: Option<Finite>,
    /// Evidence-relative directory of the comparison (`<run_id>/sidebyside/<key>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) evidence_dir: Option<String>,
    /// `the machine was overloaded: load 8.9 on 2 cores ...; rerun on a quieter machine`, when
    /// it was over the comparison's rounds (also the end of `reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) overloaded: Option<String>,
}

impl SideBySideCheck {
    /// The verdict the recorded intervals give (`None` for a failure with no intervals): per
    /// deciding metric, the worsening estimate and interval `[lo, hi]` (`ln` of the time ratio,
    /// `−ln` of the speedup ratio) through [`worsening_verdict`]; the target is `worse` when a
    /// metric is, `same` when all are, else `unknown` (docs/regression-model.md). A record
    /// written before issue 37 called an open metric `worse` on `lo > 0` alone; such a `worse`
    /// is still accepted as recorded (a stricter rule can only have made it unknown, which
    /// passes the gate: no one gains by that edit).
    pub(crate) fn derived(&self) -> Option<SbsVerdict> {
        self.derived_by(false)
    }

    /// The threshold on the log scale of a worsening: `ln(1 + threshold_pct / 100)`.
    pub(crate) fn threshold_log(&self) -> f64 {
        (self.threshold_pct.get() / 100.0).ln_1p()
    }

    /// Per metric the comparison decided on (`decided_on`: one of them, or both), its worsening
    /// estimate and interval `(est, lo, hi)` on the log scale (`ln` of the time ratio, `−ln` of
    /// the speedup ratio); `None` for a metric with no recorded interval.
    pub(crate) fn deciding_worsenings(&self) -> Vec<Option<(f64, f64, f64)>> {
        let time = self
            .optimized_time_ratio
            .map(|r| (r.ratio.get().ln(), r.low.get().ln(), r.high.get().ln()));
        let speed = self
            .speedup_ratio
            .map(|r| (-r.ratio.get().ln(), -r.high.get().ln(), -r.low.get().ln()));
        match self.decided_on.as_str() {
            "optimized_time" => vec![time],
            "speedup" => vec![speed],
            _ => vec![time, speed],
        }
    }

    fn derived_by(&self, before_issue_37: bool) -> Option<SbsVerdict> {
        if self.cause.as_deref().is_some_and(|c| c != "too_noisy") {
            return Some(SbsVerdict::Unknown);
        }
        let t = self.threshold_log();
        let each = self.deciding_worsenings();
        if each.iter().any(Option::is_none) {
            return None;
        }
        let verdicts: Vec<SbsVerdict> = each
            .into_iter()
            .flatten()
            .map(|(est, lo, hi)| {
                let v = worsening_verdict(est, lo, hi, t);
                if before_issue_37 && v == SbsVerdict::Unknown && lo > 0.0 {
                    SbsVerdict::Worse
                } else {
                    v
                }
            })
            .collect();
        Some(if verdicts.contains(&SbsVerdict::Worse) {
            SbsVerdict::Worse
        } else if verdicts.iter().all(|v| *v == SbsVerdict::Same) {
            SbsVerdict::Same
        } else {
            SbsVerdict::Unknown
        })
    }

    /// Whether the recorded verdict is the one the intervals give (or, for `worse`, the one the
    /// rule before issue 37 gave).
    fn verdict_holds(&self) -> bool {
        let derived = self.derived().unwrap_or(SbsVerdict::Unknown);
        derived == self.verdict
            || (self.verdict == SbsVerdict::Worse
                && self.derived_by(true) == Some(SbsVerdict::Worse))
    }
}

/// What one metric of a side-by-side comparison says from its worsening estimate `est` and
/// interval `[lo, hi]` (log scale, positive: the current build is worse) and the log threshold
/// `t`: `worse` when the interval lies above `t`, or when the estimate is at or beyond `t` and the
/// interval excludes no change (`lo > 0`: the history test's rule, a change of at least the
/// threshold that is significant); `same` when the interval lies below `t`; else `unknown`. Never
/// `worse` on a wide interval that merely excludes 0 around a smaller estimate (issue 37).
pub(crate) fn worsening_verdict(est: f64, lo: f64, hi: f64, t: f64) -> SbsVerdict {
    // The slack of the history test's rule: a change exactly at the threshold counts despite
    // binary rounding (`crate::regress::significance`).
    const EPS: f64 = 1e-9;
    if lo > t || (est >= t - EPS && lo > 0.0) {
        SbsVerdict::Worse
    } else if hi < t {
        SbsVerdict::Same
    } else {
        SbsVerdict::Unknown
    }
}

impl SideBySideCheck {
    /// One line for people: target, verdict, ratios with their intervals, rounds, and the
    /// reason of an `unknown` verdict.
    pub(crate) fn line(&self) -> String {
        let r = |name: &str, r: Option<SbsRatio>| {
            r.map(|r| format!("{name} x{:.3} [{:.3}, {:.3}]", r.ratio, r.low, r.high))
        };
        let figures: Vec<String> = [
            r("optimized time", self.optimized_time_ratio),
            r("speedup", self.speedup_ratio),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut out = format!(
            "{}: {} (suspected as {}; current/anchor {}; {} rounds)",
            self.target,
            self.verdict.as_str(),
            self.suspected_as,
            if figures.is_empty() {
                "no figures".to_string()
            } else {
                figures.join(", ")
            },
            self.rounds
        );
        if self.verdict == SbsVerdict::Unknown {
            out.push_str(&format!(": {}", self.reason));
        }
        out
    }
}

impl SideBySideBlock {
    /// Why the block is not a valid record (names the field, expected and found values).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.reason.trim().is_empty() {
            return Err(
                "side_by_side.reason: expected why it ran or not, found an empty string".into(),
            );
        }
        if self.enabled && self.warning.is_some() {
            return Err(
                "side_by_side.warning: expected none when enabled is true (it says why it could \
                 not run), found one"
                    .into(),
            );
        }
        if !self.enabled && !self.checks.is_empty() {
            return Err(format!(
                "side_by_side.checks: expected none when enabled is false, found {}",
                self.checks.len()
            ));
        }
        for (i, c) in self.checks.iter().enumerate() {
            let at = format!("side_by_side.checks[{i}] ({})", c.target);
            if !(c.threshold_pct.get().is_finite() && c.threshold_pct > 0.0) {
                return Err(format!(
                    "{at}.threshold_pct: expected a finite number > 0, found {}",
                    c.threshold_pct
                ));
            }
            if !["both", "optimized_time", "speedup"].contains(&c.decided_on.as_str()) {
                return Err(format!(
                    "{at}.decided_on: expected both, optimized_time or speedup, found {:?}",
                    c.decided_on
                ));
            }
            for (name, r) in [
                ("optimized_time_ratio", c.optimized_time_ratio),
                ("speedup_ratio", c.speedup_ratio),
            ] {
                if let Some(r) = r
                    && !(r.low > 0.0
                        && r.low <= r.ratio
                        && r.ratio <= r.high
                        && r.high.get().is_finite())
                {
                    return Err(format!(
                        "{at}.{name}: expected 0 < low <= ratio <= high, found {} [{}, {}]",
                        r.ratio, r.low, r.high
                    ));
                }
            }
            if c.verdict == SbsVerdict::Unknown && c.reason.trim().is_empty() {
                return Err(format!(
                    "{at}.reason: an unknown verdict needs its reason, found an empty string"
                ));
            }
            let derived = c.derived().unwrap_or(SbsVerdict::Unknown);
            if !c.verdict_holds() {
                return Err(format!(
                    "{at}.verdict: recorded {}, but its own intervals give {} (tampered side-by-side record)",
                    c.verdict.as_str(),
                    derived.as_str()
                ));
            }
        }
        Ok(())
    }

    /// The target's decided check (`worse` or `same`), if any.
    pub(crate) fn decided(&self, target: &str) -> Option<&SideBySideCheck> {
        self.checks
            .iter()
            .find(|c| c.target == target && c.verdict != SbsVerdict::Unknown)
    }

    /// The regressed or unknown targets side by side found the same as the anchor's code:
    /// cleared, so the run is never an anchor (a target within noise found the same is no
    /// clearance: the history test did not fail it; nor is one the recheck had cleared already).
    pub(crate) fn cleared(&self) -> impl Iterator<Item = &SideBySideCheck> {
        self.checks.iter().filter(|c| {
            c.verdict == SbsVerdict::Same
                && matches!(c.suspected_as.as_str(), "regressed" | "unknown")
        })
    }

    /// The targets the history test called regressed that the comparison measured but could not
    /// decide (`too_noisy`): their verdict is unknown, never a regression on noise alone.
    pub(crate) fn unconfirmed(&self) -> impl Iterator<Item = &SideBySideCheck> {
        self.checks.iter().filter(|c| c.is_unconfirmed())
    }
}

impl SideBySideCheck {
    /// A regression of the history test that the comparison measured and could not decide.
    pub(crate) fn is_unconfirmed(&self) -> bool {
        self.verdict == SbsVerdict::Unknown
            && self.suspected_as == "regressed"
            && self.cause.as_deref() == Some(TOO_NOISY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(verdict: SbsVerdict, time: (f64, f64, f64)) -> SideBySideCheck {
        SideBySideCheck {
            target: "t:a".into(),
            key: "a".into(),
            suspected_as: "unknown".into(),
            verdict,
            reason: "figures".into(),
            cause: None,
            threshold_pct: 5.0.into(),
            decided_on: "both".into(),
            optimized_time_ratio: Some(SbsRatio {
                ratio: time.0.into(),
                low: time.1.into(),
                high: time.2.into(),
            }),
            speedup_ratio: Some(SbsRatio {
                ratio: 1.0.into(),
                low: 0.99.into(),
                high: 1.01.into(),
            }),
            rounds: 10,
            seconds: 1.0.into(),
            build_seconds: Some(0.0.into()),
            evidence_dir: None,
            overloaded: None,
        }
    }

    fn block(c: SideBySideCheck) -> SideBySideBlock {
        SideBySideBlock {
            enabled: true,
            reason: "on".into(),
            warning: None,
            anchor_commit: None,
            current_commit: None,
            checks: vec![c],
        }
    }

    #[test]
    fn verdicts_are_rederived_from_the_intervals() {
        let same = check(SbsVerdict::Same, (1.0, 0.99, 1.01));
        assert_eq!(same.derived(), Some(SbsVerdict::Same));
        assert!(block(same.clone()).check().is_ok());
        let worse = check(SbsVerdict::Worse, (1.3, 1.29, 1.31));
        assert_eq!(worse.derived(), Some(SbsVerdict::Worse));
        let open = check(SbsVerdict::Unknown, (1.0, 0.9, 1.1));
        assert_eq!(open.derived(), Some(SbsVerdict::Unknown));
        let e = block(SideBySideCheck {
            verdict: SbsVerdict::Same,
            ..worse
        })
        .check()
        .unwrap_err();
        assert!(
            e.contains("checks[0] (t:a).verdict: recorded same, but its own intervals give worse"),
            "{e}"
        );
        let failed = SideBySideCheck {
            cause: Some("build_failed".into()),
            optimized_time_ratio: None,
            speedup_ratio: None,
            ..open
        };
        assert_eq!(failed.derived(), Some(SbsVerdict::Unknown));
        let e = block(SideBySideCheck {
            verdict: SbsVerdict::Same,
            ..failed
        })
        .check()
        .unwrap_err();
        assert!(
            e.contains("recorded same, but its own intervals give unknown"),
            "{e}"
        );
    }

    /// Issue 37: a record is `worse` only when a metric's estimate is beyond the threshold and
    /// its interval excludes no change (or its whole interval lies beyond the threshold); a wide
    /// interval that merely excludes no change around a smaller estimate is `unknown`. Records
    /// written by the rule before stay valid: their `worse` is still accepted.
    #[test]
    fn worse_needs_the_estimate_beyond_the_threshold() {
        let c = |verdict, time| SideBySideCheck {
            decided_on: "optimized_time".into(),
            ..check(verdict, time)
        };
        // The issue's optimized time: its interval includes no change.
        assert_eq!(
            c(SbsVerdict::Unknown, (1.4904, 0.4485, 3.9121)).derived(),
            Some(SbsVerdict::Unknown)
        );
        // Estimate 3 %, interval [1.002, 1.30]: excludes no change, but not a 5 % worsening.
        let wide = c(SbsVerdict::Unknown, (1.03, 1.002, 1.30));
        assert_eq!(wide.derived(), Some(SbsVerdict::Unknown));
        assert!(block(wide.clone()).check().is_ok());
        // ... and a record of the earlier rule that called it worse is still accepted.
        assert!(
            block(SideBySideCheck {
                verdict: SbsVerdict::Worse,
                ..wide
            })
            .check()
            .is_ok()
        );
        // Estimate 8 %, interval above no change: worse.
        let worse = c(SbsVerdict::Worse, (1.08, 1.01, 1.20));
        assert_eq!(worse.derived(), Some(SbsVerdict::Worse));
        assert!(
            block(SideBySideCheck {
                verdict: SbsVerdict::Same,
                ..worse
            })
            .check()
            .is_err()
        );
        // The issue's speedup (decided on it): its whole interval is beyond the threshold.
        let speed = SideBySideCheck {
            decided_on: "speedup".into(),
            speedup_ratio: Some(SbsRatio {
                ratio: 0.6308.into(),
                low: 0.3526.into(),
                high: 0.8839.into(),
            }),
            ..check(SbsVerdict::Worse, (1.0, 0.99, 1.01))
        };
        assert_eq!(speed.derived(), Some(SbsVerdict::Worse));
    }

    #[test]
    fn bad_fields_are_named() {
        let mut c = check(SbsVerdict::Same, (1.0, 1.1, 1.01));
        let e = block(c.clone()).check().unwrap_err();
        assert!(
            e.contains("optimized_time_ratio: expected 0 < low <= ratio <= high"),
            "{e}"
        );
        c.optimized_time_ratio = None;
        c.decided_on = "all".into();
        let e = block(c).check().unwrap_err();
        assert!(e.contains("decided_on: expected both"), "{e}");
        let off = SideBySideBlock {
            enabled: false,
            ..block(check(SbsVerdict::Same, (1.0, 0.99, 1.01)))
        };
        assert!(
            off.check()
                .unwrap_err()
                .contains("expected none when enabled is false")
        );
    }
}
