//! The evidence artifact's effective retention, read from its REST record (`expires_at -
//! created_at`): `retention-days` above the repository's or organization's maximum is cut to that
//! maximum without an error (actions/upload-artifact, "retention-days"), so what tier1 asked for
//! (90 days) is not what GitHub keeps. Evidence that expires by the anchor renewal age (60 days)
//! can never be renewed: refused. Under 90 days the renewal window (from day 60 to expiry) is
//! shorter than designed: verified with a warning. The span is read as the nearest whole day
//! ([`retention_days`]), as GitHub sets it.

use crate::restore::evidence::ANCHOR_RENEWAL_DAYS;
use crate::store::ArtifactMeta;

/// The retention tier1's workflows ask for (`retention-days: 90`).
pub(crate) const REQUESTED_RETENTION_DAYS: i64 = 90;

/// What the record's retention allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Days from `created_at` to `expires_at`, to the nearest whole day ([`retention_days`]).
    pub(crate) days: i64,
    /// Days between the renewal age and expiry (`days - 60`).
    pub(crate) renewal_window_days: i64,
}

impl Retention {
    /// The warning for a retention under [`REQUESTED_RETENTION_DAYS`], or None.
    pub(crate) fn warning(&self, a: &ArtifactMeta) -> Option<String> {
        (self.days < REQUESTED_RETENTION_DAYS).then(|| {
            format!(
                "evidence artifact {} (id {}) is kept {} days, not {REQUESTED_RETENTION_DAYS} (the repository's or organization's artifact retention caps retention-days): the anchor renewal window is {} days instead of {}; raise the retention limit (Settings → Actions → General → Artifact and log retention)",
                a.name,
                a.id,
                self.days,
                self.renewal_window_days,
                REQUESTED_RETENTION_DAYS - ANCHOR_RENEWAL_DAYS
            )
        })
    }
}

/// The days of retention a span from `created_at` to `expires_at` records, to the nearest whole
/// day. GitHub's client sets `expires_at` to now + `retention-days` in calendar days of the
/// runner's local time (`getExpiration`, @actions/artifact `src/internal/upload/retention.ts`:
/// `setDate(getDate() + retentionDays)`) before the service stamps `created_at`, so a 90-day span
/// is a moment short of 90 days, and an hour off across a daylight-saving change: truncated
/// (`num_days`) it read 89.
pub(crate) fn retention_days(span: chrono::Duration) -> i64 {
    const DAY: i64 = 86_400;
    span.num_seconds().div_euclid(DAY) + i64::from(span.num_seconds().rem_euclid(DAY) >= DAY / 2)
}

/// The effective retention of `a`, or the refusal (expected, found) when its evidence would expire
/// by the renewal age or its record has no expiry.
pub(crate) fn effective_retention(a: &ArtifactMeta) -> Result<Retention, (String, String)> {
    let expected = format!("more than {ANCHOR_RENEWAL_DAYS} days (the anchor renewal age)");
    let Some(expires) = a.expires_at else {
        return Err((expected, "no expires_at".into()));
    };
    let days = retention_days(expires - a.created_at);
    if days <= ANCHOR_RENEWAL_DAYS {
        return Err((expected, format!("{days} days")));
    }
    Ok(Retention {
        days,
        renewal_window_days: days - ANCHOR_RENEWAL_DAYS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};

    fn meta(days: Option<i64>) -> ArtifactMeta {
        spanned(days.map(Duration::days))
    }

    /// An evidence record whose `expires_at - created_at` is `span`.
    fn spanned(span: Option<Duration>) -> ArtifactMeta {
        let created = Utc::now();
        ArtifactMeta {
            id: 7,
            name: "tier1-evidence-1-1".into(),
            size_in_bytes: 1,
            digest: None,
            expired: false,
            created_at: created,
            expires_at: span.map(|d| created + d),
            workflow_run_id: 1,
            workflow_run_head_branch: None,
            workflow_run_head_sha: None,
        }
    }

    #[test]
    fn retention_by_the_renewal_age_is_refused_and_a_short_one_warned() {
        assert_eq!(
            effective_retention(&meta(Some(60))).unwrap_err().1,
            "60 days"
        );
        assert_eq!(
            effective_retention(&meta(None)).unwrap_err().1,
            "no expires_at"
        );
        let r = effective_retention(&meta(Some(61))).unwrap();
        assert_eq!(r.renewal_window_days, 1);
        assert!(
            r.warning(&meta(Some(61)))
                .unwrap()
                .contains("is 1 days instead of 30")
        );
        assert!(
            effective_retention(&meta(Some(90)))
                .unwrap()
                .warning(&meta(Some(90)))
                .is_none()
        );
        assert!(
            effective_retention(&meta(Some(400)))
                .unwrap()
                .warning(&meta(Some(400)))
                .is_none()
        );
    }

    /// Issue 36, N10: GitHub's client sets `expires_at` to now + `retention-days` in calendar days
    /// of the runner's local time (`getExpiration`, @actions/artifact
    /// `src/internal/upload/retention.ts`: `setDate(getDate() + retentionDays)`) before it asks the
    /// service to create the artifact, which stamps `created_at` a moment later; a daylight-saving
    /// change in between moves it by an hour. The span is therefore a whole number of days give or
    /// take a little, and is read as the nearest whole day: a 90-day artifact is 90, never 89.
    #[test]
    fn retention_is_the_nearest_whole_day_of_the_recorded_span() {
        let span = |days: i64, secs: i64| Duration::days(days) + Duration::seconds(secs);
        // (expires_at - created_at, days read; None: refused by the renewal age)
        let table = [
            (span(90, 0), Some(90)),
            (span(90, -1), Some(90)),
            (span(90, -3600), Some(90)),
            (span(90, 3600), Some(90)),
            (span(89, 86399), Some(90)),
            (span(61, -2), Some(61)),
            (span(30, -1), None),
            (span(60, -1), None),
            (span(60, 3600), None),
            (span(400, -1), Some(400)),
        ];
        for (s, want) in table {
            let got = effective_retention(&spanned(Some(s))).ok().map(|r| r.days);
            assert_eq!(got, want, "span {s}");
        }
        // What is read as 90 days warns of nothing; a refusal names the rounded days.
        let ninety = spanned(Some(span(90, -1)));
        let r = effective_retention(&ninety).unwrap();
        assert_eq!(r.renewal_window_days, 30);
        assert!(r.warning(&ninety).is_none());
        assert_eq!(
            effective_retention(&spanned(Some(span(60, -1))))
                .unwrap_err()
                .1,
            "60 days"
        );
    }
}
