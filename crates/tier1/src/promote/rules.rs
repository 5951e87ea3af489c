//! Promotion's decisions (contract §6.2 items 8 to 14; for operators docs/tier1-promote.md,
//! "Checks, in order"): which run may become the anchor, the outlier rule, the live history and
//! the bootstrap reset, and the recomputed comparison. Each is a pure function of facts already
//! read that returns its decision or a typed [`Refusal`]; [`steps`](super::steps) reads the facts
//! and turns a refusal into the [`PromoteError`] with its message and exit code (`refusal`).
//!
//! | step | rule | refusal |
//! |---|---|---|
//! | 8 | [`newest_candidate`]: the candidate's newest row, not yet eligible | exit 3 |
//! | 9, 12 | [`runner_class`]: a run of one class never becomes another's anchor | exit 3 |
//! | 9 | [`target_list`]: the suite's `(key, target)` list, in order | exit 3 |
//! | 10 | [`eligible_anchor`]: complete metrics, provenance, the commit, precision | exit 3 |
//! | 11 | [`comparison_shape`]: this run, nothing only a recheck or side by side cleared | exit 3 |
//! | 12 | [`live_history`]: keep live history, reset it (bootstrap), or refuse | exit 3 or 8 |
//! | 12 | [`outlier_rule`]: no speedup an outlier against the accepted runs | exit 3 |
//! | 13 | [`bootstrap_reset`]: a compatible prior anchor, or a reset only with bootstrap | exit 3 |
//! | 13 | [`recomputed_comparison`]: the stored comparison is the recomputed one | exit 3 |
//! | 14 | [`shard_archives`]: shard packages only for a combined run | exit 3 |

use super::error::PromoteError;
use super::refusal::Refusal;
use crate::gate;
use crate::history::Detection;
use crate::history::model::{IndexRow, RecheckRecord, RegressionSummary, Summary};
use crate::recheck::RecheckResult;
use crate::regress::noise::{NoiseHistory, anchor_outliers};
use crate::suite::{Suite, ThresholdBook, Thresholds};

/// Contract §6.2 item 8 (docs/tier1-promote.md step 8): only the candidate's newest row may be
/// ratified ("may ratify only the newest immutable candidate"), and only while it is not yet
/// eligible. Returns that row.
pub(super) fn newest_candidate<'a>(
    runs: &'a [IndexRow],
    run_id: &str,
) -> Result<&'a IndexRow, Refusal> {
    let Some(row) = runs.last() else {
        return Err(Refusal::NoRuns);
    };
    if row.run_id != run_id {
        return Err(Refusal::NotNewest {
            newest: row.run_id.clone(),
            run_id: run_id.into(),
        });
    }
    if row.is_eligible() {
        return Err(Refusal::AlreadyEligible {
            run_id: run_id.into(),
        });
    }
    Ok(row)
}

/// docs/sharding.md (steps 9 and 12 of docs/tier1-promote.md): the runner class `found` in
/// `what` (the candidate index, the run's environment, the live index) must be the one ratified
/// (`--runner-class`): a run of one class never becomes another's anchor.
pub(super) fn runner_class(
    what: &str,
    found: Option<&str>,
    want: Option<&str>,
) -> Result<(), Refusal> {
    if found == want {
        return Ok(());
    }
    Err(Refusal::RunnerClass {
        what: what.into(),
        want: want.map(Into::into),
        found: found.map(Into::into),
    })
}

/// Contract §6.2 item 9 (docs/tier1-promote.md step 9): the summary's `(key, target)` list is
/// the suite's, in order.
pub(super) fn target_list(summary: &Summary, suite: &Suite) -> Result<(), Refusal> {
    let found: Vec<(String, String)> = summary
        .targets
        .iter()
        .map(|t| (t.key.clone(), t.target.clone()))
        .collect();
    let want: Vec<(String, String)> = suite
        .targets
        .iter()
        .map(|t| (t.key.clone(), t.target.clone()))
        .collect();
    if found != want {
        return Err(Refusal::TargetList { want, found });
    }
    Ok(())
}

