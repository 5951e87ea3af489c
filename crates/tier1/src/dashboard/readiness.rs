//! The release verdict (reference `isTier1ReleaseReady`): the latest run is accepted, every target
//! succeeded, and it has no regressions, missing targets or warnings. Unlike the reference,
//! regressions cleared only by a recheck do not make it "not ready": the release gate passes them
//! (they only bar the run from becoming an anchor), and the dashboard says what the gate does.
//! Anchor declines below the thresholds and the anchor's age are reported but never block.

use super::model::Dashboard;
use std::fmt;

pub(crate) use super::freshness::{EXPIRY_DAYS, RENEWAL_DAYS};

/// Why the release is not ready.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Blocker {
    /// The history holds no run.
    NoRuns,
    /// The latest run did not pass the gate.
    NotAccepted {
        /// Latest run.
        run_id: String,
    },
    /// The latest run measured no target.
    NoTargets {
        /// Latest run.
        run_id: String,
    },
    /// Not every target succeeded.
    TargetsIncomplete {
        /// Latest run.
        run_id: String,
        /// Succeeded targets.
        succeeded: u32,
        /// Targets.
        target_count: u32,
        /// Failed.
        failed: u32,
        /// Skipped.
        skipped: u32,
        /// Missing.
        missing: u32,
    },
    /// Confirmed regressions against the anchor.
    Regressions {
        /// Latest run.
        run_id: String,
        /// How many.
        count: usize,
    },
    /// Anchor targets missing from the run.
    MissingTargets {
        /// Latest run.
        run_id: String,
        /// How many.
        count: usize,
    },
    /// History warnings recorded with the comparison.
    Warnings {
        /// Latest run.
        run_id: String,
        /// How many.
        count: usize,
    },
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::NoRuns => write!(f, "the history holds no run yet"),
            Blocker::NotAccepted { run_id } => {
                write!(
                    f,
                    "latest run {run_id} was not accepted by the release gate"
                )
            }
            Blocker::NoTargets { run_id } => write!(f, "latest run {run_id} measured no target"),
            Blocker::TargetsIncomplete {
                run_id,
                succeeded,
                target_count,
                failed,
                skipped,
                missing,
            } => write!(
                f,
                "latest run {run_id}: {succeeded} of {target_count} targets succeeded \
                 ({failed} failed, {skipped} skipped, {missing} missing)"
            ),
            Blocker::Regressions { run_id, count } => {
                write!(f, "latest run {run_id} has {count} confirmed regression(s)")
            }
            Blocker::MissingTargets { run_id, count } => write!(
                f,
                "latest run {run_id} is missing {count} target(s) the anchor has"
            ),
            Blocker::Warnings { run_id, count } => {
                write!(f, "latest run {run_id} carries {count} history warning(s)")
            }
        }
    }
}

/// Facts shown beside the verdict that do not block it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Note {
    /// Declines below the thresholds: they hold anchor advancement only.
    AnchorDeclines {
        /// Latest run.
        run_id: String,
        /// How many.
        count: usize,
    },
    /// Regressions cleared only by a recheck: passed by the gate, never ratifiable as an anchor.
    SuppressedRegressions {
        /// Latest run.
        run_id: String,
        /// How many.
        count: usize,
    },
    /// The anchor's evidence is old enough to need renewal.
    AnchorRenewal(AnchorAge),
    /// The history has runs but no eligible anchor.
    NoAnchor,
    /// Only the first anchor exists; nothing has been compared yet.
    BootstrapOnly,
    /// The history is going stale (`freshness`).
    Freshness(super::freshness::Warning),
    /// The latest run's suspected targets should have been compared side by side with the
    /// anchor's code but could not be (`side_by_side.warning`: the reason and the remedy).
    SideBySideUnavailable {
        /// Latest run.
        run_id: String,
        /// The recorded warning.
        warning: String,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::AnchorDeclines { run_id, count } => write!(
                f,
                "latest run {run_id} has {count} anchor decline(s) below the thresholds \
                 (they hold anchor advancement, not the release)"
            ),
            Note::SuppressedRegressions { run_id, count } => write!(
                f,
                "latest run {run_id} has {count} regression(s) cleared only by a recheck: the \
                 release gate passes them, but this run can never be ratified as an anchor"
            ),
            Note::AnchorRenewal(age) if age.days_left() > 0 => write!(
                f,
                "anchor {} evidence is {} days old: renew it within {} days (it expires at {} days)",
                age.run_id,
                age.age_days,
                age.days_left(),
                EXPIRY_DAYS
            ),
            Note::AnchorRenewal(age) => write!(
                f,
                "anchor {} evidence is {} days old: it expired at {} days; promote a new anchor",
                age.run_id, age.age_days, EXPIRY_DAYS
            ),
            Note::NoAnchor => write!(f, "the history has runs but no eligible anchor"),
            Note::BootstrapOnly => write!(
                f,
                "bootstrap only: the first anchor exists and no run has been compared with it yet"
            ),
            Note::Freshness(w) => write!(f, "{w}"),
            Note::SideBySideUnavailable { run_id, warning } => {
                write!(f, "latest run {run_id}: {warning}")
            }
        }
    }
}

