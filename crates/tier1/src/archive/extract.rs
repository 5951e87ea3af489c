//! [`extract_safe`]: a zip archive extracted into an absent or empty directory under an
//! [`ExtractPolicy`], member by member, through a staging directory renamed into place. Which
//! member is written where is one pure decision, [`member_path`].

use super::directory;
use super::error::{ArchiveError, io_err};
use super::policy::{ExtractPolicy, ExtractReport, normalize_member};
use crate::fsx;
use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The zip reader of an archive file.
type Zip = zip::ZipArchive<io::BufReader<fs::File>>;

/// Extract `archive` into `dest` (absent or empty) under `policy`, through a staging directory
/// renamed into place: on any refusal nothing is written to `dest`.
pub fn extract_safe(
    archive: &Path,
    dest: &Path,
    policy: &ExtractPolicy,
) -> Result<ExtractReport, ArchiveError> {
    // 1. An empty destination, and an archive within the caps whose directory is consistent.
    if !fsx::is_absent_or_empty(dest).map_err(io_err(dest))? {
        return Err(ArchiveError::DestinationNotEmpty {
            path: dest.display().to_string(),
        });
    }
    let mut zip = open(archive, policy)?;
    // 2. Each member checked, then written into the stage within the expanded-size cap.
    let apath = archive.display().to_string();
    let staged = fsx::StagedDir::new(dest).map_err(io_err(dest))?;
    let mut seen = BTreeSet::new();
    let mut made_dirs = HashSet::new();
    let mut expanded = 0u64;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| ArchiveError::NotZip {
            path: apath.clone(),
            message: format!("member #{i}: {e}"),
        })?;
        let raw = entry.name_raw().to_vec();
        let name = String::from_utf8(raw).map_err(|e| ArchiveError::Member {
            member: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            message: "name is not UTF-8".into(),
        })?;
        let kind = Kind {
            symlink: entry.is_symlink(),
            encrypted: entry.encrypted(),
            dir: entry.is_dir(),
        };
        let member = |message: String| ArchiveError::Member {
            member: name.clone(),
            message,
        };
        let Some(rel) = member_path(&name, kind, policy, &seen).map_err(member)? else {
            continue;
        };
        seen.insert(rel.clone());
        let out = fsx::join_safe(staged.path(), &rel)
            .ok_or_else(|| member(format!("unsafe path {rel:?}")))?;
        let budget = policy.max_expanded_bytes - expanded;
        expanded += write_member(
            &mut entry,
            &name,
            &rel,
            &out,
            &mut made_dirs,
            budget,
            policy,
        )?;
    }
    // 3. The stage renamed into place.
    let mut files: Vec<String> = seen.into_iter().collect();
    files.sort();
    staged.commit().map_err(io_err(dest))?;
    Ok(ExtractReport {
        files,
        expanded_bytes: expanded,
    })
}

/// The archive opened as a zip, within the policy's size and member caps, its directory checked.
fn open(archive: &Path, policy: &ExtractPolicy) -> Result<Zip, ArchiveError> {
    let apath = archive.display().to_string();
    let size = fs::metadata(archive).map_err(io_err(archive))?.len();
    if size > policy.max_archive_bytes {
        return Err(ArchiveError::ArchiveTooLarge {
            path: apath,
            limit: policy.max_archive_bytes,
            found: size,
        });
    }
    let file = fs::File::open(archive).map_err(io_err(archive))?;
    let mut zip =
        zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| ArchiveError::NotZip {
            path: apath.clone(),
            message: e.to_string(),
        })?;
    if zip.len() > policy.max_members {
        return Err(ArchiveError::TooManyMembers {
            path: apath,
            limit: policy.max_members,
            found: zip.len(),
        });
    }
    directory::check(&mut zip, archive, policy.max_members)?;
    Ok(zip)
}

/// What a member's header says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kind {
    /// A symbolic link.
    pub(super) symlink: bool,
    /// Encrypted.
    pub(super) encrypted: bool,
    /// A directory entry.
    pub(super) dir: bool,
}

/// Where member `name` is written, relative to the destination: None for a directory entry
/// (skipped), else its normalized path, refused (with the reason) for a symbolic link, an
/// encrypted member, an unsafe or empty path, a type the policy does not allow, or a path
/// already `seen`.
pub(super) fn member_path(
    name: &str,
    kind: Kind,
    policy: &ExtractPolicy,
    seen: &BTreeSet<String>,
) -> Result<Option<String>, String> {
    if kind.symlink {
        return Err("symbolic links are refused".into());
    }
    if kind.encrypted {
        return Err("encrypted members are refused".into());
    }
    let rel = normalize_member(name, policy)?;
    if kind.dir {
        return Ok(None);
    }
    if rel.is_empty() {
        return Err("empty path after prefix stripping".into());
    }
    if !policy.allows(&rel) {
        return Err(format!(
            "file type refused (expected one of {}, found {rel:?})",
            policy.allowed_suffixes.join(", ")
        ));
    }
    if seen.contains(&rel) {
        return Err(format!("duplicate path {rel:?} after prefix stripping"));
    }
    Ok(Some(rel))
}