/// Contract §6.2 item 10 (docs/tier1-promote.md step 10), which run may become the anchor:
/// complete finite metrics and accepted provenance (`crate::gate`), the expected commit
/// (`commit`, lower-cased), then (tier1) anchor precision: every target measured precisely,
/// without throttling (docs/regression-model.md §8), for a bootstrap too.
pub(super) fn eligible_anchor(
    run_id: &str,
    summary: &Summary,
    commit: &str,
) -> Result<(), Refusal> {
    let mut c = gate::baseline_metrics(summary);
    c.reasons.extend(gate::provenance(summary).reasons);
    if !c.passed() {
        return Err(Refusal::NotEligible {
            run_id: run_id.into(),
            reasons: c.reasons,
        });
    }
    if summary.source_git_commit.as_deref() != Some(commit) {
        return Err(Refusal::Commit {
            expected: commit.into(),
            found: summary.source_git_commit.clone(),
        });
    }
    let precision = gate::anchor_precision(summary);
    if !precision.passed() {
        return Err(Refusal::AnchorQuality {
            run_id: run_id.into(),
            reasons: precision.reasons,
        });
    }
    Ok(())
}

/// Contract §6.2 item 11 (docs/tier1-promote.md step 11): the comparison is of this run; no
/// regression cleared only by a recheck ("remains rejected even through this path"); no suspected
/// target that only side by side decided; no history warnings; the summary names the expected
/// evidence artifact.
pub(super) fn comparison_shape(
    run_id: &str,
    expected_artifact: &str,
    summary: &Summary,
    reg: &RegressionSummary,
) -> Result<(), Refusal> {
    if reg.current_run_id.as_deref() != Some(run_id) {
        return Err(Refusal::CurrentRunId {
            expected: run_id.into(),
            found: reg.current_run_id.clone(),
        });
    }
    if !reg.suppressed_regressions.is_empty() {
        return Err(Refusal::Suppressed {
            count: reg.suppressed_regressions.len(),
        });
    }
    // What restore's re-derivation refuses of an anchor (`gate::eligible_anchor_rules`), refused
    // here before anything is written: a ratified run that every later restore refused would
    // stop every later night. The records are read only once their verdicts are the ones their
    // own intervals give (a tampered record is named as such).
    if let Some(block) = &reg.side_by_side {
        block.check().map_err(|why| Refusal::Record { why })?;
    }
    let cleared: Vec<String> = reg
        .side_by_side
        .iter()
        .flat_map(|b| b.cleared().chain(b.unconfirmed()))
        .map(|c| {
            format!(
                "{} ({}, side by side {})",
                c.key,
                c.suspected_as,
                c.verdict.as_str()
            )
        })
        .collect();
    if !cleared.is_empty() {
        return Err(Refusal::SideBySideOnly {
            run_id: run_id.into(),
            cleared,
        });
    }
    if !reg.warnings.is_empty() {
        return Err(Refusal::Warnings {
            warnings: reg.warnings.clone(),
        });
    }
    if summary.evidence_artifact_name.as_deref() != Some(expected_artifact) {
        return Err(Refusal::ArtifactName {
            expected: expected_artifact.into(),
            found: summary.evidence_artifact_name.clone(),
        });
    }
    Ok(())
}

/// What live history's index says, as [`live_history`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LiveFacts<'a> {
    /// Its `suite_name`.
    pub(super) suite_name: &'a str,
    /// Its `suite_version`.
    pub(super) suite_version: u32,
    /// Whether it already holds the run (in a row or a sealed segment).
    pub(super) holds_run: bool,
}

/// What becomes of live history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Live {
    /// It is kept: the ratified row is appended to it.
    Keep,
    /// Absent, or reset by a bootstrap over a suite-version change: a new chain starts.
    Reset,
}

