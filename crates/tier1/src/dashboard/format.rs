//! Text rules shared by the HTML and Markdown renderers: escaping, number formats, short commits,
//! the scrub that keeps absolute and runner paths out of every report, and the HTML fragments the
//! page's sections share (scrubbed text, links, evidence references).

use super::model::{Dashboard, EvidenceRef, RunView};
use crate::history::model::{Acceptance, ChangeRow};

/// The stored name of an acceptance kind.
pub(crate) fn acceptance(kind: Acceptance) -> &'static str {
    match kind {
        Acceptance::AcceptHistoryAnchor => "accept_history_anchor",
        Acceptance::AcceptRegressions => "accept_regressions",
        Acceptance::Clean => "clean",
        Acceptance::UpdateExpectations => "update_expectations",
    }
}

/// Escape text for HTML element content and double-quoted attributes; control characters are shown
/// as visible escapes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => crate::text::push_visible(&mut out, c),
        }
    }
    out
}

/// Escape text for a Markdown table cell or list item: HTML-escaped, pipes and backticks escaped,
/// line breaks folded into spaces, other control characters shown as visible escapes.
pub(crate) fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '`' => out.push_str("\\`"),
            '*' => out.push_str("\\*"),
            '_' => out.push_str("\\_"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '\r' | '\n' => out.push(' '),
            c => crate::text::push_visible(&mut out, c),
        }
    }
    out
}

/// Free text from a history file with every token that looks like a filesystem path outside the
/// package (absolute POSIX or Windows paths, `~/...`) replaced by `<path withheld>`.
pub(crate) fn scrub_paths(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if looks_like_host_path(token) {
            out.push_str("<path withheld>");
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in s.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | ';' | '=') {
            flush(&mut token, &mut out);
            out.push(c);
        } else {
            token.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

fn looks_like_host_path(t: &str) -> bool {
    let b = t.as_bytes();
    let windows = b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\';
    (t.starts_with('/') && t.len() > 1 && !t.starts_with("//"))
        || t.starts_with("~/")
        || t.starts_with("\\\\")
        || windows
}

/// Decimals for speedups: `1000`, `14.4`, `2.49`.
const SPEEDUP_DECIMALS: [(f64, usize); 3] = [(100.0, 0), (10.0, 1), (0.0, 2)];
/// Decimals for milliseconds: `1585.6`, `5.714`, `0.0741`.
const MS_DECIMALS: [(f64, usize); 3] = [(100.0, 1), (1.0, 3), (0.0, 4)];

/// `v` with the decimals of the first tier whose threshold `|v|` reaches (exact zero: the middle).
fn scaled(v: f64, tiers: &[(f64, usize); 3]) -> String {
    let a = v.abs();
    let d = if a == 0.0 {
        tiers[1].1
    } else {
        tiers
            .iter()
            .find(|(t, _)| a >= *t)
            .map_or(tiers[2].1, |(_, d)| *d)
    };
    format!("{a:.d$}")
}

fn finite_or_dash(x: Option<impl Into<f64>>, f: impl Fn(f64) -> String) -> String {
    x.map(Into::into)
        .filter(|v: &f64| v.is_finite())
        .map_or_else(|| "–".into(), f)
}

fn sign(v: f64) -> &'static str {
    if v < 0.0 { "−" } else { "+" }
}

/// A speedup as `2.49×` (three significant digits, more for large values).
pub(crate) fn speedup(x: Option<impl Into<f64>>) -> String {
    finite_or_dash(x, |v| {
        let s = if v < 0.0 { "−" } else { "" };
        format!("{s}{}×", scaled(v, &SPEEDUP_DECIMALS))
    })
}

/// Milliseconds with precision scaled to magnitude.
pub(crate) fn ms(x: Option<impl Into<f64>>) -> String {
    finite_or_dash(x, |v| {
        let s = if v < 0.0 { "−" } else { "" };
        format!("{s}{} ms", scaled(v, &MS_DECIMALS))
    })
}

/// Megabytes.
pub(crate) fn mb(x: Option<impl Into<f64>>) -> String {
    finite_or_dash(x, |v| format!("{v:.1} MB"))
}

/// A plain percentage (`49.7 %`).
pub(crate) fn pct(x: Option<impl Into<f64>>) -> String {
    finite_or_dash(x, |v| format!("{v:.1} %"))
}

/// A signed change with a unit suffix (`+5.25 %`, `−0.70 pts`).
pub(crate) fn signed(x: impl Into<f64>, unit: &str) -> String {
    finite_or_dash(Some(x), |v| format!("{}{:.2}{unit}", sign(v), v.abs()))
}

/// A signed millisecond change with precision scaled to magnitude (`+0.0013`, `−0.4360`).
pub(crate) fn signed_ms(x: impl Into<f64>) -> String {
    finite_or_dash(Some(x), |v| {
        format!("{}{}", sign(v), scaled(v, &MS_DECIMALS))
    })
}

/// The first 10 characters of a commit (the full id belongs in a tooltip).
pub(crate) fn short_commit(c: Option<&str>) -> String {
    match c {
        Some(c) if !c.is_empty() => c.chars().take(10).collect(),
        _ => "–".into(),
    }
}

/// `2026-08-16 03:15 UTC` from an RFC 3339 string, or the string itself when unparsable.
pub(crate) fn time(s: &str) -> String {
    match super::model::parse_time(s) {
        Some(t) => t.format("%Y-%m-%d %H:%M UTC").to_string(),
        None => s.to_string(),
    }
}

/// Before, after and delta cells of a change row, formatted for its reason.
pub(crate) fn change_cells(row: &ChangeRow) -> [String; 3] {
    match row {
        ChangeRow::Status { before, after, .. } => [before.clone(), after.clone(), "–".into()],
        ChangeRow::Speedup {
            before,
            after,
            delta_pct,
            optimized_time_delta_ms,
            ..
        } => {
            let mut delta = signed(*delta_pct, " %");
            if let Some(d) = optimized_time_delta_ms.filter(|d| d.is_finite()) {
                delta.push_str(&format!(" ({} ms)", signed_ms(d)));
            }
            [speedup(Some(*before)), speedup(Some(*after)), delta]
        }
        ChangeRow::OptimizedLatency {
            before,
            after,
            delta_pct,
            optimized_time_delta_ms,
            ..
        } => [
            ms(Some(*before)),
            ms(Some(*after)),
            format!(
                "{} ({} ms)",
                signed(*delta_pct, " %"),
                signed_ms(*optimized_time_delta_ms)
            ),
        ],
        ChangeRow::MemorySavings {
            before,
            after,
            delta_points,
            ..
        } => [
            pct(Some(*before)),
            pct(Some(*after)),
            signed(*delta_points, " pts"),
        ],
        ChangeRow::OptimizedMemory {
            before,
            after,
            delta_pct,
            ..
        } => [
            mb(Some(*before)),
            mb(Some(*after)),
            signed(*delta_pct, " %"),
        ],
    }
}

/// Text from a history file, with host paths withheld, escaped for HTML.
pub(crate) fn text(s: &str) -> String {
    esc(&scrub_paths(s))
}

/// An `https` URL as a link; anything else as plain escaped text.
pub(crate) fn link(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) if u.scheme() == "https" && u.username().is_empty() && u.password().is_none() => {
            format!("<a href=\"{}\">{}</a>", esc(u.as_str()), esc(u.as_str()))
        }
        _ => text(url),
    }
}

