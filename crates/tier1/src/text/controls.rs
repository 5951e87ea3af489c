//! Control characters (C0, DEL, C1 and the bidirectional overrides): found, refused in free-text
//! inputs, and shown everywhere else as visible `\u{..}` escapes.

use std::borrow::Cow;

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
}
