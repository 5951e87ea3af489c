//! `Link` header parsing (RFC 8288, as GitHub sends it) and the page-walk bookkeeping that turns a
//! cap or a loop into "incomplete discovery" instead of a silently short list.

use std::collections::HashSet;

/// The `rel="next"` target of a `Link` header value, if any.
pub(crate) fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let mut pieces = part.split(';');
        let target = pieces.next()?.trim();
        let url = target.strip_prefix('<')?.strip_suffix('>')?;
        let is_next = pieces.any(|p| {
            let p = p.trim();
            p.strip_prefix("rel=")
                .map(|v| v.trim_matches('"').split_whitespace().any(|r| r == "next"))
                .unwrap_or(false)
        });
        is_next.then(|| url.to_string())
    })
}

/// What the walk decided after a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Fetch this URL next.
    Next(String),
    /// The last page was reached.
    Done,
    /// The page cap was hit while a next page existed: the listing is incomplete.
    Capped,
    /// The next link points at a page already fetched.
    Loop(String),
}

/// Tracks pages visited so a walk always ends: at the last page, at the cap, or on a loop.
#[derive(Debug)]
pub(crate) struct PageWalk {
    seen: HashSet<String>,
    max_pages: usize,
}

impl PageWalk {
    /// Start a walk at `first`, allowing at most `max_pages` pages.
    pub(crate) fn new(first: &str, max_pages: usize) -> Self {
        let mut seen = HashSet::new();
        seen.insert(first.to_string());
        PageWalk {
            seen,
            max_pages: max_pages.max(1),
        }
    }

    /// Pages fetched so far.
    pub(crate) fn pages(&self) -> usize {
        self.seen.len()
    }

    /// Decide what follows a page whose `Link` header was `link`.
    pub(crate) fn step(&mut self, link: Option<&str>) -> Step {
        let Some(next) = link.and_then(next_link) else {
            return Step::Done;
        };
        if self.seen.contains(&next) {
            return Step::Loop(next);
        }
        if self.seen.len() >= self.max_pages {
            return Step::Capped;
        }
        self.seen.insert(next.clone());
        Step::Next(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = r#"<https://api.github.com/repositories/1/actions/runs?page=2>; rel="next", <https://api.github.com/repositories/1/actions/runs?page=5>; rel="last""#;

    #[test]
    fn finds_next_among_rels() {
        assert_eq!(
            next_link(LINK).as_deref(),
            Some("https://api.github.com/repositories/1/actions/runs?page=2")
        );
        assert_eq!(
            next_link(r#"<u?page=1>; rel="prev", <u?page=1>; rel="first""#),
            None
        );
        assert_eq!(next_link(""), None);
        assert_eq!(next_link("garbage; rel=next"), None);
    }

    #[test]
    fn walk_ends_on_done_cap_and_loop() {
        let mut w = PageWalk::new("p1", 2);
        assert_eq!(w.step(Some(r#"<p2>; rel="next""#)), Step::Next("p2".into()));
        assert_eq!(w.step(Some(r#"<p3>; rel="next""#)), Step::Capped);
        let mut w = PageWalk::new("p1", 9);
        assert_eq!(w.step(Some(r#"<p2>; rel="next""#)), Step::Next("p2".into()));
        assert_eq!(w.step(Some(r#"<p1>; rel="next""#)), Step::Loop("p1".into()));
        assert_eq!(w.step(None), Step::Done);
        assert_eq!(w.pages(), 2);
    }
}
