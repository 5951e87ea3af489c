//! Retry policy for idempotent calls: which responses are transient (5xx, 408, 429, secondary rate
//! limits) and how long to wait (bounded exponential backoff, `retry-after` honoured up to a cap).

use std::time::Duration;

/// Bounds of the retry loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first (>= 1).
    pub(crate) max_attempts: u32,
    /// First backoff delay; doubled after each failed attempt.
    pub base_delay: Duration,
    /// Largest backoff delay.
    pub max_delay: Duration,
    /// Largest server-requested wait (`retry-after`, rate-limit reset) we accept; a longer one is
    /// reported as an error instead of sleeping.
    pub max_server_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(16),
            max_server_wait: Duration::from_secs(60),
        }
    }
}

/// The response facts the decision needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ResponseFacts {
    /// HTTP status.
    pub(crate) status: u16,
    /// `retry-after` header, raw.
    pub(crate) retry_after: Option<String>,
    /// `x-ratelimit-remaining` header, raw.
    pub(crate) ratelimit_remaining: Option<String>,
    /// `x-ratelimit-reset` header (UTC epoch seconds), raw.
    pub(crate) ratelimit_reset: Option<String>,
}

/// What to do after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Not transient (or success): hand the response to the caller.
    Stop,
    /// Wait this long and try again.
    RetryAfter(Duration),
    /// Transient, but the server asks for a wait longer than the cap, or attempts are used up.
    GiveUp(String),
}

impl RetryPolicy {
    /// Backoff before attempt `attempt + 1` (attempt is 1-based).
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// Decide after attempt `attempt` (1-based) produced `facts`; `now_epoch` is the current
    /// UTC time in seconds (for `x-ratelimit-reset`).
    pub(crate) fn decide(&self, attempt: u32, facts: &ResponseFacts, now_epoch: i64) -> Decision {
        let server_wait = server_wait(facts, now_epoch);
        let transient = match facts.status {
            408 | 429 => true,
            500..=599 => true,
            // A 403 is a secondary rate limit only when GitHub says so through these headers.
            403 => facts.retry_after.is_some() || facts.ratelimit_remaining.as_deref() == Some("0"),
            _ => false,
        };
        if !transient {
            return Decision::Stop;
        }
        if attempt >= self.max_attempts {
            return Decision::GiveUp(format!(
                "still failing after {attempt} attempts (transient status {})",
                facts.status
            ));
        }
        match server_wait {
            Some(w) if w > self.max_server_wait => Decision::GiveUp(format!(
                "server asks to wait {} s, more than the cap of {} s",
                w.as_secs(),
                self.max_server_wait.as_secs()
            )),
            Some(w) => Decision::RetryAfter(w),
            None => Decision::RetryAfter(self.backoff(attempt)),
        }
    }
}

/// The wait the server requested: `retry-after` (seconds or HTTP date), else the rate-limit reset
/// when `x-ratelimit-remaining` is 0.
fn server_wait(facts: &ResponseFacts, now_epoch: i64) -> Option<Duration> {
    if let Some(ra) = facts.retry_after.as_deref().map(str::trim) {
        if let Ok(secs) = ra.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        if let Ok(at) = chrono::DateTime::parse_from_rfc2822(ra) {
            let secs = (at.timestamp() - now_epoch).max(0);
            return Some(Duration::from_secs(secs.unsigned_abs()));
        }
    }
    if facts.ratelimit_remaining.as_deref() == Some("0") {
        let reset = facts
            .ratelimit_reset
            .as_deref()?
            .trim()
            .parse::<i64>()
            .ok()?;
        return Some(Duration::from_secs(
            (reset - now_epoch).max(0).unsigned_abs(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(status: u16) -> ResponseFacts {
        ResponseFacts {
            status,
            ..Default::default()
        }
    }

    #[test]
    fn transient_statuses_retry_with_doubling_backoff() {
        let p = RetryPolicy::default();
        for s in [500, 502, 503, 408, 429] {
            assert_eq!(
                p.decide(1, &facts(s), 0),
                Decision::RetryAfter(Duration::from_secs(1))
            );
        }
        assert_eq!(
            p.decide(3, &facts(500), 0),
            Decision::RetryAfter(Duration::from_secs(4))
        );
        assert!(matches!(p.decide(4, &facts(500), 0), Decision::GiveUp(_)));
        assert_eq!(p.backoff(30), p.max_delay);
    }

    #[test]
    fn permanent_statuses_stop() {
        let p = RetryPolicy::default();
        for s in [200, 302, 400, 401, 403, 404, 410, 422] {
            assert_eq!(p.decide(1, &facts(s), 0), Decision::Stop, "{s}");
        }
    }

    #[test]
    fn secondary_rate_limit_honours_headers_and_cap() {
        let p = RetryPolicy::default();
        let mut f = facts(403);
        f.retry_after = Some("7".into());
        assert_eq!(
            p.decide(1, &f, 0),
            Decision::RetryAfter(Duration::from_secs(7))
        );
        f.retry_after = Some("600".into());
        assert!(matches!(p.decide(1, &f, 0), Decision::GiveUp(m) if m.contains("600")));
        let mut f = facts(403);
        f.ratelimit_remaining = Some("0".into());
        f.ratelimit_reset = Some("1030".into());
        assert_eq!(
            p.decide(1, &f, 1000),
            Decision::RetryAfter(Duration::from_secs(30))
        );
        let mut f = facts(429);
        f.retry_after = Some("Thu, 01 Jan 1970 00:00:10 GMT".into());
        assert_eq!(
            p.decide(1, &f, 4),
            Decision::RetryAfter(Duration::from_secs(6))
        );
    }
}
