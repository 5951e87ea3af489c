//! What a side-by-side comparison says and how it decides. Per round `r` the current and the
//! anchor build each give an optimized time `o` and a speedup `s`; the worsening of round `r` is
//! `ln(o_cur / o_anc)` for the time and `ln(s_anc / s_cur)` for the speedup (positive: the current
//! build is worse). Each metric's shift is the Hodges-Lehmann estimate of its worsenings with the
//! signed-rank interval (distribution-free; valid because the order of the two builds in a round
//! is random, so under "no difference" a worsening is as likely as its negative).
//!
//! With `t = ln(1 + threshold_pct / 100)`: a metric is settled `worse` once its interval lies
//! above `t`, `same` once it lies below `t`. Rounds stop when a metric is worse, when both are
//! same, when both intervals are narrower than the precision asked for, or when the budget is
//! spent; a metric still open then is `worse` when its interval lies above 0 (a significant
//! worsening that may reach the threshold) and undecided otherwise. The target is `worse` when a
//! metric is, `same` when both are, `unknown` otherwise, or when a build or a run failed.

use crate::json::{ser_finite, ser_finite_opt};
use crate::stats::{ShiftCi, hodges_lehmann};
use serde::{Deserialize, Serialize};

/// `schema` of a [`SideBySideOutcome`].
pub const SIDEBYSIDE_SCHEMA: &str = "tier1.sidebyside.v1";

/// The verdict of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A significant worsening of the current build (see the module docs).
    Worse,
    /// No worsening as large as the threshold.
    Same,
    /// Could not build, run or decide within the budget; never a pass.
    Unknown,
}

/// Which build of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The code under test (tonight's commit, or the commit a bisection step tests).
    Current,
    /// The reference code (the anchor's commit, or the known good commit).
    Anchor,
}

impl Side {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Current => "current",
            Side::Anchor => "anchor",
        }
    }
}

/// Why an outcome is `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The request names no such target or profile, or a value is out of range.
    InvalidRequest,
    /// The repository root is not a git repository.
    NotARepository,
    /// A commit is not in the repository.
    CommitNotFound,
    /// The worktree could not be created at the commit.
    CheckoutFailed,
    /// A cached worktree or build is not exactly the commit's (moved HEAD, local changes, changed
    /// outputs).
    DirtyWorktree,
    /// The build step failed (the reason ends with the tail of its log).
    BuildFailed,
    /// An invocation failed: exit status, timeout, malformed or unverified result.
    CommandFailed,
    /// The budget ran out before the intervals could decide.
    TooNoisy,
    /// The evidence directory could not be written.
    Evidence,
    /// SIGINT or SIGTERM arrived.
    Cancelled,
}

/// A failure that makes a comparison `unknown`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// What kind of failure.
    pub cause: Cause,
    /// The build it is about, when it is about one.
    pub side: Option<Side>,
    /// What happened, naming the file, commit or command with expected and found values.
    pub message: String,
}

