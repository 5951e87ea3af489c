//! Skip, refuse or bootstrap: restore's decision when a candidate fails and when none is left, the
//! heart of contract §5 (`docs/contract.md` §5.4 and §5.6; for operators `docs/tier1-restore.md`,
//! "Skip or refuse"). A pure function of the failure's class, what the source run's conclusion
//! proves, and two facts about the walk (bootstrap allowed, discovery truncated);
//! [`select`](super::select) turns the decision into the outcome or the error with its message
//! and exit code.
//!
//! §5.6, per candidate:
//!
//! | error | source run conclusion | result |
//! |---|---|---|
//! | evidence unavailable | `success` | fatal without `--allow-bootstrap`; with it, fatal if discovery truncated, else bootstrap |
//! | evidence unavailable | in [`NON_SUCCESS_CONCLUSIONS`] | record the rejection and try the next, older candidate |
//! | evidence unavailable | anything else (unknown or unverified) | fatal |
//! | structural | non-success | skip to an older candidate |
//! | structural | success or unknown | fatal |
//! | integrity (digest, zip, paths, provenance, ...), renewal needed | any | fatal; no fallback, no bootstrap |
//!
//! §5.4 and §5.6, when none is left: no candidate at all is bootstrap when allowed (even when the
//! scan was truncated: there is nothing a newer run could hide), else fatal. After every candidate
//! was skipped: fatal if discovery was truncated ("Refusing to reset canonical history"), else
//! fatal without bootstrap, else bootstrap.

/// Conclusions that prove a run did not succeed (a structurally bad package from one is skipped).
pub(crate) const NON_SUCCESS_CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "skipped",
    "stale",
    "startup_failure",
    "timed_out",
];

/// What the source run's conclusion proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunVerdict {
    /// `success`.
    Success,
    /// One of [`NON_SUCCESS_CONCLUSIONS`]: the run provably did not succeed.
    NonSuccess,
    /// Absent or any other value: unverified.
    Unknown,
}

impl RunVerdict {
    /// The verdict of a run's conclusion.
    pub(crate) fn of(conclusion: Option<&str>) -> Self {
        match conclusion {
            Some("success") => RunVerdict::Success,
            Some(c) if NON_SUCCESS_CONCLUSIONS.contains(&c) => RunVerdict::NonSuccess,
            _ => RunVerdict::Unknown,
        }
    }
}

/// The class of a candidate's failure (§5.6); a failure of the store or the disk is not the
/// candidate's and never reaches [`decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Baseline evidence unavailable (expired, deleted, never uploaded).
    Unavailable,
    /// A structurally bad package.
    Structural,
    /// Tampering or unsafe content.
    Integrity,
    /// The evidence needs a renewal that is not allowed.
    Renewal,
}

/// Where restore stands when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Situation {
    /// A candidate failed; its run's conclusion proves `run`.
    Failed {
        /// The failure's class.
        failure: Failure,
        /// What the candidate's run conclusion proves.
        run: RunVerdict,
    },
    /// Discovery found no candidate at all (§5.4).
    NoCandidates,
    /// Every candidate was tried and skipped.
    Exhausted,
}

/// The two facts about the walk the decision reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Walk {
    /// `--allow-bootstrap`.
    pub(crate) allow_bootstrap: bool,
    /// Discovery hit a cap or an incomplete listing: more candidates may exist.
    pub(crate) truncated: bool,
}

/// Why restore refuses (each one error, with its message and exit code, in [`select`](super::select)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The candidate failed integrity validation.
    Integrity,
    /// The anchor evidence needs a protected renewal.
    Renewal,
    /// A package from a successful or unverified run is structurally bad.
    Structural,
    /// Baseline evidence is unavailable and only the audited bootstrap recovery path can help.
    EvidenceUnavailable,
    /// Discovery was truncated: refusing to reset canonical history.
    Truncated,
    /// Nothing can be restored and bootstrap is not allowed.
    NothingRestorable,
}

/// What restore does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Record the rejection and try the next, older candidate (or decide again when none is left).
    Skip,
    /// Record the rejection of a failed candidate, if any, and print the bootstrap status.
    Bootstrap,
    /// Fail closed: nothing is written to the destination.
    Refuse(Refusal),
}

/// The decision of contract §5.4 and §5.6 (the tables in this module's documentation).
pub(crate) fn decide(situation: Situation, walk: Walk) -> Decision {
    use Decision::{Bootstrap, Refuse, Skip};
    match situation {
        Situation::Failed { failure, run } => match (failure, run) {
            (Failure::Integrity, _) => Refuse(Refusal::Integrity),
            (Failure::Renewal, _) => Refuse(Refusal::Renewal),
            (Failure::Structural, RunVerdict::NonSuccess) => Skip,
            (Failure::Structural, _) => Refuse(Refusal::Structural),
            (Failure::Unavailable, RunVerdict::NonSuccess) => Skip,
            (Failure::Unavailable, RunVerdict::Success) if walk.allow_bootstrap => {
                if walk.truncated {
                    Refuse(Refusal::Truncated)
                } else {
                    Bootstrap
                }
            }
            (Failure::Unavailable, _) => Refuse(Refusal::EvidenceUnavailable),
        },
        Situation::NoCandidates if walk.allow_bootstrap => Bootstrap,
        Situation::NoCandidates => Refuse(Refusal::NothingRestorable),
        Situation::Exhausted if walk.truncated => Refuse(Refusal::Truncated),
        Situation::Exhausted if walk.allow_bootstrap => Bootstrap,
        Situation::Exhausted => Refuse(Refusal::NothingRestorable),
    }
}

