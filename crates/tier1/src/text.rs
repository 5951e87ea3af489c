//! Text that reaches people, made safe in one place: control characters (C0, DEL, C1, and the
//! bidirectional overrides that reorder what a reader sees) are refused in free-text inputs and
//! shown as visible `\u{..}` escapes everywhere else, and URLs lose their userinfo, query and
//! fragment. Every error message, log line, annotation and rendered page goes through here.

pub mod numbers;

pub use numbers::{fmt_apart, fmt_pct, fmt_sig};
use std::borrow::Cow;

/// True for a character that must never reach a terminal, a log or a page raw: Unicode `Cc`
/// (C0, DEL, C1) and the bidirectional marks, embeddings, overrides and isolates.
pub fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// The first control character of `s` and its byte offset.
pub fn first_control(s: &str) -> Option<(usize, char)> {
    s.char_indices().find(|(_, c)| is_control(*c))
}

/// Refuse free text holding a control character: `Err` names `field`, the character and where it
/// is (never the raw character itself).
pub fn check_printable(field: &str, s: &str) -> Result<(), String> {
    match first_control(s) {
        None => Ok(()),
        Some((at, c)) => Err(format!(
            "{field} contains control character U+{:04X} at byte {at}: expected printable text (no control, line-break or bidirectional characters)",
            c as u32
        )),
    }
}

/// Append `c` to `out`, a control character as its visible escape `\u{1b}`.
pub fn push_visible(out: &mut String, c: char) {
    if is_control(c) {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// `s` with every control character written as its visible escape.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    if first_control(s).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

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
pub fn redact_urls(s: &str) -> Cow<'_, str> {
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

/// A message or log line fit for people: URLs redacted, then control characters made visible.
pub fn for_humans(s: &str) -> Cow<'_, str> {
    match redact_urls(s) {
        Cow::Borrowed(b) => escape_controls(b),
        Cow::Owned(o) => Cow::Owned(escape_controls(&o).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_found_refused_and_made_visible() {
        for c in [
            '\u{1b}', '\u{7}', '\n', '\t', '\u{7f}', '\u{9b}', '\u{202e}', '\u{2066}',
        ] {
            assert!(is_control(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '→', '\u{200d}'] {
            assert!(!is_control(c), "{c:?}");
        }
        let e = check_printable("--note", "ok\u{1b}[2J").unwrap_err();
        assert_eq!(
            e,
            "--note contains control character U+001B at byte 2: expected printable text (no control, line-break or bidirectional characters)"
        );
        assert!(check_printable("--note", "Reviewed → fine").is_ok());
        assert_eq!(
            escape_controls("a\u{1b}]0;x\u{7}\nb\u{202e}"),
            "a\\u{1b}]0;x\\u{7}\\u{a}b\\u{202e}"
        );
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
    }

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

    #[test]
    fn messages_are_redacted_then_escaped() {
        assert_eq!(
            for_humans("x https://a:b@h/p?q\n::error::forged"),
            "x https://***@h/p?[redacted]\\u{a}::error::forged"
        );
    }
}