/// Contract §6.2 item 12 (docs/tier1-promote.md step 12): a missing live index only with
/// bootstrap; `suite_name` equals the suite's, even with bootstrap; a different `suite_version`
/// only with bootstrap (which resets live history); the run is new to it (else exit 8).
/// `live` is None when there is no live index.
pub(super) fn live_history(
    live: Option<LiveFacts<'_>>,
    suite: (&str, u32),
    run_id: &str,
    allow_bootstrap: bool,
) -> Result<Live, Refusal> {
    let Some(live) = live else {
        if allow_bootstrap {
            return Ok(Live::Reset);
        }
        return Err(Refusal::NoLiveIndex);
    };
    let (suite_name, suite_version) = suite;
    if live.suite_name != suite_name {
        return Err(Refusal::LiveSuiteName {
            expected: suite_name.into(),
            found: live.suite_name.into(),
        });
    }
    if live.suite_version != suite_version {
        if allow_bootstrap {
            return Ok(Live::Reset);
        }
        return Err(Refusal::LiveSuiteVersion {
            expected: suite_version,
            found: live.suite_version,
        });
    }
    if live.holds_run {
        return Err(Refusal::InLiveHistory {
            run_id: run_id.into(),
        });
    }
    Ok(Live::Keep)
}

/// Contract §6.2 item 12, tier1's outlier rule (docs/tier1-promote.md step 12, "outliers";
/// docs/regression-model.md §8): no target's speedup is an outlier against the live history's
/// accepted runs (`accepted`), unless a recheck confirmed its regression (a real, re-measured
/// level change).
pub(super) fn outlier_rule(
    run_id: &str,
    summary: &Summary,
    accepted: &NoiseHistory,
    thresholds: &Thresholds,
    rechecks: &[RecheckRecord],
) -> Result<(), Refusal> {
    let confirmed: Vec<String> = rechecks
        .iter()
        .filter(|c| c.confirmed_regression)
        .map(|c| c.target.clone())
        .collect();
    let outliers = anchor_outliers(summary, accepted, thresholds, &confirmed);
    if !outliers.is_empty() {
        return Err(Refusal::AnchorQuality {
            run_id: run_id.into(),
            reasons: outliers,
        });
    }
    Ok(())
}

/// Contract §6.2 item 13 (docs/tier1-promote.md step 13), the bootstrap reset: the prior anchor
/// is the latest compatible eligible live row (`prior`); with none, the promotion resets the
/// chain, which only `--allow-bootstrap` allows. The comparison must have been made against
/// `prior` (`baseline_run_id`; a stale or foreign anchor is refused). Returns whether the chain
/// is reset.
pub(super) fn bootstrap_reset(
    prior: Option<&str>,
    allow_bootstrap: bool,
    baseline_run_id: Option<&str>,
) -> Result<bool, Refusal> {
    let reset = prior.is_none();
    if reset && !allow_bootstrap {
        return Err(Refusal::NoAnchor);
    }
    if baseline_run_id != prior {
        return Err(Refusal::StaleAnchor {
            expected: prior.map(Into::into),
            found: baseline_run_id.map(Into::into),
        });
    }
    Ok(reset)
}

/// Contract §6.2 item 13 (docs/tier1-promote.md step 13), the recomputed comparison: the
/// comparison of `summary` with the prior anchor, with the rechecks and side-by-side records as
/// the run recorded them pooled in again, must be the stored one (`stored`) in every field;
/// else the comparison was tampered with. `noise` is the candidate tree's accepted runs before
/// the run (what it was compared with).
pub(super) fn recomputed_comparison(
    summary: &Summary,
    stored: &RegressionSummary,
    prior: Option<&Summary>,
    book: &ThresholdBook,
    noise: &NoiseHistory,
) -> Result<(), PromoteError> {
    let recomputed = recompute(summary, stored, prior, book, noise)?;
    same_comparison(stored, &recomputed)?;
    Ok(())
}