impl Problem {
    /// A problem of `cause` about `side`.
    pub fn new(cause: Cause, side: Option<Side>, message: String) -> Problem {
        Problem {
            cause,
            side,
            message,
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// How long a comparison may measure and when it may stop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Wall-clock seconds of measuring (soft: no round starts after it).
    pub seconds: f64,
    /// Fewest rounds before any decision (at least 6: a 95 % interval needs them).
    pub min_rounds: u32,
    /// Most rounds.
    pub max_rounds: u32,
    /// Stop once both intervals are within ± this percent.
    pub precision_pct: f64,
    /// Confidence level of the intervals.
    pub confidence: f64,
}

impl Budget {
    /// The budget of one target of `profile`: its `budget_s` and `precision_pct`, 8 to 200 rounds,
    /// 95 % intervals.
    pub fn for_profile(profile: &crate::suite::Profile) -> Budget {
        Budget {
            seconds: profile.budget_s,
            min_rounds: 8,
            max_rounds: 200,
            precision_pct: profile.precision_pct,
            confidence: 0.95,
        }
    }

    /// Why the budget is unusable, if it is.
    pub fn check(&self) -> Result<(), String> {
        let finite_pos = |x: f64| x.is_finite() && x > 0.0;
        if !finite_pos(self.seconds) || !finite_pos(self.precision_pct) {
            return Err(format!(
                "budget: seconds and precision_pct must be finite numbers > 0, found {} and {}",
                self.seconds, self.precision_pct
            ));
        }
        if self.min_rounds < 6 || self.max_rounds < self.min_rounds {
            return Err(format!(
                "budget: expected 6 <= min_rounds <= max_rounds, found {} and {}",
                self.min_rounds, self.max_rounds
            ));
        }
        if !(self.confidence > 0.5 && self.confidence < 1.0) {
            return Err(format!(
                "budget: confidence must lie between 0.5 and 1 (exclusive), found {}",
                self.confidence
            ));
        }
        Ok(())
    }
}

/// A ratio current/anchor with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioCi {
    /// The estimate.
    #[serde(serialize_with = "ser_finite")]
    pub ratio: f64,
    /// Lower bound.
    #[serde(serialize_with = "ser_finite")]
    pub low: f64,
    /// Upper bound.
    #[serde(serialize_with = "ser_finite")]
    pub high: f64,
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The intervals settled the verdict.
    Decided,
    /// Both intervals reached the precision asked for.
    Precise,
    /// The seconds of the budget were spent.
    BudgetSeconds,
    /// The rounds of the budget were spent.
    BudgetRounds,
    /// A build or an invocation failed, or the run was cancelled.
    Failure,
}

/// The result of one side-by-side comparison (`regression_summary.json` extension, docs/formats.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideBySideOutcome {
    /// [`SIDEBYSIDE_SCHEMA`].
    pub schema: String,
    /// Target key.
    pub target: String,
    /// Profile.
    pub profile: String,
    /// The commit measured as current.
    pub current_commit: String,
    /// The commit measured as anchor.
    pub anchor_commit: String,
    /// The verdict.
    pub verdict: Verdict,
    /// One sentence for people: the figures, or why the verdict is unknown.
    pub reason: String,
    /// Why the verdict is unknown (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// Which build an unknown verdict is about, when one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// Threshold (percent) a worsening is weighed against.
    #[serde(serialize_with = "ser_finite")]
    pub threshold_pct: f64,
    /// Confidence level of the intervals.
    #[serde(serialize_with = "ser_finite")]
    pub confidence: f64,
    /// Optimized time current/anchor (above 1: the current build is slower).
    #[serde(default)]
    pub optimized_time_ratio: Option<RatioCi>,
    /// Speedup current/anchor (below 1: the current build's speedup is smaller).
    #[serde(default)]
    pub speedup_ratio: Option<RatioCi>,
    /// Complete rounds (one invocation of each build).
    pub rounds: u32,
    /// Seconds spent measuring (builds excluded).
    #[serde(serialize_with = "ser_finite")]
    pub seconds: f64,
    /// Why the rounds stopped.
    #[serde(default)]
    pub stopped_by: Option<Stop>,
    /// Seed of the shuffled order of the builds in each round.
    pub order_seed: u64,
    /// The builds used (current first), as far as they were made.
    #[serde(default)]
    pub builds: Vec<crate::sidebyside::build_cache::BuildRecord>,
    /// The evidence directory of this comparison (raw results of both builds, this outcome).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_dir: Option<String>,
    /// Seconds the builds took (0 when both came from the cache).
    #[serde(default, serialize_with = "ser_finite_opt")]
    pub build_seconds: Option<f64>,
}

/// The state of one metric after some rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricState {
    /// Shift of the worsenings (log scale) with its interval.
    pub ci: ShiftCi,
    /// Settled already (`Some(Worse)` or `Some(Same)`) or still open.
    pub settled: Option<Verdict>,
}

/// The log threshold `ln(1 + pct / 100)`.
pub fn log_threshold(threshold_pct: f64) -> f64 {
    (threshold_pct / 100.0).ln_1p()
}

/// A metric's state from its worsenings (`None` with too few rounds for an interval).
pub fn metric(worsenings: &[f64], threshold_pct: f64, level: f64) -> Option<MetricState> {
    let ci = hodges_lehmann(worsenings, level)?;
    let t = log_threshold(threshold_pct);
    let settled = if ci.low > t {
        Some(Verdict::Worse)
    } else if ci.high < t {
        Some(Verdict::Same)
    } else {
        None
    };
    Some(MetricState { ci, settled })
}

/// Whether the rounds may stop now, and why: a metric settled worse, both settled same, or both
/// intervals within `precision_pct` (half the interval's width, in percent of the ratio).
pub fn early_stop(metrics: &[MetricState], precision_pct: f64) -> Option<Stop> {
    if metrics.iter().any(|m| m.settled == Some(Verdict::Worse))
        || metrics.iter().all(|m| m.settled == Some(Verdict::Same))
    {
        return Some(Stop::Decided);
    }
    let p = log_threshold(precision_pct);
    metrics
        .iter()
        .all(|m| (m.ci.high - m.ci.low) / 2.0 <= p)
        .then_some(Stop::Precise)
}

