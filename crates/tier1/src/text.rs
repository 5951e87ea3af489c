//! Text that reaches people, made safe in one place: control characters (C0, DEL, C1, and the
//! bidirectional overrides that reorder what a reader sees) are refused in free-text inputs and
//! shown as visible `\u{..}` escapes everywhere else, URLs lose their userinfo, query and
//! fragment, and credentials are redacted: the value of an `Authorization` header or a `Bearer`
//! scheme, GitHub token shapes (`ghp_…`, `ghs_…`), and every secret registered with
//! [`register_secret`] (the token tier1 was given). Every error message, log line, annotation and
//! rendered page goes through here.

pub(crate) mod numbers;

pub(crate) use numbers::{fmt_apart, fmt_pct, fmt_sig};
use std::borrow::Cow;
use std::sync::Mutex;

/// What a redacted credential is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";
/// Shortest secret [`register_secret`] keeps (shorter ones would redact ordinary words).
pub(crate) const MIN_SECRET_CHARS: usize = 6;

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Redact `secret` (a token read from the environment) from every message from now on.
pub(crate) fn register_secret(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let mut all = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    if !all.iter().any(|s| s == secret) {
        all.push(secret.to_string());
    }
}

/// True for a character of a credential value (token alphabets: base64, URL-safe, JWT dots).
fn credential_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
}

/// Replace the credential starting at byte `from` of `s` (up to the first non-credential
/// character) and return where the rest begins.
fn skip_credential(s: &str, from: usize) -> usize {
    s[from..]
        .char_indices()
        .find(|(_, c)| !credential_char(*c))
        .map_or(s.len(), |(i, _)| from + i)
}

/// `s` with credentials redacted (see the module docs): registered secrets anywhere, the value
/// after `Authorization:` (its scheme kept) or `Bearer `, and GitHub token shapes.
pub(crate) fn redact_secrets(s: &str) -> Cow<'_, str> {
    let mut out = s.to_string();
    let mut secrets = SECRETS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // The longest first: a secret that another one contains (or starts) must not leave the rest
    // of the longer one readable.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in &secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    let lower = out.to_ascii_lowercase();
    let mut result = String::with_capacity(out.len());
    let mut i = 0;
    let markers: [&str; 2] = ["authorization:", "bearer "];
    while i < out.len() {
        let found = markers
            .iter()
            .filter_map(|m| lower[i..].find(m).map(|at| (i + at, *m)))
            .chain(
                ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]
                    .iter()
                    .filter_map(|m| lower[i..].find(m).map(|at| (i + at, "")))
                    .filter(|(at, _)| {
                        *at == 0 || !credential_char(out[..*at].chars().next_back().unwrap_or(' '))
                    }),
            )
            .min_by_key(|(at, _)| *at);
        let Some((at, marker)) = found else {
            result.push_str(&out[i..]);
            break;
        };
        let mut value = at + marker.len();
        result.push_str(&out[i..value]);
        if marker == "authorization:" {
            // Keep the scheme word (`Bearer`, `token`) so the reader sees what was redacted.
            let rest = &out[value..];
            let spaces = rest.len() - rest.trim_start().len();
            result.push_str(&rest[..spaces]);
            value += spaces;
            let word = skip_credential(&out, value);
            let scheme = out[value..word].to_ascii_lowercase();
            if matches!(scheme.as_str(), "bearer" | "token" | "basic") {
                result.push_str(&out[value..word]);
                let after = &out[word..];
                let gap = after.len() - after.trim_start_matches(' ').len();
                result.push_str(&after[..gap]);
                value = word + gap;
            }
        }
        let end = skip_credential(&out, value);
        if end > value {
            result.push_str(REDACTED);
        }
        i = end.max(value);
    }
    if result == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(result)
    }
}

/// True for a character that must never reach a terminal, a log or a page raw: Unicode `Cc`
/// (C0, DEL, C1) and the bidirectional marks, embeddings, overrides and isolates.
pub(crate) fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// The first control character of `s` and its byte offset.
pub(crate) fn first_control(s: &str) -> Option<(usize, char)> {
    s.char_indices().find(|(_, c)| is_control(*c))
}

/// Refuse free text holding a control character: `Err` names `field`, the character and where it
/// is (never the raw character itself).
pub(crate) fn check_printable(field: &str, s: &str) -> Result<(), String> {
    match first_control(s) {
        None => Ok(()),
        Some((at, c)) => Err(format!(
            "{field} contains control character U+{:04X} at byte {at}: expected printable text (no control, line-break or bidirectional characters)",
            c as u32
        )),
    }
}

/// Append `c` to `out`, a control character as its visible escape `\u{1b}`.
pub(crate) fn push_visible(out: &mut String, c: char) {
    if is_control(c) {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// `s` with every control character written as its visible escape.
pub(crate) fn escape_controls(s: &str) -> Cow<'_, str> {
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
    fn credentials_echoed_by_a_server_are_redacted() {
        register_secret("s3cret-token-value");
        let echoed = "HTTP 401: bad credentials; you sent Authorization: Bearer s3cret-token-value (header) and authorization:token ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let shown = redact_secrets(echoed);
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(!shown.contains("ghp_abc"), "{shown}");
        assert!(
            shown.contains("Authorization: Bearer [redacted]"),
            "{shown}"
        );
        assert!(shown.contains("authorization:token [redacted]"), "{shown}");
        assert_eq!(
            redact_secrets("{\"message\":\"x\",\"token\":\"s3cret-token-value\"}"),
            "{\"message\":\"x\",\"token\":\"[redacted]\"}"
        );
        assert_eq!(
            redact_secrets("see Bearer abc.def-ghi_jkl= now"),
            "see Bearer [redacted] now"
        );
        for plain in [
            "no secret here",
            "GITHUB_TOKEN is not set",
            "a token bucket",
            "Authorization failed",
        ] {
            assert!(matches!(redact_secrets(plain), Cow::Borrowed(_)), "{plain}");
        }
        register_secret("abc");
        assert_eq!(redact_secrets("abc"), "abc", "too short to register");
    }

    #[test]
    fn a_secret_inside_a_longer_one_does_not_leave_the_rest_readable() {
        // Registered shorter first, as a test's token and the real one can be.
        register_secret("q7overlap");
        register_secret("q7overlap-longer-secret");
        assert_eq!(
            redact_secrets("token q7overlap-longer-secret and q7overlap"),
            "token [redacted] and [redacted]"
        );
    }

    #[test]
    fn messages_are_redacted_then_escaped() {
        assert_eq!(
            for_humans("x https://a:b@h/p?q\n::error::forged"),
            "x https://***@h/p?[redacted]\\u{a}::error::forged"
        );
    }
}