/// Age of the anchor's evidence, from its `generated_at` to the report clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AnchorAge {
    /// The anchor.
    pub(crate) run_id: String,
    /// Whole days elapsed.
    pub(crate) age_days: i64,
}

impl AnchorAge {
    /// Days left before the evidence expires (negative once expired).
    pub(crate) fn days_left(&self) -> i64 {
        EXPIRY_DAYS - self.age_days
    }
    /// True from [`RENEWAL_DAYS`] on.
    pub(crate) fn needs_renewal(&self) -> bool {
        self.age_days >= RENEWAL_DAYS
    }
}

/// The verdict with its reasons.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// Ready to release.
    pub(crate) ready: bool,
    /// Why not (empty when ready).
    pub(crate) blockers: Vec<Blocker>,
    /// Non-blocking facts.
    pub(crate) notes: Vec<Note>,
    /// The anchor's age, when there is an anchor with a parsable time.
    pub(crate) anchor_age: Option<AnchorAge>,
}

/// Judge the latest run of the history.
pub(crate) fn assess(dash: &Dashboard) -> Verdict {
    let mut blockers = Vec::new();
    let mut notes = Vec::new();
    let anchor_age = dash.anchor_run().and_then(|a| {
        a.time.map(|t| AnchorAge {
            run_id: a.row.run_id.clone(),
            age_days: (dash.now - t).num_days(),
        })
    });
    match dash.latest_evidence() {
        None => blockers.push(Blocker::NoRuns),
        Some(run) => {
            let id = || run.row.run_id.clone();
            let agg = &run.summary.summary;
            let reg = &run.regression;
            if !run.row.is_accepted() {
                blockers.push(Blocker::NotAccepted { run_id: id() });
            }
            if agg.target_count == 0 {
                blockers.push(Blocker::NoTargets { run_id: id() });
            } else if agg.succeeded != agg.target_count
                || agg.failed + agg.skipped + agg.missing > 0
            {
                blockers.push(Blocker::TargetsIncomplete {
                    run_id: id(),
                    succeeded: agg.succeeded,
                    target_count: agg.target_count,
                    failed: agg.failed,
                    skipped: agg.skipped,
                    missing: agg.missing,
                });
            }
            type Make = fn(String, usize) -> Blocker;
            let counted: [(usize, Make); 3] = [
                (reg.regressions.len(), |run_id, count| {
                    Blocker::Regressions { run_id, count }
                }),
                (reg.missing_targets.len(), |run_id, count| {
                    Blocker::MissingTargets { run_id, count }
                }),
                (reg.warnings.len(), |run_id, count| Blocker::Warnings {
                    run_id,
                    count,
                }),
            ];
            for (count, make) in counted {
                if count > 0 {
                    blockers.push(make(id(), count));
                }
            }
            if let Some(w) = reg.side_by_side.as_ref().and_then(|b| b.warning.as_ref()) {
                notes.push(Note::SideBySideUnavailable {
                    run_id: id(),
                    warning: w.clone(),
                });
            }
            if !reg.suppressed_regressions.is_empty() {
                notes.push(Note::SuppressedRegressions {
                    run_id: id(),
                    count: reg.suppressed_regressions.len(),
                });
            }
            let declines = super::declines::split(run, &dash.suite)
                .below_thresholds
                .len();
            if declines > 0 {
                notes.push(Note::AnchorDeclines {
                    run_id: id(),
                    count: declines,
                });
            }
        }
    }
    if dash.is_bootstrap_only() {
        notes.push(Note::BootstrapOnly);
    } else if !dash.runs.is_empty() && dash.anchor.is_none() {
        notes.push(Note::NoAnchor);
    }
    if let Some(age) = anchor_age.as_ref().filter(|a| a.needs_renewal()) {
        notes.push(Note::AnchorRenewal(age.clone()));
    }
    notes.extend(
        super::freshness::warnings(dash)
            .into_iter()
            .map(Note::Freshness),
    );
    Verdict {
        ready: blockers.is_empty(),
        blockers,
        notes,
        anchor_age,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::testkit::*;

    fn latest_mut(
        runs: &mut [crate::dashboard::model::RunView],
    ) -> &mut crate::dashboard::model::RunView {
        runs.last_mut().expect("a run")
    }

    #[test]
    fn healthy_history_is_ready() {
        let v = assess(&dash(healthy()));
        assert!(v.ready, "{:?}", v.blockers);
        assert!(v.blockers.is_empty());
    }

    #[test]
    fn empty_history_is_not_ready() {
        let v = assess(&dash(vec![]));
        assert_eq!(v.blockers, vec![Blocker::NoRuns]);
        assert!(!v.ready);
        assert_eq!(v.anchor_age, None);
    }

    #[test]
    fn each_blocking_reason_blocks() {
        type Edit = fn(&mut crate::dashboard::model::RunView);
        let cases: Vec<(&str, Edit, Blocker)> = vec![
            (
                "not accepted",
                |r| r.row.run_accepted = Some(false),
                Blocker::NotAccepted {
                    run_id: "r3".into(),
                },
            ),
            (
                "no targets",
                |r| {
                    r.summary.summary.target_count = 0;
                    r.summary.summary.succeeded = 0;
                },
                Blocker::NoTargets {
                    run_id: "r3".into(),
                },
            ),
            (
                "failed target",
                |r| {
                    r.summary.summary.succeeded = 1;
                    r.summary.summary.failed = 1;
                },
                Blocker::TargetsIncomplete {
                    run_id: "r3".into(),
                    succeeded: 1,
                    target_count: 2,
                    failed: 1,
                    skipped: 0,
                    missing: 0,
                },
            ),
            (
                "regression",
                |r| r.regression.regressions.push(gemm_speedup_change(2.0, 1.5)),
                Blocker::Regressions {
                    run_id: "r3".into(),
                    count: 1,
                },
            ),
            (
                "missing target",
                |r| {
                    let t = r.summary.targets[0].clone();
                    r.regression.missing_targets.push(t);
                },
                Blocker::MissingTargets {
                    run_id: "r3".into(),
                    count: 1,
                },
            ),
            (
                "warning",
                |r| r.regression.warnings.push("w".into()),
                Blocker::Warnings {
                    run_id: "r3".into(),
                    count: 1,
                },
            ),
        ];
        for (name, edit, expected) in cases {
            let mut runs = healthy();
            edit(latest_mut(&mut runs));
            let v = assess(&dash(runs));
            assert!(!v.ready, "{name}");
            assert_eq!(v.blockers, vec![expected], "{name}");
        }
    }

    #[test]
    fn anchor_declines_do_not_block() {
        let mut runs = healthy();
        latest_mut(&mut runs)
            .regression
            .anchor_declines
            .push(gemm_speedup_change(2.0, 1.97));
        let v = assess(&dash(runs));
        assert!(v.ready, "{:?}", v.blockers);
        assert!(v.notes.contains(&Note::AnchorDeclines {
            run_id: "r3".into(),
            count: 1
        }));
    }

    #[test]
    fn a_side_by_side_that_could_not_run_is_a_note_with_its_remedy() {
        let mut runs = healthy();
        latest_mut(&mut runs).regression.side_by_side = serde_json::from_value(serde_json::json!({
            "enabled": false,
            "reason": "off: the anchor's commit is not reachable",
            "warning": "side by side did not run: no remote; remedy: check out with `fetch-depth: 0`"
        }))
        .unwrap();
        let v = assess(&dash(runs));
        assert!(v.ready, "a note, never a blocker: {:?}", v.blockers);
        let note = v
            .notes
            .iter()
            .find(|n| matches!(n, Note::SideBySideUnavailable { .. }))
            .expect("the warning is a note")
            .to_string();
        assert_eq!(
            note,
            "latest run r3: side by side did not run: no remote; remedy: check out with `fetch-depth: 0`"
        );
    }

    #[test]
    fn only_the_latest_run_is_judged() {
        let mut runs = healthy();
        runs[1]
            .regression
            .regressions
            .push(gemm_speedup_change(2.0, 1.5));
        runs[1].row.run_accepted = Some(false);
        assert!(assess(&dash(runs)).ready);
    }

    #[test]
    fn anchor_age_warns_from_60_days_and_counts_down_to_90() {
        let mut runs = healthy();
        // Anchor generated 2026-06-01T03:15Z, clock 2026-08-05T00:00Z: 64 whole days.
        let v = assess(&dash(runs.clone()));
        let age = v.anchor_age.clone().expect("age");
        assert_eq!((age.age_days, age.days_left()), (64, 26));
        assert!(v.ready, "age never blocks");
        let note = v
            .notes
            .iter()
            .find(|n| matches!(n, Note::AnchorRenewal(_)))
            .expect("note");
        assert!(
            note.to_string().contains("renew it within 26 days"),
            "{note}"
        );

        runs[0].time = crate::dashboard::model::parse_time("2026-07-10T00:00:00Z");
        let v = assess(&dash(runs.clone()));
        assert_eq!(v.anchor_age.as_ref().map(|a| a.age_days), Some(26));
        assert!(!v.notes.iter().any(|n| matches!(n, Note::AnchorRenewal(_))));

        runs[0].time = crate::dashboard::model::parse_time("2026-05-01T00:00:00Z");
        let v = assess(&dash(runs));
        let note = v
            .notes
            .iter()
            .find(|n| matches!(n, Note::AnchorRenewal(_)))
            .expect("note");
        assert!(note.to_string().contains("expired at 90 days"), "{note}");
    }

    #[test]
    fn bootstrap_only_and_no_anchor_are_said() {
        let v = assess(&dash(vec![run("r1", 1, "anchor", 2.0)]));
        assert!(v.ready);
        assert!(v.notes.contains(&Note::BootstrapOnly));
        let v = assess(&dash(vec![run("r1", 1, "accepted", 2.0)]));
        assert!(v.notes.contains(&Note::NoAnchor));
    }
}
