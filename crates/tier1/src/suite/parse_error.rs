//! A deserializer error of the suite file in tier1's words, on one line: `line L column C:
//! <what>`, without the source snippet, the parser's `<input>` name or its option hints. A number
//! out of its field's range names the field and the value as written (`iterations: expected a
//! whole number from 0 to 4294967295, found 4294967296`), read back from the text at the error's
//! location.

/// The message of `e`, a failure to deserialize the suite `text`.
pub(super) fn message(e: &serde_saphyr::Error, text: &str) -> String {
    let inner = e.without_snippet().to_string();
    let first = inner.lines().next().unwrap_or_default();
    let what = first.trim_start_matches("error: ");
    let what = match what.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest,
        _ => what,
    };
    let what = what.split(" at line ").next().unwrap_or(what);
    let at = e
        .location()
        .filter(|l| l.line() > 0)
        .map(|l| (l.line() as usize, l.column() as usize));
    let written = at.and_then(|(line, column)| scalar_at(text, line, column));
    let range = match what {
        "invalid u32" => Some(u64::from(u32::MAX)),
        "invalid u64" | "invalid usize" => Some(u64::MAX),
        _ => None,
    };
    let what = match (range, what, &written) {
        (Some(max), _, Some((key, value))) => {
            format!("{key}: expected a whole number from 0 to {max}, found {value}")
        }
        (Some(max), _, None) => format!("expected a whole number from 0 to {max}"),
        (None, "invalid f64" | "invalid f32", Some((key, value))) => {
            format!("{key}: expected a number, found {value}")
        }
        (None, "invalid f64" | "invalid f32", None) => "expected a number".to_string(),
        (None, other, _) => other.split(", set ").next().unwrap_or(other).to_string(),
    };
    match at {
        Some((line, column)) => format!("line {line} column {column}: {what}"),
        None => what,
    }
}

/// The `key: value` item at 1-based `line` and `column` of `text` (block or flow style), as
/// written; `None` when the location holds no such item.
fn scalar_at(text: &str, line: usize, column: usize) -> Option<(String, String)> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let start = l
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(l.len(), |(i, _)| i);
    let (before, from) = l.split_at(start);
    let token_end = |s: &str| s.find([',', '}', ']', '#']).unwrap_or(s.len());
    // The location is the value (`key: |value`) or the key itself (`|key: value`).
    let (key_part, value) = match from[..token_end(from)].split_once(':') {
        Some((k, v)) => (k.to_string(), v.trim().to_string()),
        None => (
            before.to_string(),
            from[..token_end(from)].trim().to_string(),
        ),
    };
    let key = key_part
        .trim_end()
        .trim_end_matches(':')
        .rsplit(|c: char| c.is_whitespace() || matches!(c, '{' | ',' | '-'))
        .find(|k| !k.is_empty())?
        .to_string();
    (!value.is_empty()).then_some((key, shown(&value)))
}

/// At most 40 characters of a value, visible as text.
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(40).collect();
    crate::text::for_humans(&cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_is_read_back_from_either_end() {
        let text = "profiles:\n  p:\n    iterations: 4294967296\n    t: { rtol: -5, atol: 1 }\n";
        let want = Some(("iterations".to_string(), "4294967296".to_string()));
        assert_eq!(scalar_at(text, 3, 17), want, "at the value");
        assert_eq!(scalar_at(text, 3, 5), want, "at the key");
        assert_eq!(
            scalar_at(text, 4, 16),
            Some(("rtol".to_string(), "-5".to_string()))
        );
        assert_eq!(scalar_at(text, 9, 1), None);
    }
}
