//! Consistency of a zip's directory before any member is read: every name appears once in the
//! central directory (the zip reader keeps only the last of duplicate names, so a check on what it
//! returns never fires), every local header agrees with its central entry, and no entry overlaps
//! another or hides outside the central directory.

use super::ArchiveError;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Signature of a central directory file header.
const CENTRAL_HEADER: u32 = 0x0201_4b50;
/// Fixed part of a central directory file header, signature included.
const CENTRAL_FIXED_LEN: usize = 46;

/// Refuse `zip` (read from the file at `path`) unless its directory is consistent; `max_members`
/// bounds the walk that names duplicates.
pub(super) fn check<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    path: &Path,
    max_members: usize,
) -> Result<(), ArchiveError> {
    let shown = path.display().to_string();
    if zip.has_duplicate_names() {
        let dups =
            duplicate_names(path, zip.central_directory_start(), max_members).map_err(|e| {
                ArchiveError::Io {
                    path: shown.clone(),
                    source: e,
                }
            })?;
        return Err(match dups.into_iter().next() {
            Some((name, count)) => ArchiveError::Member {
                member: name,
                message: format!(
                    "appears {count} times in the central directory: expected every member name once (a reader keeps only one of them)"
                ),
            },
            None => ArchiveError::Inconsistent {
                path: shown,
                message: "the central directory lists a member name more than once".into(),
            },
        });
    }
    zip.validate_header_consistency()
        .map_err(|e| ArchiveError::Inconsistent {
            path: shown,
            message: format!("a local header disagrees with the central directory: {e}"),
        })
}

/// Names listed more than once in the central directory starting at byte `start`, with their
/// counts, in name order (names shown lossily when they are not UTF-8).
fn duplicate_names(
    path: &Path,
    start: u64,
    max_members: usize,
) -> io::Result<BTreeMap<String, usize>> {
    let mut r = BufReader::new(fs::File::open(path)?);
    r.seek(SeekFrom::Start(start))?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut fixed = [0u8; CENTRAL_FIXED_LEN];
    for _ in 0..=max_members {
        if r.read_exact(&mut fixed).is_err()
            || u32::from_le_bytes([fixed[0], fixed[1], fixed[2], fixed[3]]) != CENTRAL_HEADER
        {
            break;
        }
        let field = |at: usize| u64::from(u16::from_le_bytes([fixed[at], fixed[at + 1]]));
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let mut name = vec![0u8; name_len as usize];
        r.read_exact(&mut name)?;
        r.seek_relative((extra_len + comment_len) as i64)?;
        *counts
            .entry(String::from_utf8_lossy(&name).into_owned())
            .or_default() += 1;
    }
    counts.retain(|_, n| *n > 1);
    Ok(counts)
}
