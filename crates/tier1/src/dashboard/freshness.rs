//! Warnings that a history is going stale, before it is lost: the newest run is older than the
//! configured number of days (the nightly stopped or fails before publishing), or the anchor's
//! evidence comes within [`WARN_BEFORE_DAYS`] of the 60-day renewal (from 60 days on
//! `readiness` says how long is left before the 90-day expiry).

use super::model::Dashboard;
use super::readiness::{AnchorAge, Note, RENEWAL_DAYS};

/// Default of `--stale-after-days`.
pub const DEFAULT_STALE_AFTER_DAYS: i64 = 3;
/// How many days before the renewal age the dashboard starts warning.
pub const WARN_BEFORE_DAYS: i64 = 14;

/// The freshness notes of `dash` (its clock is `dash.now`).
pub fn notes(dash: &Dashboard, anchor_age: Option<&AnchorAge>) -> Vec<Note> {
    let mut out = Vec::new();
    if let Some(latest) = dash.latest_evidence()
        && let Some(t) = latest.time
    {
        let age_days = (dash.now - t).num_days();
        if age_days > dash.stale_after_days {
            out.push(Note::Stale {
                run_id: latest.row.run_id.clone(),
                age_days,
                limit_days: dash.stale_after_days,
            });
        }
    }
    if let Some(age) = anchor_age
        && age.age_days >= RENEWAL_DAYS - WARN_BEFORE_DAYS
        && age.age_days < RENEWAL_DAYS
    {
        out.push(Note::RenewalSoon(age.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::dashboard::readiness::{Note, assess};
    use crate::dashboard::testkit::*;

    fn at(now: &str, stale_after: i64) -> Vec<Note> {
        let mut d = dash(healthy());
        d.now = crate::dashboard::model::parse_time(now).expect("now");
        d.stale_after_days = stale_after;
        assess(&d).notes
    }

    #[test]
    fn warns_when_the_newest_run_is_older_than_the_limit() {
        let latest = dash(healthy()).latest_evidence().unwrap().time.unwrap();
        let days = |n: i64| (latest + chrono::Duration::days(n)).to_rfc3339();
        assert!(!at(&days(3), 3).iter().any(|n| matches!(n, Note::Stale { .. })));
        let notes = at(&days(4), 3);
        let stale = notes
            .iter()
            .find(|n| matches!(n, Note::Stale { .. }))
            .expect("a stale warning");
        let text = stale.to_string();
        assert!(text.contains("4 days old") && text.contains("3 days"), "{text}");
        assert!(!at(&days(4), 7).iter().any(|n| matches!(n, Note::Stale { .. })));
    }

    #[test]
    fn warns_14_days_before_the_anchor_needs_renewal() {
        let d = dash(healthy());
        let anchor = d.anchor_run().unwrap().time.unwrap();
        let days = |n: i64| (anchor + chrono::Duration::days(n)).to_rfc3339();
        let soon = |n| {
            at(&days(n), 10_000)
                .into_iter()
                .find(|n| matches!(n, Note::RenewalSoon(_)))
        };
        assert!(soon(45).is_none());
        let text = soon(46).expect("a renewal warning").to_string();
        assert!(text.contains("46 days old") && text.contains("14 days"), "{text}");
        assert!(soon(59).is_some());
        assert!(soon(60).is_none(), "from day 60 the renewal note says it");
    }
}
