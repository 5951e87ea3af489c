//! Credentials redacted from text: secrets registered at start (the token tier1 was given), the
//! value of an `Authorization` header or a `Bearer` scheme, and GitHub token shapes.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
