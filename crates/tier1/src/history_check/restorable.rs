//! The one check every writer of a package runs before it writes one: would its reader accept it?
//! Publication and promotion (and `tier1-nightly`, and `tier1-export`) ask it of a staged history
//! tree (restore's policy); `tier1-evidence pack` asks it of a run's evidence (promotion's
//! policy). Every file must pass the reader's extraction policy (safe names, `*.json` and `*.md`,
//! for a history segment archives only as `segments/<name>.tar.gz`, no links) and the tree must
//! fit its caps (members, expanded bytes, archive bytes), so a package its reader would refuse is
//! never written. [`footprint`] measures a tree (compaction's trigger uses `live_footprint`).

use crate::archive::{ExtractPolicy, MAX_ARCHIVE_BYTES, MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::exit::{Classify, Exit};
use std::path::Path;

/// Members, bytes and an upper bound of the zip's size of a history tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Regular files (the zip's members).
    pub members: usize,
    /// Their summed sizes (what extraction writes).
    pub expanded_bytes: u64,
    /// An upper bound of the zip's size (stored bytes plus headers).
    pub(crate) archive_bytes_bound: u64,
}

/// Why restore would refuse a package built from a tree; nothing was written.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing to write a history package that restore would refuse: {message} (nothing was written)"
)]
pub struct PackageRefused {
    /// The member, field or cap, with the expected and found values.
    pub(crate) message: String,
}

