//! What extraction accepts ([`ExtractPolicy`]: caps, stripped prefixes, allowed member types),
//! what it reports, and the check of one member's name.

use super::limits::{HISTORY_PREFIXES, MAX_ARCHIVE_BYTES, MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::fsx;

/// What extraction accepts.
#[derive(Debug, Clone)]
pub struct ExtractPolicy {
    /// Cap on the archive file.
    pub(crate) max_archive_bytes: u64,
    /// Cap on the sum of decompressed member bytes (counted while reading, not from headers).
    pub(crate) max_expanded_bytes: u64,
    /// Cap on the number of members (directory entries included).
    pub max_members: usize,
    /// Prefixes stripped from member paths (first match wins).
    pub(crate) strip_prefixes: Vec<String>,
    /// Allowed file-name suffixes of file members (empty: any).
    pub(crate) allowed_suffixes: Vec<String>,
    /// Further members allowed: (directory, suffix) pairs, a file directly in the directory whose
    /// name ends with the suffix (the history's `segments/<name>.tar.gz`).
    pub(crate) allowed_in_dirs: Vec<(String, String)>,
}

impl ExtractPolicy {
    /// The reference history policy: reference caps, history prefixes, only `*.json` and `*.md`.
    pub fn history() -> Self {
        ExtractPolicy {
            max_archive_bytes: MAX_ARCHIVE_BYTES,
            max_expanded_bytes: MAX_EXPANDED_BYTES,
            max_members: MAX_MEMBERS,
            strip_prefixes: HISTORY_PREFIXES.iter().map(|s| s.to_string()).collect(),
            allowed_suffixes: vec![".json".into(), ".md".into()],
            allowed_in_dirs: vec![("segments".into(), ".tar.gz".into())],
        }
    }

    /// What promotion extracts a run's evidence archive under: the history's caps and file types
    /// (`*.json`, `*.md`), no prefix stripped, no segment archives.
    pub fn evidence() -> Self {
        ExtractPolicy {
            strip_prefixes: vec![],
            allowed_in_dirs: vec![],
            ..ExtractPolicy::history()
        }
    }

    /// Whether a member at the (normalized) relative path `rel` has an allowed type.
    pub(crate) fn allows(&self, rel: &str) -> bool {
        let by_suffix = self.allowed_suffixes.is_empty()
            || self
                .allowed_suffixes
                .iter()
                .any(|s| rel.ends_with(s.as_str()));
        by_suffix
            || self.allowed_in_dirs.iter().any(|(dir, suffix)| {
                rel.strip_prefix(dir.as_str())
                    .and_then(|r| r.strip_prefix('/'))
                    .is_some_and(|name| !name.contains('/') && name.ends_with(suffix.as_str()))
            })
    }
}

/// What an extraction wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractReport {
    /// Relative `/` paths of the files written, sorted.
    pub files: Vec<String>,
    /// Total decompressed bytes written.
    pub(crate) expanded_bytes: u64,
}

/// Check one member name and return its normalized relative path (prefix stripped).
pub(super) fn normalize_member(name: &str, policy: &ExtractPolicy) -> Result<String, String> {
    if name.starts_with('/') || name.contains('\\') || name.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "absolute or non-portable path refused (expected a relative `/` path, found {name:?})"
        ));
    }
    if name.split('/').any(|c| c == "..") {
        return Err("path escapes the destination through `..`".into());
    }
    let mut rel = name;
    for p in &policy.strip_prefixes {
        if let Some(rest) = rel.strip_prefix(p.as_str()) {
            rel = rest;
            break;
        }
    }
    let rel = rel.strip_suffix('/').unwrap_or(rel);
    if rel.is_empty() {
        return Ok(String::new());
    }
    if fsx::safe_relative_parts(rel).is_none() {
        return Err(format!(
            "unsafe path component in {rel:?} (each component must match ^[A-Za-z0-9_.-]+$ and not be `.` or `..`)"
        ));
    }
    Ok(rel.to_string())
}