/// Write the member `name` (at `rel`) to `out`, its parent directories made once, at most
/// `budget` expanded bytes. Returns the bytes written. A failed write is the destination's
/// failure; a path conflict, a corrupt member or one over the budget is the archive's.
fn write_member(
    entry: &mut impl io::Read,
    name: &str,
    rel: &str,
    out: &Path,
    made_dirs: &mut HashSet<PathBuf>,
    budget: u64,
    policy: &ExtractPolicy,
) -> Result<u64, ArchiveError> {
    let member = |message: String| ArchiveError::Member {
        member: name.to_string(),
        message,
    };
    if let Some(parent) = out.parent()
        && !made_dirs.contains(parent)
    {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
        made_dirs.insert(parent.to_path_buf());
    }
    fsx::fault::hit(fsx::fault::Point::Write, out).map_err(io_err(out))?;
    let mut f = fs::File::create_new(out).map_err(|e| match e.kind() {
        // A file where a directory is needed (or the reverse) is a path conflict in the archive;
        // anything else (a full disk) is the destination's failure, never the archive's.
        io::ErrorKind::AlreadyExists
        | io::ErrorKind::NotADirectory
        | io::ErrorKind::IsADirectory => member(format!("cannot create {rel:?}: {e}")),
        _ => io_err(out)(e),
    })?;
    let mut sink = crate::digest::Watched::new(&mut f);
    let n = match copy_capped(entry, &mut sink, budget) {
        Ok(n) => n,
        Err(e) => match sink.take_error() {
            Some(source) => {
                return Err(ArchiveError::Io {
                    path: out.display().to_string(),
                    source,
                });
            }
            None => return Err(member(e.to_string())),
        },
    };
    n.ok_or_else(|| {
        member(format!(
            "expanded size exceeds the cap of {} bytes",
            policy.max_expanded_bytes
        ))
    })
}

/// Copy at most `budget` bytes; `Ok(None)` when the source holds more. Counts actual bytes read.
fn copy_capped<R: Read + ?Sized, W: Write>(
    src: &mut R,
    dst: &mut W,
    budget: u64,
) -> io::Result<Option<u64>> {
    let mut limited = src.take(budget.saturating_add(1));
    let n = io::copy(&mut limited, dst)?;
    Ok((n <= budget).then_some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: Kind = Kind {
        symlink: false,
        encrypted: false,
        dir: false,
    };

    #[test]
    fn member_path_rows() {
        let p = ExtractPolicy::history();
        let seen: BTreeSet<String> = ["r1/summary.json".to_string()].into();
        let dir = Kind { dir: true, ..FILE };
        let link = Kind {
            symlink: true,
            ..FILE
        };
        let locked = Kind {
            encrypted: true,
            ..FILE
        };
        /// A member's name and kind, and where it goes or why it is refused.
        type Row<'a> = (&'a str, Kind, Result<Option<&'a str>, &'a str>);
        let rows: [Row; 9] = [
            ("r2/summary.json", FILE, Ok(Some("r2/summary.json"))),
            (
                "segments/seg-000001.tar.gz",
                FILE,
                Ok(Some("segments/seg-000001.tar.gz")),
            ),
            ("r2/", dir, Ok(None)),
            ("r2/a.json", link, Err("symbolic links are refused")),
            ("r2/a.json", locked, Err("encrypted members are refused")),
            (
                "../a.json",
                dir,
                Err("path escapes the destination through `..`"),
            ),
            (
                "r1/summary.json",
                FILE,
                Err("duplicate path \"r1/summary.json\" after prefix stripping"),
            ),
            (
                "r2/run.sh",
                FILE,
                Err("file type refused (expected one of .json, .md, found \"r2/run.sh\")"),
            ),
            ("", FILE, Err("empty path after prefix stripping")),
        ];
        for (name, kind, want) in rows {
            let got = member_path(name, kind, &p, &seen);
            assert_eq!(
                got.as_ref().map(|o| o.as_deref()).map_err(String::as_str),
                want,
                "{name:?} {kind:?}"
            );
        }
    }
}
