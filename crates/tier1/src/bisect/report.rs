//! What `tier1-bisect` reports: the culprit (or the suspects skipped commits leave), and the
//! figures of every step; as JSON (`bisect.json`, stdout) and as Markdown (the step summary).

use crate::bisect::search::Mark;
use crate::sidebyside::{RatioCi, Verdict};
use serde::{Deserialize, Serialize};

/// `schema` of a [`BisectReport`].
pub(crate) const BISECT_SCHEMA: &str = "tier1.bisect.v1";

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BisectStatus {
    /// One commit is the first to show the change.
    Found,
    /// Skipped commits leave several suspects.
    Ambiguous,
}

/// One tested commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1-based.
    pub step: u32,
    /// The commit tested (measured as current against the good commit).
    pub commit: String,
    /// Its subject line.
    pub(crate) subject: String,
    /// The side-by-side verdict.
    pub verdict: Verdict,
    /// What the search made of it.
    pub mark: Mark,
    /// The comparison's reason.
    pub reason: String,
    /// Optimized time current/anchor.
    #[serde(default)]
    pub(crate) optimized_time_ratio: Option<RatioCi>,
    /// Speedup current/anchor.
    #[serde(default)]
    pub(crate) speedup_ratio: Option<RatioCi>,
    /// Rounds measured.
    pub(crate) rounds: u32,
    /// Seconds measuring (of the last attempt).
    pub(crate) seconds: f64,
    /// Comparisons made: 2 when the first was too noisy and the commit was measured once more
    /// with twice the budget.
    pub(crate) attempts: u32,
    /// The commit was built for this step (not taken from the cache).
    pub(crate) built: bool,
    /// The last attempt's evidence directory, relative to the output directory.
    pub(crate) evidence: String,
}

/// The result of a bisection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectReport {
    /// [`BISECT_SCHEMA`].
    pub(crate) schema: String,
    /// Target key.
    pub(crate) target: String,
    /// Profile.
    pub(crate) profile: String,
    /// The good commit (the reference of every comparison).
    pub(crate) good: String,
    /// The bad commit (taken as bad, not measured).
    pub(crate) bad: String,
    /// Threshold (percent) of every comparison.
    pub(crate) threshold_pct: f64,
    /// The metrics that decided every comparison.
    pub(crate) decided_on: crate::sidebyside::DecideOn,
    /// Commits after `good` up to `bad` on `bad`'s first-parent chain.
    pub(crate) commits_in_range: usize,
    /// How it ended.
    pub status: BisectStatus,
    /// The first commit that shows the change (`found`), else `null`.
    pub culprit: Option<String>,
    /// Its subject line.
    #[serde(default)]
    pub(crate) culprit_subject: Option<String>,
    /// The commits the first bad one may be, oldest first (one when found).
    pub(crate) suspects: Vec<String>,
    /// The tests, in order.
    pub steps: Vec<Step>,
    /// Builds made (cache misses: the good commit's included).
    pub builds: u32,
    /// Seconds in all.
    pub(crate) seconds: f64,
    /// The report's directory (`bisect.json` and `steps/`).
    #[serde(default)]
    pub(crate) output_dir: Option<String>,
}

fn ratio(r: Option<RatioCi>) -> String {
    r.map_or("–".into(), |r| {
        format!("×{:.3} [{:.3}, {:.3}]", r.ratio, r.low, r.high)
    })
}

fn cell(s: &str) -> String {
    crate::text::for_humans(s)
        .replace('|', "\\|")
        .replace('\n', " ")
}

impl BisectReport {
    /// The report as Markdown (the step summary).
    pub fn markdown(&self) -> String {
        let mut md = format!("## tier1-bisect: {}\n\n", cell(&self.target));
        match (&self.status, &self.culprit) {
            (BisectStatus::Found, Some(c)) => md.push_str(&format!(
                "First commit that shows the change: **`{c}`** {}\n\n",
                cell(self.culprit_subject.as_deref().unwrap_or(""))
            )),
            _ => md.push_str(&format!(
                "No single culprit: skipped commits leave {} suspects: {}\n\n",
                self.suspects.len(),
                self.suspects
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
        md.push_str(&format!(
            "Good `{}`, bad `{}`, {} commits in range, {} builds, {:.0} s, threshold {} %.\n\n",
            self.good,
            self.bad,
            self.commits_in_range,
            self.builds,
            self.seconds,
            self.threshold_pct
        ));
        md.push_str("| step | commit | verdict | optimized time | speedup | rounds | reason |\n");
        md.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
        for s in &self.steps {
            md.push_str(&format!(
                "| {} | `{}` {} | {:?} → {:?} | {} | {} | {} | {} |\n",
                s.step,
                &s.commit[..s.commit.len().min(12)],
                cell(&s.subject),
                s.verdict,
                s.mark,
                ratio(s.optimized_time_ratio),
                ratio(s.speedup_ratio),
                s.rounds,
                cell(&s.reason)
            ));
        }
        md
    }
}
