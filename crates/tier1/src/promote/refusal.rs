//! Why a rule of promotion refuses ([`Refusal`], each decision of [`rules`](super::rules) that
//! fails), and the message and exit code each refusal keeps as a [`PromoteError`].

use super::error::PromoteError;

/// Why a rule refuses a promotion; [`PromoteError::from`] gives each its message and exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Step 8: the candidate history has no runs.
    NoRuns,
    /// Step 8: the run is not the candidate's newest.
    NotNewest {
        /// The candidate's newest run.
        newest: String,
        /// `--run-id`.
        run_id: String,
    },
    /// Step 8: the run is already eligible.
    AlreadyEligible {
        /// The run.
        run_id: String,
    },
    /// Steps 9 and 12: a history or run of another runner class.
    RunnerClass {
        /// What records the class.
        what: String,
        /// `--runner-class`.
        want: Option<String>,
        /// The class recorded.
        found: Option<String>,
    },
    /// Step 9: the summary's targets are not the suite's.
    TargetList {
        /// The suite's `(key, target)` list.
        want: Vec<(String, String)>,
        /// The summary's.
        found: Vec<(String, String)>,
    },
    /// Step 10: incomplete metrics or provenance not accepted.
    NotEligible {
        /// The run.
        run_id: String,
        /// One line per failed condition.
        reasons: Vec<String>,
    },
    /// Step 10: the summary's commit is not the expected one.
    Commit {
        /// `--expected-git-commit`, lower-cased.
        expected: String,
        /// The summary's `source_git_commit`.
        found: Option<String>,
    },
    /// Steps 10 (precision) and 12 (outliers): not a good anchor.
    AnchorQuality {
        /// The run.
        run_id: String,
        /// One line per target, with the figures.
        reasons: Vec<String>,
    },
    /// Step 11: the comparison is of another run.
    CurrentRunId {
        /// The run.
        expected: String,
        /// The comparison's `current_run_id`.
        found: Option<String>,
    },
    /// Step 11: regressions cleared only by a recheck.
    Suppressed {
        /// How many.
        count: usize,
    },
    /// Steps 11 and 13: the side-by-side record is not valid.
    Record {
        /// Why.
        why: String,
    },
    /// Step 11: suspected targets that only side by side decided.
    SideBySideOnly {
        /// The run.
        run_id: String,
        /// `<key> (<suspected as>, side by side <verdict>)` per target.
        cleared: Vec<String>,
    },
    /// Step 11: the comparison has history warnings.
    Warnings {
        /// The warnings.
        warnings: Vec<String>,
    },
    /// Step 11: the summary names another evidence artifact.
    ArtifactName {
        /// `--expected-evidence-artifact`.
        expected: String,
        /// The summary's `evidence_artifact_name`.
        found: Option<String>,
    },
    /// Step 12: no live index and no bootstrap.
    NoLiveIndex,
    /// Step 12: live history of another suite (never reset).
    LiveSuiteName {
        /// The suite's name.
        expected: String,
        /// Live history's.
        found: String,
    },
    /// Step 12: live history of another suite version, without bootstrap.
    LiveSuiteVersion {
        /// The suite's version.
        expected: u32,
        /// Live history's.
        found: u32,
    },
    /// Step 12: the run is already in live history (exit 8).
    InLiveHistory {
        /// The run.
        run_id: String,
    },
    /// Step 13: no compatible eligible anchor, without bootstrap.
    NoAnchor,
    /// Step 13: the comparison was made against another anchor.
    StaleAnchor {
        /// The latest compatible live anchor.
        expected: Option<String>,
        /// The comparison's `baseline_run_id`.
        found: Option<String>,
    },
    /// Step 13: a stored field differs from the recomputed comparison.
    Tampered {
        /// The field.
        field: &'static str,
    },
    /// Step 14: shard packages given for a run one runner measured.
    ShardArchives {
        /// The run.
        run_id: String,
    },
}

impl From<Refusal> for PromoteError {
    fn from(r: Refusal) -> Self {
        let invalid = PromoteError::Invalid;
        match r {
            Refusal::NoRuns => invalid("candidate history has no runs".into()),
            Refusal::NotNewest { newest, run_id } => invalid(format!(
                "may ratify only the newest immutable candidate: newest run is {newest:?}, --run-id is {run_id:?}"
            )),
            Refusal::AlreadyEligible { run_id } => {
                invalid(format!("run {run_id:?} is already baseline_eligible"))
            }
            Refusal::RunnerClass { what, want, found } => invalid(format!(
                "{what}: runner_class expected {want:?} (--runner-class), found {found:?}: a run of one runner class never becomes another class's anchor"
            )),
            Refusal::TargetList { want, found } => invalid(format!(
                "summary targets must equal the suite's (key, target) list in order: expected {want:?}, found {found:?}"
            )),
            Refusal::NotEligible { run_id, reasons } => invalid(format!(
                "run {run_id:?} is not an eligible anchor: {}",
                reasons.join("; ")
            )),
            Refusal::Commit { expected, found } => invalid(format!(
                "source_git_commit: expected {expected:?} (--expected-git-commit), found {found:?}"
            )),
            Refusal::AnchorQuality { run_id, reasons } => {
                PromoteError::AnchorQuality { run_id, reasons }
            }
            Refusal::CurrentRunId { expected, found } => invalid(format!(
                "regression current_run_id: expected {expected:?}, found {found:?}"
            )),
            Refusal::Suppressed { count } => invalid(format!(
                "a regression cleared only by a recheck remains rejected even through this path: {count} suppressed regression(s)"
            )),
            Refusal::Record { why } => invalid(format!("regression_summary.json: {why}")),
            Refusal::SideBySideOnly { run_id, cleared } => invalid(format!(
                "run {run_id:?} had suspected targets that only side by side decided ({}): such a run is never an anchor, even through this path; accept another run (`TIER1_SIDE_BY_SIDE=off` for it leaves an unknown target unknown, which does not bar an accepted anchor)",
                cleared.join(", ")
            )),
            Refusal::Warnings { warnings } => invalid(format!(
                "the comparison has history warnings: {warnings:?}"
            )),
            Refusal::ArtifactName { expected, found } => invalid(format!(
                "summary evidence_artifact_name: expected {expected:?}, found {found:?}"
            )),
            Refusal::NoLiveIndex => invalid(
                "no live canonical index.json: promotion without --allow-bootstrap needs live history"
                    .into(),
            ),
            Refusal::LiveSuiteName { expected, found } => invalid(format!(
                "live history suite_name: expected {expected:?}, found {found:?} (never reset, even with bootstrap)"
            )),
            Refusal::LiveSuiteVersion { expected, found } => invalid(format!(
                "live history suite_version: expected {expected}, found {found} (only a bootstrap may reset it)"
            )),
            Refusal::InLiveHistory { run_id } => {
                PromoteError::Conflict(format!("run {run_id:?} is already in live history"))
            }
            Refusal::NoAnchor => invalid(
                "live history has no compatible eligible anchor; promotion without --allow-bootstrap requires one"
                    .into(),
            ),
            Refusal::StaleAnchor { expected, found } => invalid(format!(
                "regression baseline_run_id: expected {expected:?} (the latest compatible live anchor), found {found:?} (stale or foreign anchor)"
            )),
            Refusal::Tampered { field } => invalid(format!(
                "stored comparison field `{field}` differs from the recomputed comparison (tampered comparison)"
            )),
            Refusal::ShardArchives { run_id } => invalid(format!(
                "--shard-archives given, but run {run_id:?} was measured by one runner (its summary records no shards)"
            )),
        }
    }
}