/// An evidence reference of `run` as HTML.
pub(crate) fn evidence_html(dash: &Dashboard, run: &RunView, rel: &str) -> String {
    match dash.evidence_ref(run, rel) {
        EvidenceRef::Local(p) => format!("<code class=\"local\">{}</code>", esc(&p)),
        EvidenceRef::Artifact(u) => format!("<code class=\"artifact\">{}</code>", esc(&u)),
        EvidenceRef::Withheld => {
            "<span class=\"muted\">(not a portable path; withheld)</span>".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_scrubbing() {
        assert_eq!(
            esc(r#"<script>alert("x")</script>&'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        assert_eq!(md("a|b\n<c>`d`"), "a\\|b &lt;c&gt;\\`d\\`");
        assert_eq!(
            scrub_paths("read /home/runner/work/x/y.json failed (C:\\a\\b) ok"),
            "read <path withheld> failed (<path withheld>) ok"
        );
        assert_eq!(
            scrub_paths("see https://github.com/o/r and r1/summary.json"),
            "see https://github.com/o/r and r1/summary.json"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(speedup(Some(2.4912)), "2.49×");
        assert_eq!(speedup(Some(14.45)), "14.4×");
        assert_eq!(speedup(Some(1000.0)), "1000×");
        assert_eq!(speedup(Some(f64::NAN)), "–");
        assert_eq!(ms(Some(0.07406)), "0.0741 ms");
        assert_eq!(ms(Some(1585.6)), "1585.6 ms");
        assert_eq!(signed(-11.654, " %"), "−11.65 %");
        assert_eq!(signed(0.5, " pts"), "+0.50 pts");
        assert_eq!(signed_ms(0.0013), "+0.0013");
        assert_eq!(signed_ms(-0.436), "−0.4360");
        assert_eq!(signed_ms(12.5), "+12.500");
    }
}