impl PackageRefused {
    /// What the reader would refuse (the member, field or cap, with the expected and found values).
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl Classify for PackageRefused {
    fn exit(&self) -> Exit {
        Exit::Invalid
    }
}

/// Zip headers per member: local header (30) and central entry (46) plus the name twice, and a
/// margin for deflate's worst case on incompressible data.
fn member_overhead(name: &str, bytes: u64) -> u64 {
    76 + 2 * name.len() as u64 + bytes / 1000 + 16
}

/// Measure the tree at `root` (regular files only; anything else is counted and refused later).
pub fn footprint(root: &Path) -> std::io::Result<Footprint> {
    measure(root, |_| true)
}

/// The footprint of the live part of the tree at `root`: every file but the sealed segments'
/// archives under `segments/` (compaction's trigger: sealing cannot shrink those).
pub(crate) fn live_footprint(root: &Path) -> std::io::Result<Footprint> {
    let dir = format!("{}/", crate::history::segment::SEGMENTS_DIR);
    measure(root, |rel| !rel.starts_with(&dir))
}

fn measure(root: &Path, counts: impl Fn(&str) -> bool) -> std::io::Result<Footprint> {
    let mut f = Footprint {
        archive_bytes_bound: 22,
        ..Footprint::default()
    };
    for rel in crate::fsx::list_files(root)?
        .into_iter()
        .filter(|r| counts(r))
    {
        let len = std::fs::symlink_metadata(root.join(&rel))?.len();
        f.members += 1;
        f.expanded_bytes += len;
        f.archive_bytes_bound += len + member_overhead(&rel, len);
    }
    Ok(f)
}

/// Would restore accept the package written from the tree at `root`? Checks every file against
/// restore's extraction policy and the whole tree against its caps; returns the footprint.
pub fn would_restore_accept(root: &Path) -> Result<Footprint, PackageRefused> {
    would_extract(root, &ExtractPolicy::history(), "restore").map_err(|e| {
        let pending = pending_segments(root);
        match pending {
            Some((n, bytes)) if e.cap => PackageRefused {
                message: format!(
                    "{} ({n} sealed segment archives, {bytes} bytes, are still in the package: store them in the vault with tier1-vault, docs/tier1-vault.md, and the next restore leaves them out)",
                    e.message
                ),
            },
            _ => PackageRefused { message: e.message },
        }
    })
}

/// Would promotion accept the evidence archive written from the tree at `root` (its extraction
/// policy, [`ExtractPolicy::evidence`])? `tier1-evidence pack` asks before it writes one.
pub fn would_promote_accept_evidence(root: &Path) -> Result<Footprint, PackageRefused> {
    would_extract(root, &ExtractPolicy::evidence(), "promotion")
        .map_err(|e| PackageRefused { message: e.message })
}

/// A refusal of [`would_extract`]; `cap` when a cap (not a member) was broken.
struct Refused {
    message: String,
    cap: bool,
}

/// The archive of the tree at `root`, extracted by `reader` under `policy`: every file must pass
/// the policy and the tree must fit its caps.
fn would_extract(root: &Path, policy: &ExtractPolicy, reader: &str) -> Result<Footprint, Refused> {
    let refuse = |message: String| Refused {
        message,
        cap: false,
    };
    let files = crate::fsx::list_files(root)
        .map_err(|e| refuse(format!("cannot list {}: {e}", root.display())))?;
    for rel in &files {
        let meta =
            std::fs::symlink_metadata(root.join(rel)).map_err(|e| refuse(format!("{rel}: {e}")))?;
        if !meta.file_type().is_file() {
            return Err(refuse(format!(
                "member {rel:?}: expected a regular file, found a link or special file"
            )));
        }
        if crate::fsx::safe_relative_parts(rel).is_none() {
            return Err(refuse(format!(
                "member {rel:?}: unsafe path (each component must match ^[A-Za-z0-9_.-]+$)"
            )));
        }
        if !policy.allows(rel) {
            let expected = if policy.allowed_in_dirs.is_empty() {
                "*.json or *.md"
            } else {
                "*.json, *.md or segments/<name>.tar.gz"
            };
            return Err(refuse(format!(
                "member {rel:?}: file type refused by {reader} (expected {expected})"
            )));
        }
    }
    let f = footprint(root).map_err(|e| refuse(format!("cannot measure: {e}")))?;
    let over = |message: String| Refused { message, cap: true };
    if f.members > policy.max_members.min(MAX_MEMBERS) {
        return Err(over(format!(
            "{} members, over {reader}'s cap of {MAX_MEMBERS}",
            f.members
        )));
    }
    if f.expanded_bytes > policy.max_expanded_bytes.min(MAX_EXPANDED_BYTES) {
        return Err(over(format!(
            "{} bytes expanded, over {reader}'s cap of {MAX_EXPANDED_BYTES} bytes",
            f.expanded_bytes
        )));
    }
    if f.archive_bytes_bound > policy.max_archive_bytes.min(MAX_ARCHIVE_BYTES) {
        return Err(over(format!(
            "an archive of up to {} bytes, over {reader}'s cap of {MAX_ARCHIVE_BYTES} bytes",
            f.archive_bytes_bound
        )));
    }
    Ok(f)
}

/// The pending segment archives of the tree at `root`: how many and their bytes (None: none).
fn pending_segments(root: &Path) -> Option<(usize, u64)> {
    let dir = root.join(crate::history::segment::SEGMENTS_DIR);
    let f = footprint(&dir).ok()?;
    (f.members > 0).then_some((f.members, f.expanded_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_restore_would_refuse() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("r1")).unwrap();
        std::fs::create_dir_all(root.join("segments")).unwrap();
        std::fs::write(root.join("index.json"), b"{}").unwrap();
        std::fs::write(root.join("r1/summary.json"), b"{}").unwrap();
        std::fs::write(root.join("segments/seg-000001.tar.gz"), b"x").unwrap();
        let f = would_restore_accept(root).unwrap();
        assert_eq!((f.members, f.expanded_bytes), (3, 5));
        std::fs::write(root.join("r1/blob.tar.gz"), b"x").unwrap();
        let e = would_restore_accept(root).unwrap_err();
        assert!(e.to_string().contains("r1/blob.tar.gz"), "{e}");
        assert_eq!(e.exit(), Exit::Invalid);
        std::fs::remove_file(root.join("r1/blob.tar.gz")).unwrap();
        std::os::unix::fs::symlink("summary.json", root.join("r1/link.json")).unwrap();
        let e = would_restore_accept(root).unwrap_err();
        assert!(e.to_string().contains("link"), "{e}");
    }
}
