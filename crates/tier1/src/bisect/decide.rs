//! What a bisection does after each side-by-side comparison: a pure function of the comparison's
//! cause, the side it blames, its verdict and how many times the candidate was measured;
//! [`step`](super::step) measures and [`bisect`](super::run::bisect) turns a stop into its error.
//!
//! | cause | side | attempt | next |
//! |---|---|---|---|
//! | too noisy | any | first | measure once more with twice the budget ([`doubled`]) |
//! | cancelled | any | any | stop: cancelled (exit 130) |
//! | invalid request, not a repository, evidence | any | any | stop: invalid |
//! | any other | anchor | any | stop: the good commit is unusable |
//! | none, or any other on the current side | — | any | mark the candidate by its verdict ([`mark_of`]) |

use crate::bisect::report::BisectStatus;
use crate::bisect::search::Mark;
use crate::sidebyside::{Budget, Cause, Side, Verdict};

/// Why a bisection stops before its search ends (each one error in [`bisect`](super::run::bisect)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGINT or SIGTERM arrived.
    Cancelled,
    /// The comparison refused the request, the repository or the evidence directory.
    Invalid,
    /// The good commit cannot be built or run.
    GoodUnusable,
}

/// What to do with the candidate after a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Too noisy at the first attempt: measure once more with twice the budget.
    Again,
    /// Stop the bisection.
    Stop(Stop),
    /// Mark the candidate and go on with the search.
    Mark(Mark),
}

/// The next step after the `attempt`-th comparison of a candidate (the table in the module docs).
pub(crate) fn next_step(
    cause: Option<Cause>,
    side: Option<Side>,
    verdict: Verdict,
    attempt: u32,
) -> Next {
    match (cause, side) {
        (Some(Cause::TooNoisy), _) if attempt == 1 => Next::Again,
        (Some(Cause::Cancelled), _) => Next::Stop(Stop::Cancelled),
        (Some(Cause::InvalidRequest | Cause::NotARepository | Cause::Evidence), _) => {
            Next::Stop(Stop::Invalid)
        }
        (Some(_), Some(Side::Anchor)) => Next::Stop(Stop::GoodUnusable),
        _ => Next::Mark(mark_of(verdict)),
    }
}

/// A candidate's mark by its comparison with the good commit: `worse` is bad, `same` is good,
/// `unknown` is skipped.
pub(crate) fn mark_of(verdict: Verdict) -> Mark {
    match verdict {
        Verdict::Worse => Mark::Bad,
        Verdict::Same => Mark::Good,
        Verdict::Unknown => Mark::Skip,
    }
}

/// The budget of the second measurement of a too noisy candidate: twice the seconds and rounds.
pub(crate) fn doubled(budget: Budget) -> Budget {
    Budget {
        seconds: 2.0 * budget.seconds,
        max_rounds: budget.max_rounds.saturating_mul(2),
        ..budget
    }
}

/// The report's status: found with exactly one suspect, else ambiguous.
pub(crate) fn status(suspects: usize) -> BisectStatus {
    if suspects == 1 {
        BisectStatus::Found
    } else {
        BisectStatus::Ambiguous
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_step_rows() {
        use Cause::*;
        /// A comparison's cause, side, verdict and attempt, and the next step.
        type Row = (Option<Cause>, Option<Side>, Verdict, u32, Next);
        let rows: [Row; 16] = [
            (None, None, Verdict::Worse, 1, Next::Mark(Mark::Bad)),
            (None, None, Verdict::Same, 1, Next::Mark(Mark::Good)),
            (None, None, Verdict::Same, 2, Next::Mark(Mark::Good)),
            (Some(TooNoisy), None, Verdict::Unknown, 1, Next::Again),
            (
                Some(TooNoisy),
                Some(Side::Anchor),
                Verdict::Unknown,
                1,
                Next::Again,
            ),
            (
                Some(TooNoisy),
                None,
                Verdict::Unknown,
                2,
                Next::Mark(Mark::Skip),
            ),
            (
                Some(TooNoisy),
                Some(Side::Anchor),
                Verdict::Unknown,
                2,
                Next::Stop(Stop::GoodUnusable),
            ),
            (
                Some(Cancelled),
                None,
                Verdict::Unknown,
                1,
                Next::Stop(Stop::Cancelled),
            ),
            (
                Some(Cancelled),
                Some(Side::Anchor),
                Verdict::Unknown,
                2,
                Next::Stop(Stop::Cancelled),
            ),
            (
                Some(InvalidRequest),
                None,
                Verdict::Unknown,
                1,
                Next::Stop(Stop::Invalid),
            ),
            (
                Some(NotARepository),
                None,
                Verdict::Unknown,
                1,
                Next::Stop(Stop::Invalid),
            ),
            (
                Some(Evidence),
                Some(Side::Anchor),
                Verdict::Unknown,
                2,
                Next::Stop(Stop::Invalid),
            ),
            (
                Some(BuildFailed),
                Some(Side::Anchor),
                Verdict::Unknown,
                1,
                Next::Stop(Stop::GoodUnusable),
            ),
            (
                Some(BuildFailed),
                Some(Side::Current),
                Verdict::Unknown,
                1,
                Next::Mark(Mark::Skip),
            ),
            (
                Some(CommandFailed),
                None,
                Verdict::Unknown,
                1,
                Next::Mark(Mark::Skip),
            ),
            (
                Some(CommitNotFound),
                Some(Side::Current),
                Verdict::Unknown,
                2,
                Next::Mark(Mark::Skip),
            ),
        ];
        for (cause, side, verdict, attempt, want) in rows {
            assert_eq!(
                next_step(cause, side, verdict, attempt),
                want,
                "{cause:?} {side:?} {verdict:?} attempt {attempt}"
            );
        }
    }

    #[test]
    fn doubled_and_status_rows() {
        let b = Budget {
            seconds: 30.0,
            min_rounds: 10,
            max_rounds: u32::MAX - 1,
            precision_pct: 2.0,
            confidence: 0.95,
        };
        let d = doubled(b);
        assert_eq!((d.seconds, d.max_rounds), (60.0, u32::MAX));
        assert_eq!(
            (d.min_rounds, d.precision_pct, d.confidence),
            (10, 2.0, 0.95)
        );
        for (n, want) in [
            (0, BisectStatus::Ambiguous),
            (1, BisectStatus::Found),
            (2, BisectStatus::Ambiguous),
        ] {
            assert_eq!(status(n), want, "{n} suspects");
        }
    }
}
