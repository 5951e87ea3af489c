//! Deadlines and durations computed without a panic, whatever a duration holds (a suite's limits
//! keep them small; these keep a mistake from crashing a run).

use std::time::{Duration, Instant};

/// `from + d`, or a year after `from` when `d` would overflow the clock.
pub(crate) fn deadline(from: Instant, d: Duration) -> Instant {
    from.checked_add(d)
        .or_else(|| from.checked_add(Duration::from_secs(365 * 86_400)))
        .unwrap_or(from)
}

/// `s` seconds as a duration, saturating (a negative or NaN value is zero, too large is
/// [`Duration::MAX`]).
pub(crate) fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(if s > 0.0 {
        Duration::MAX
    } else {
        Duration::ZERO
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_overflows() {
        let now = Instant::now();
        assert!(deadline(now, Duration::MAX) > now);
        assert_eq!(
            deadline(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        assert_eq!(seconds(1e308), Duration::MAX);
        assert_eq!(seconds(f64::NAN), Duration::ZERO);
        assert_eq!(seconds(-1.0), Duration::ZERO);
        assert_eq!(seconds(1.5), Duration::from_millis(1500));
    }
}
