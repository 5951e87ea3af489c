//! URLs made safe inside a message: the userinfo, query and fragment of every `scheme://` URL
//! replaced.

use super::controls::is_control;
use std::borrow::Cow;

/// Characters that end a URL inside a message (besides whitespace and control characters).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || is_control(c) || matches!(c, '"' | '\'' | '<' | '>' | '`')
}

/// One URL token made safe: `scheme://user:pass@host/path?q#f` becomes
/// `scheme://***@host/path?[redacted]` (the fragment likewise).
fn redact_one(url: &str, out: &mut String) {
    let Some(sep) = url.find("://") else {
        out.push_str(url);
        return;
    };
    let (scheme, rest) = url.split_at(sep + 3);
    out.push_str(scheme);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str("***");
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    match tail.find(['?', '#']) {
        Some(cut) => {
            out.push_str(&tail[..cut]);
            out.push_str(if tail[cut..].starts_with('?') {
                "?[redacted]"
            } else {
                "#[redacted]"
            });
        }
        None => out.push_str(tail),
    }
}

/// `s` with the userinfo, query and fragment of every `scheme://` URL replaced.
pub(crate) fn redact_urls(s: &str) -> Cow<'_, str> {
    if !s.contains("://") {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(sep) = rest.find("://") {
        let start = rest[..sep]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .last()
            .map_or(sep, |(i, _)| i);
        let end = rest[sep..]
            .char_indices()
            .find(|(_, c)| ends_url(*c))
            .map_or(rest.len(), |(i, _)| sep + i);
        out.push_str(&rest[..start]);
        redact_one(&rest[start..end], &mut out);
        rest = &rest[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_userinfo_query_and_fragment() {
        let cases = [
            (
                "--workflow-run \"https://github.example/o/r/actions/runs/1?token=S\" must be",
                "--workflow-run \"https://github.example/o/r/actions/runs/1?[redacted]\" must be",
            ),
            (
                "GITHUB_API_URL https://u:p@api.example:8443/x#frag: bad",
                "GITHUB_API_URL https://***@api.example:8443/x#[redacted] bad",
            ),
            (
                "(see http://h/a?x=(s) and local://store/actions/runs/7)",
                "(see http://h/a?[redacted] and local://store/actions/runs/7)",
            ),
            ("no url here: a?b=c", "no url here: a?b=c"),
            (
                "tab\\tin https://h/a\\tb?t=S\" x",
                "tab\\tin https://h/a\\tb?[redacted]\" x",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact_urls(input), want, "{input}");
            assert_eq!(redact_urls(want), want, "idempotent: {want}");
        }
    }
}