#[cfg(test)]
mod tests {
    use super::Decision::{Bootstrap, Refuse, Skip};
    use super::Failure::{Integrity, Renewal, Structural, Unavailable};
    use super::RunVerdict::{NonSuccess, Success, Unknown};
    use super::*;

    fn failed(failure: Failure, run: RunVerdict) -> Situation {
        Situation::Failed { failure, run }
    }

    #[test]
    fn run_verdict_of_a_conclusion() {
        assert_eq!(RunVerdict::of(Some("success")), Success);
        for c in NON_SUCCESS_CONCLUSIONS {
            assert_eq!(RunVerdict::of(Some(c)), NonSuccess, "{c}");
        }
        assert_eq!(RunVerdict::of(None), Unknown);
        assert_eq!(RunVerdict::of(Some("in_progress")), Unknown);
        assert_eq!(RunVerdict::of(Some("SUCCESS")), Unknown);
    }

    #[test]
    fn every_row_of_the_contract_tables() {
        const T: bool = true;
        const F: bool = false;
        // (situation, allow_bootstrap, truncated, decision): one row per case.
        let rows: &[(Situation, bool, bool, Decision)] = &[
            // Evidence unavailable, source run succeeded.
            (
                failed(Unavailable, Success),
                F,
                F,
                Refuse(Refusal::EvidenceUnavailable),
            ),
            (
                failed(Unavailable, Success),
                F,
                T,
                Refuse(Refusal::EvidenceUnavailable),
            ),
            (failed(Unavailable, Success), T, F, Bootstrap),
            (
                failed(Unavailable, Success),
                T,
                T,
                Refuse(Refusal::Truncated),
            ),
            // Evidence unavailable, failed run: skip, whatever the walk.
            (failed(Unavailable, NonSuccess), F, F, Skip),
            (failed(Unavailable, NonSuccess), T, T, Skip),
            // Evidence unavailable, unknown conclusion: fatal, even with bootstrap.
            (
                failed(Unavailable, Unknown),
                F,
                F,
                Refuse(Refusal::EvidenceUnavailable),
            ),
            (
                failed(Unavailable, Unknown),
                T,
                F,
                Refuse(Refusal::EvidenceUnavailable),
            ),
            // Structurally bad package: skipped only from a failed run.
            (failed(Structural, NonSuccess), F, F, Skip),
            (failed(Structural, NonSuccess), T, T, Skip),
            (
                failed(Structural, Success),
                T,
                F,
                Refuse(Refusal::Structural),
            ),
            (
                failed(Structural, Unknown),
                T,
                F,
                Refuse(Refusal::Structural),
            ),
            // Tampering: fatal whatever the run and the walk (failed run + tampered too).
            (failed(Integrity, Success), T, F, Refuse(Refusal::Integrity)),
            (
                failed(Integrity, NonSuccess),
                T,
                F,
                Refuse(Refusal::Integrity),
            ),
            (failed(Integrity, Unknown), F, T, Refuse(Refusal::Integrity)),
            // Renewal needed and not allowed: fatal whatever the run.
            (failed(Renewal, Success), T, F, Refuse(Refusal::Renewal)),
            (failed(Renewal, NonSuccess), T, F, Refuse(Refusal::Renewal)),
            // No candidate at all (§5.4).
            (
                Situation::NoCandidates,
                F,
                F,
                Refuse(Refusal::NothingRestorable),
            ),
            (
                Situation::NoCandidates,
                F,
                T,
                Refuse(Refusal::NothingRestorable),
            ),
            (Situation::NoCandidates, T, F, Bootstrap),
            (Situation::NoCandidates, T, T, Bootstrap),
            // Every candidate skipped.
            (Situation::Exhausted, F, T, Refuse(Refusal::Truncated)),
            (Situation::Exhausted, T, T, Refuse(Refusal::Truncated)),
            (
                Situation::Exhausted,
                F,
                F,
                Refuse(Refusal::NothingRestorable),
            ),
            (Situation::Exhausted, T, F, Bootstrap),
        ];
        for &(situation, allow_bootstrap, truncated, want) in rows {
            let walk = Walk {
                allow_bootstrap,
                truncated,
            };
            assert_eq!(decide(situation, walk), want, "{situation:?} {walk:?}");
        }
    }
}