/// The verdict when the rounds stop (see the module docs).
pub fn final_verdict(metrics: &[MetricState]) -> Verdict {
    let each: Vec<Verdict> = metrics
        .iter()
        .map(|m| match m.settled {
            Some(v) => v,
            None if m.ci.low > 0.0 => Verdict::Worse,
            None => Verdict::Unknown,
        })
        .collect();
    if each.contains(&Verdict::Worse) {
        Verdict::Worse
    } else if !each.is_empty() && each.iter().all(|v| *v == Verdict::Same) {
        Verdict::Same
    } else {
        Verdict::Unknown
    }
}

/// The ratio current/anchor of a metric: `exp(shift)` for the time, `exp(-shift)` for the speedup.
pub fn ratio(ci: &ShiftCi, inverted: bool) -> RatioCi {
    if inverted {
        RatioCi {
            ratio: (-ci.estimate).exp(),
            low: (-ci.high).exp(),
            high: (-ci.low).exp(),
        }
    } else {
        RatioCi {
            ratio: ci.estimate.exp(),
            low: ci.low.exp(),
            high: ci.high.exp(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around(centre: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| centre + spread * ((i % 5) as f64 - 2.0) / 2.0)
            .collect()
    }

    #[test]
    fn a_metric_settles_only_when_its_interval_clears_the_threshold() {
        // 10 % worse, tight: settled worse. 0 %, tight: settled same. 5 % at a 5 % threshold: open.
        let worse = metric(&around(0.10f64.ln_1p(), 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(worse.settled, Some(Verdict::Worse));
        let same = metric(&around(0.0, 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(same.settled, Some(Verdict::Same));
        let edge = metric(&around(0.05f64.ln_1p(), 0.01, 20), 5.0, 0.95).unwrap();
        assert_eq!(edge.settled, None);
        assert!(metric(&around(0.0, 0.01, 5), 5.0, 0.95).is_none());
        // Open at the end: significant (interval above 0) is worse, else unknown.
        assert_eq!(final_verdict(&[edge, same]), Verdict::Worse);
        let noisy = metric(&around(0.02, 0.2, 20), 5.0, 0.95).unwrap();
        assert_eq!(noisy.settled, None);
        assert_eq!(final_verdict(&[noisy, same]), Verdict::Unknown);
        assert_eq!(final_verdict(&[same, same]), Verdict::Same);
        assert_eq!(final_verdict(&[]), Verdict::Unknown);
    }

    #[test]
    fn rounds_stop_when_settled_or_precise() {
        let worse = metric(&around(0.2, 0.01, 20), 5.0, 0.95).unwrap();
        let same = metric(&around(0.0, 0.01, 20), 5.0, 0.95).unwrap();
        let edge = metric(&around(0.05f64.ln_1p(), 0.004, 20), 5.0, 0.95).unwrap();
        assert_eq!(early_stop(&[worse, edge], 0.1), Some(Stop::Decided));
        assert_eq!(early_stop(&[same, same], 0.1), Some(Stop::Decided));
        assert_eq!(early_stop(&[same, edge], 0.1), None);
        assert_eq!(early_stop(&[same, edge], 1.0), Some(Stop::Precise));
    }

    #[test]
    fn ratios_read_current_over_anchor() {
        let ci = ShiftCi {
            estimate: 0.1,
            low: 0.05,
            high: 0.2,
        };
        let t = ratio(&ci, false);
        assert!((t.ratio - 0.1f64.exp()).abs() < 1e-12 && t.low < t.ratio && t.ratio < t.high);
        let s = ratio(&ci, true);
        assert!((s.ratio - (-0.1f64).exp()).abs() < 1e-12 && s.low < s.ratio && s.ratio < s.high);
        assert!((s.high - (-0.05f64).exp()).abs() < 1e-12);
    }

    #[test]
    fn budgets_are_checked() {
        let ok = Budget {
            seconds: 10.0,
            min_rounds: 8,
            max_rounds: 20,
            precision_pct: 1.0,
            confidence: 0.95,
        };
        assert!(ok.check().is_ok());
        let e = Budget {
            min_rounds: 4,
            ..ok
        }
        .check()
        .unwrap_err();
        assert!(e.contains("found 4 and 20"), "{e}");
        assert!(Budget { seconds: 0.0, ..ok }.check().is_err());
        assert!(
            Budget {
                confidence: 1.0,
                ..ok
            }
            .check()
            .is_err()
        );
    }
}
