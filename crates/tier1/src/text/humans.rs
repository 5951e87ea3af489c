//! Text fit for people ([`for_humans`]): credentials and URLs redacted, then control characters
//! made visible.

use super::controls::escape_controls;
use super::{redact_secrets, redact_urls};
use std::borrow::Cow;

/// A message or log line fit for people: credentials and URLs redacted, then control characters
/// made visible.
pub(crate) fn for_humans(s: &str) -> Cow<'_, str> {
    let secrets = redact_secrets(s);
    let urls = redact_urls(&secrets);
    match escape_controls(&urls) {
        Cow::Borrowed(b) if b.len() == s.len() && b == s => Cow::Borrowed(s),
        other => Cow::Owned(other.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_redacted_then_escaped() {
        assert_eq!(
            for_humans("x https://a:b@h/p?q\n::error::forged"),
            "x https://***@h/p?[redacted]\\u{a}::error::forged"
        );
    }
}