/// The comparison [`recomputed_comparison`] checks against: recomputed, not trusted.
fn recompute(
    summary: &Summary,
    stored: &RegressionSummary,
    prior: Option<&Summary>,
    book: &ThresholdBook,
    noise: &NoiseHistory,
) -> Result<RegressionSummary, PromoteError> {
    let first = crate::regress::compare_in(summary, prior, book, noise)?;
    let Some(anchor) = prior else {
        return Ok(first);
    };
    // The rechecks as the run recorded them: their rows are pooled with the first measurement
    // again, so the final comparison is recomputed, not trusted.
    let recorded: Vec<RecheckResult> = stored
        .rechecks
        .iter()
        .map(|r| RecheckResult {
            target: r.target.clone(),
            key: summary
                .targets
                .iter()
                .find(|t| t.target == r.target)
                .map_or_else(|| r.target.clone(), |t| t.key.clone()),
            recheck_output_json: r.recheck_output_json.clone(),
            row: r.recheck_summary.clone(),
        })
        .collect();
    let rechecked = crate::recheck::apply(first, summary, anchor, &recorded, book, noise);
    // The side-by-side records as the run recorded them: each verdict must be the one its own
    // intervals give, and the comparison is recomputed from them.
    match &stored.side_by_side {
        Some(block) => {
            block.check().map_err(|why| Refusal::Record { why })?;
            Ok(crate::confirmation::apply(
                rechecked,
                summary,
                anchor,
                block.clone(),
            ))
        }
        None => Ok(rechecked),
    }
}

/// The first field of `stored` that differs from the recomputed comparison `re`, as a refusal.
pub(super) fn same_comparison(
    stored: &RegressionSummary,
    re: &RegressionSummary,
) -> Result<(), Refusal> {
    let fields: [(&str, bool); 14] = [
        (
            "baseline_run_id",
            stored.baseline_run_id == re.baseline_run_id,
        ),
        ("current_run_id", stored.current_run_id == re.current_run_id),
        ("regressions", stored.regressions == re.regressions),
        ("improvements", stored.improvements == re.improvements),
        (
            "anchor_declines",
            stored.anchor_declines == re.anchor_declines,
        ),
        ("new_targets", stored.new_targets == re.new_targets),
        (
            "missing_targets",
            stored.missing_targets == re.missing_targets,
        ),
        ("within_noise", stored.within_noise == re.within_noise),
        ("inconclusive", stored.inconclusive == re.inconclusive),
        ("held_by_floor", stored.held_by_floor == re.held_by_floor),
        ("rechecks", stored.rechecks == re.rechecks),
        (
            "detection",
            stored.detection == as_recorded(stored.detection.as_ref(), re.detection.clone()),
        ),
        (
            "suppressed_regressions",
            stored.suppressed_regressions == re.suppressed_regressions,
        ),
        ("side_by_side", stored.side_by_side == re.side_by_side),
    ];
    match fields.into_iter().find(|(_, same)| !same) {
        Some((field, _)) => Err(Refusal::Tampered { field }),
        None => Ok(()),
    }
}

/// The recomputed `detection` without the figures a record written before they existed does
/// not hold: a test's `measured_detectable_pct` (issue 43) where the stored test (same target
/// and metric) has none. Every figure a record holds is still compared.
fn as_recorded(stored: Option<&Detection>, mut re: Option<Detection>) -> Option<Detection> {
    let (Some(stored), Some(r)) = (stored, re.as_mut()) else {
        return re;
    };
    for t in &mut r.targets {
        let Some(st) = stored.target(&t.target) else {
            continue;
        };
        for m in &mut t.tests {
            let older = st
                .tests
                .iter()
                .any(|x| x.metric == m.metric && x.measured_detectable_pct.is_none());
            if older {
                m.measured_detectable_pct = None;
            }
        }
    }
    re
}

/// Contract §6.2 item 14 with docs/sharding.md §5 (docs/tier1-promote.md step 14): shard packages
/// (`--shard-archives`) belong only to a combined run, whose summary records its shards.
pub(super) fn shard_archives(
    run_id: &str,
    records_shards: bool,
    archives_given: bool,
) -> Result<(), Refusal> {
    if archives_given && !records_shards {
        return Err(Refusal::ShardArchives {
            run_id: run_id.into(),
        });
    }
    Ok(())
}
