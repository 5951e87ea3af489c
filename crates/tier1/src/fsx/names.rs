//! The safe-name rules: run ids and relative paths of safe components (no absolute path, no `..`).

use std::path::{Path, PathBuf};

/// True when `s` matches `^[A-Za-z0-9][A-Za-z0-9_.-]*$` (the reference safe run-id pattern).
pub(crate) fn is_safe_run_id(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// True when `s` is one safe path component: `^[A-Za-z0-9_.-]+$`, not `.` or `..`.
pub(crate) fn is_safe_component(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Check that `rel` is a relative, `/`-separated path of safe components (no absolute path, no `..`,
/// no empty component). Returns the components.
pub(crate) fn safe_relative_parts(rel: &str) -> Option<Vec<&str>> {
    if rel.is_empty() || rel.starts_with('/') || rel.contains('\\') {
        return None;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    parts.iter().all(|p| is_safe_component(p)).then_some(parts)
}

/// Join a checked relative path under `root`; `None` when it is not safe.
pub(crate) fn join_safe(root: &Path, rel: &str) -> Option<PathBuf> {
    let parts = safe_relative_parts(rel)?;
    let mut p = root.to_path_buf();
    for c in parts {
        p.push(c);
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_and_paths() {
        assert!(is_safe_run_id("20260816_031500_tier1_nightly_abcdef12"));
        assert!(is_safe_run_id("a.b-c_d"));
        for bad in ["", "_x", ".x", "a/b", "a b", "ä"] {
            assert!(!is_safe_run_id(bad), "{bad}");
        }
        assert!(safe_relative_parts("r1/summary.json").is_some());
        for bad in ["/abs", "../x", "a/../b", "a//b", "a/./b", "a\\b", ""] {
            assert!(safe_relative_parts(bad).is_none(), "{bad}");
        }
    }
}
