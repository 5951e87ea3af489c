//! Warnings that a history is going stale, before it is lost: the newest run is older than the
//! configured number of days (the nightly stopped, or fails before publishing), or the anchor's
//! evidence comes within `WARN_BEFORE_DAYS` of the 60-day renewal (from 60 days on, the
//! readiness notes say how long is left before the 90-day expiry). The evidence ages live here.

use super::model::Dashboard;
use std::fmt;

/// The anchor's evidence must be renewed from this age (days) on.
pub(crate) const RENEWAL_DAYS: i64 = 60;
/// The anchor's evidence expires at this age (days).
pub(crate) const EXPIRY_DAYS: i64 = 90;
/// How many days before the renewal age the dashboard starts warning.
pub(crate) const WARN_BEFORE_DAYS: i64 = 14;
pub use super::model::DEFAULT_STALE_AFTER_DAYS;

/// A freshness warning (shown among the verdict's notes; it never blocks the release).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Warning {
    /// The newest run is older than the configured limit: nights stopped being published.
    Stale {
        /// The newest run.
        run_id: String,
        /// Its age in whole days.
        age_days: i64,
        /// The limit (`--stale-after-days`).
        limit_days: i64,
    },
    /// The anchor's evidence reaches the renewal age soon.
    RenewalSoon {
        /// The anchor.
        run_id: String,
        /// Its evidence's age in whole days.
        age_days: i64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Stale {
                run_id,
                age_days,
                limit_days,
            } => write!(
                f,
                "stale history: the newest run {run_id} is {age_days} days old (more than {limit_days} days): \
                 nights are not being published; every artifact expires after {EXPIRY_DAYS} days (export the history, docs/runbook.md)"
            ),
            Warning::RenewalSoon { run_id, age_days } => write!(
                f,
                "anchor {run_id} evidence is {age_days} days old: renew it within {} days, before it needs a protected renewal at {RENEWAL_DAYS} days",
                RENEWAL_DAYS - age_days
            ),
        }
    }
}

/// The freshness warnings of `dash` against its clock (`dash.now`).
pub(crate) fn warnings(dash: &Dashboard) -> Vec<Warning> {
    let mut out = Vec::new();
    let age = |t: chrono::DateTime<chrono::Utc>| (dash.now - t).num_days();
    if let Some(latest) = dash.latest_evidence()
        && let Some(t) = latest.time
        && age(t) > dash.stale_after_days
    {
        out.push(Warning::Stale {
            run_id: latest.row.run_id.clone(),
            age_days: age(t),
            limit_days: dash.stale_after_days,
        });
    }
    if let Some(anchor) = dash.anchor_run()
        && let Some(t) = anchor.time
        && (RENEWAL_DAYS - WARN_BEFORE_DAYS..RENEWAL_DAYS).contains(&age(t))
    {
        out.push(Warning::RenewalSoon {
            run_id: anchor.row.run_id.clone(),
            age_days: age(t),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Warning;
    use crate::dashboard::readiness::{Note, assess};
    use crate::dashboard::testkit::*;

    fn at(now: &str, stale_after: i64) -> Vec<Warning> {
        let mut d = dash(healthy());
        d.now = crate::dashboard::model::parse_time(now).expect("now");
        d.stale_after_days = stale_after;
        assess(&d)
            .notes
            .into_iter()
            .filter_map(|n| match n {
                Note::Freshness(w) => Some(w),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn warns_when_the_newest_run_is_older_than_the_limit() {
        let latest = dash(healthy()).latest_evidence().unwrap().time.unwrap();
        let days = |n: i64| (latest + chrono::Duration::days(n)).to_rfc3339();
        let stale = |w: &Warning| matches!(w, Warning::Stale { .. });
        assert!(!at(&days(3), 3).iter().any(stale));
        let notes = at(&days(4), 3);
        let text = notes
            .iter()
            .find(|w| stale(w))
            .expect("a stale warning")
            .to_string();
        assert!(
            text.contains("4 days old") && text.contains("3 days"),
            "{text}"
        );
        assert!(!at(&days(4), 7).iter().any(stale));
    }

    #[test]
    fn warns_14_days_before_the_anchor_needs_renewal() {
        let d = dash(healthy());
        let anchor = d.anchor_run().unwrap().time.unwrap();
        let days = |n: i64| (anchor + chrono::Duration::days(n)).to_rfc3339();
        let soon = |n| {
            at(&days(n), 10_000)
                .into_iter()
                .find(|w| matches!(w, Warning::RenewalSoon { .. }))
        };
        assert!(soon(45).is_none());
        let text = soon(46).expect("a renewal warning").to_string();
        assert!(
            text.contains("46 days old") && text.contains("14 days"),
            "{text}"
        );
        assert!(soon(59).is_some());
        assert!(soon(60).is_none(), "from day 60 the renewal note says it");
    }
}
