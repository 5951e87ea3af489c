//! Where each item of a suite file is: the YAML is walked as parser events (the same parser
//! serde-saphyr uses) and every mapping key and sequence item gets its 1-based line under a
//! dotted path (`targets.2.tolerance`, `profiles.minimal.timeout_s`), so a rule error points at
//! the item it is about. The walk also finds duplicate keys, reported with both lines.

use serde_saphyr::granit_parser::{Event, Parser};
use std::collections::HashMap;

/// 1-based lines of the items of one YAML document, by dotted path.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    map: HashMap<String, usize>,
}

/// A key that appears twice in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    /// Dotted path of the key.
    pub(crate) path: String,
    /// Line of the repeat.
    pub(crate) line: usize,
    /// Line of the first occurrence.
    pub(crate) first: usize,
}

enum Frame {
    Map {
        path: String,
        key: Option<String>,
        seen: HashMap<String, usize>,
    },
    Seq {
        path: String,
        next: usize,
    },
}

fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}

impl Lines {
    /// Walk `text`. A YAML syntax error ends the walk quietly (the deserializer reports it); a
    /// repeated key is returned as an error.
    pub(crate) fn scan(text: &str) -> Result<Lines, DuplicateKey> {
        let mut lines = Lines::default();
        let mut stack: Vec<Frame> = Vec::new();
        for item in Parser::new_from_str(text) {
            let Ok((event, span)) = item else {
                break;
            };
            let line = span.start.line();
            let is_node = matches!(
                event,
                Event::Scalar(..)
                    | Event::Alias(..)
                    | Event::SequenceStart(..)
                    | Event::MappingStart(..)
            );
            if !is_node {
                if matches!(event, Event::SequenceEnd | Event::MappingEnd) {
                    stack.pop();
                    if let Some(Frame::Map { key, .. }) = stack.last_mut() {
                        *key = None;
                    }
                }
                continue;
            }
            // Where this node sits: a key, or a value under a key, an item, or the root.
            let path = match stack.last_mut() {
                Some(Frame::Map { path, key, seen }) => match key.take() {
                    None => {
                        let Event::Scalar(name, ..) = &event else {
                            return Ok(lines); // a complex key: locations end here
                        };
                        let at = join(path, name);
                        if let Some(&first) = seen.get(name.as_ref()) {
                            return Err(DuplicateKey {
                                path: at,
                                line,
                                first,
                            });
                        }
                        seen.insert(name.to_string(), line);
                        lines.map.insert(at, line);
                        *key = Some(name.to_string());
                        continue;
                    }
                    Some(k) => join(path, &k),
                },
                Some(Frame::Seq { path, next }) => {
                    let at = join(path, &next.to_string());
                    *next += 1;
                    lines.map.insert(at.clone(), line);
                    at
                }
                None => String::new(),
            };
            match event {
                Event::MappingStart(..) => stack.push(Frame::Map {
                    path,
                    key: None,
                    seen: HashMap::new(),
                }),
                Event::SequenceStart(..) => stack.push(Frame::Seq { path, next: 0 }),
                _ => {}
            }
        }
        Ok(lines)
    }

    /// The line of `path`, else of its longest located prefix (an absent field points at its
    /// parent); 0 when nothing is located.
    pub(crate) fn line(&self, path: &str) -> usize {
        let mut p = path;
        loop {
            if let Some(&l) = self.map.get(p) {
                return l;
            }
            match p.rsplit_once('.') {
                Some((head, _)) => p = head,
                None => return 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "a: 1\nlist:\n  - key: x\n    inner: { f: 2 }\n  - key: y\n\n    inner:\n      f: 3\nflow: [1, 2]\n";

    #[test]
    fn keys_and_items_get_their_lines() {
        let l = Lines::scan(YAML).unwrap();
        assert_eq!(l.line("a"), 1);
        assert_eq!(l.line("list"), 2);
        assert_eq!(l.line("list.0"), 3);
        assert_eq!(l.line("list.0.inner.f"), 4);
        assert_eq!(l.line("list.1.key"), 5);
        assert_eq!(l.line("list.1.inner"), 7);
        assert_eq!(l.line("list.1.inner.f"), 8);
        assert_eq!(l.line("list.1.absent"), 5, "falls back to the item");
        assert_eq!(l.line("flow.1"), 9);
        assert_eq!(l.line("nowhere"), 0);
    }

    #[test]
    fn a_repeated_key_is_found_with_both_lines() {
        let e = Lines::scan("a: 1\nm:\n  b: 1\n  b: 2\n").unwrap_err();
        assert_eq!(
            e,
            DuplicateKey {
                path: "m.b".into(),
                line: 4,
                first: 3
            }
        );
        assert!(Lines::scan("m: {b: 1}\nn: {b: 1}\n").is_ok(), "per mapping");
    }
}
