//! The one check publication and promotion run on a staged history tree before it becomes a
//! package: would restore accept it? Every file must pass restore's extraction policy (safe names,
//! `*.json` and `*.md`, segment archives only as `segments/<name>.tar.gz`, no links) and the tree
//! must fit its caps (members, expanded bytes, archive bytes), so a package that the next restore
//! would refuse is never written. [`footprint`] measures a tree (compaction's trigger uses it).

use crate::archive::{ExtractPolicy, MAX_ARCHIVE_BYTES, MAX_EXPANDED_BYTES, MAX_MEMBERS};
use crate::exit::{Classify, Exit};
use std::path::Path;

/// Members, bytes and an upper bound of the zip's size of a history tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Regular files (the zip's members).
    pub members: usize,
    /// Their summed sizes (what extraction writes).
    pub(crate) expanded_bytes: u64,
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
    let refuse = |message: String| PackageRefused { message };
    let policy = ExtractPolicy::history();
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
            return Err(refuse(format!(
                "member {rel:?}: file type refused by restore (expected *.json, *.md or segments/<name>.tar.gz)"
            )));
        }
    }
    let f = footprint(root).map_err(|e| refuse(format!("cannot measure: {e}")))?;
    if f.members > policy.max_members.min(MAX_MEMBERS) {
        return Err(refuse(format!(
            "{} members, over restore's cap of {MAX_MEMBERS} (compaction could not seal enough runs)",
            f.members
        )));
    }
    if f.expanded_bytes > policy.max_expanded_bytes.min(MAX_EXPANDED_BYTES) {
        return Err(refuse(format!(
            "{} bytes expanded, over restore's cap of {MAX_EXPANDED_BYTES} bytes",
            f.expanded_bytes
        )));
    }
    if f.archive_bytes_bound > policy.max_archive_bytes.min(MAX_ARCHIVE_BYTES) {
        return Err(refuse(format!(
            "an archive of up to {} bytes, over restore's cap of {MAX_ARCHIVE_BYTES} bytes",
            f.archive_bytes_bound
        )));
    }
    Ok(f)
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
