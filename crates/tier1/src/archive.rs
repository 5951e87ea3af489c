//! Zip archives: deterministic writing (sorted entries, fixed timestamps and modes, deflate level 6)
//! and safe bounded extraction (size and member caps, no symlinks, no absolute or `..` paths, safe
//! components only, prefix stripping, duplicate check, allowed extensions, staged then renamed).
//! The directory's consistency (no duplicate names, local headers that agree) is checked by the
//! `directory` submodule, the extraction itself by `extract`; deterministic `.tar.gz` (the
//! container of sealed history segments) is `tgz`.

mod directory;
mod extract;
mod quiet;
pub(crate) mod tgz;

pub use extract::extract_safe;

use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use crate::fsx;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;
use zip::write::SimpleFileOptions;

/// Reference cap on the downloaded archive (128 MiB).
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 128 * 1024 * 1024;
/// Reference cap on the expanded size, counted from decompressed bytes (64 MiB).
pub(crate) const MAX_EXPANDED_BYTES: u64 = 64 * 1024 * 1024;
/// Reference cap on the number of members.
pub const MAX_MEMBERS: usize = 10_000;
/// Prefixes the reference strips from history members (first match wins).
pub(crate) const HISTORY_PREFIXES: [&str; 3] = [
    "code/artifacts/history/tier1/",
    "artifacts/history/tier1/",
    "history/tier1/",
];
/// Deflate level of every written archive (zlib's default, as `actions/upload-artifact` uses).
pub(crate) const DEFLATE_LEVEL: i64 = 6;
/// Unix mode recorded for every written member.
pub(crate) const MEMBER_MODE: u32 = 0o644;

/// A refused or failed archive operation. Every refusal of archive content is an integrity error
/// naming the member.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Local I/O on a named file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// The archive file itself exceeds the cap.
    #[error("archive {path} is {found} bytes, over the cap of {limit} bytes")]
    ArchiveTooLarge {
        /// The archive.
        path: String,
        /// The cap.
        limit: u64,
        /// Its size.
        found: u64,
    },
    /// Not a readable zip.
    #[error("archive {path} is not a valid zip: {message}")]
    NotZip {
        /// The archive.
        path: String,
        /// The zip reader's complaint.
        message: String,
    },
    /// More members than allowed.
    #[error("archive {path} has {found} members, over the cap of {limit}")]
    TooManyMembers {
        /// The archive.
        path: String,
        /// The cap.
        limit: usize,
        /// How many it has.
        found: usize,
    },
    /// One member is refused (unsafe path, symlink, duplicate, type, size, corruption).
    #[error("archive member {member:?}: {message}")]
    Member {
        /// The member name as stored in the archive.
        member: String,
        /// What is wrong, with expected and found values.
        message: String,
    },
    /// The directory of the zip is inconsistent (local headers that disagree with the central
    /// directory, overlapping entries, entries outside the central directory).
    #[error("archive {path} is inconsistent: {message}")]
    Inconsistent {
        /// The archive.
        path: String,
        /// What disagrees.
        message: String,
    },
    /// The extraction destination already holds data.
    #[error("destination {path} is not empty")]
    DestinationNotEmpty {
        /// The destination.
        path: String,
    },
    /// The source tree of a zip to write holds something that cannot be archived.
    #[error("cannot archive {path}: {message}")]
    Source {
        /// The offending path.
        path: String,
        /// Why.
        message: String,
    },
}

impl Classify for ArchiveError {
    fn exit(&self) -> Exit {
        match self {
            ArchiveError::Io { source, .. } => crate::exit::of_io(source),
            ArchiveError::DestinationNotEmpty { .. } => Exit::Conflict,
            ArchiveError::Source { .. } => Exit::Invalid,
            _ => Exit::Integrity,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Write every regular file under `src_dir` into a zip at `out_path` (atomically), byte-identical
/// for identical input: entries sorted by relative `/` path, timestamps 1980-01-01 00:00:00, mode
/// 0644, deflate level 6 (`*.gz` members stored as they are), no directory entries. Symlinks and special files are refused.
/// Returns the SHA-256 of the written archive.
pub fn write_deterministic_zip(src_dir: &Path, out_path: &Path) -> Result<Digest, ArchiveError> {
    let files = fsx::list_files(src_dir).map_err(io_err(src_dir))?;
    fsx::fault::hit(fsx::fault::Point::Write, out_path).map_err(io_err(out_path))?;
    let parent = match out_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(&fsx::stale::temp_prefix("zip"))
        .suffix(".tmp")
        .tempfile_in(parent)
        .map_err(io_err(parent))?;
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(DEFLATE_LEVEL))
        .last_modified_time(zip::DateTime::DEFAULT)
        .unix_permissions(MEMBER_MODE)
        .large_file(false);
    // The writer's `Drop` finishes an unfinished archive and prints its failure on stderr, in front
    // of the real error: after a failed write (a full disk) it is never dropped (leaked: its entry
    // list and buffers; the file belongs to `tmp`), and its `finish` writes through `Quiet`.
    let (quiet, first_error) = quiet::Quiet::new(tmp.as_file());
    let mut zw = std::mem::ManuallyDrop::new(zip::ZipWriter::new(quiet));

    for rel in &files {
        let path = src_dir.join(rel);
        let meta = fs::symlink_metadata(&path).map_err(io_err(&path))?;
        if !meta.file_type().is_file() {
            return Err(ArchiveError::Source {
                path: path.display().to_string(),
                message: "not a regular file (symlinks and special files are refused)".into(),
            });
        }
        // Already-compressed members (segment archives) are stored, not deflated again.
        let member_options = if rel.ends_with(".gz") {
            options
                .compression_method(zip::CompressionMethod::Stored)
                .compression_level(None)
        } else {
            options
        };
        if let Err(e) = zw.start_file(rel.as_str(), member_options) {
            return Err(match first_error.take() {
                Some(first) => io_err(out_path)(first),
                None => zip_err(&path, e),
            });
        }
        let mut f = fs::File::open(&path).map_err(io_err(&path))?;
        if let Err(e) = io::copy(&mut f, &mut *zw) {
            // The archive's own write failed (a full disk), or reading the member did.
            return Err(match first_error.take() {
                Some(first) => io_err(out_path)(first),
                None => io_err(&path)(e),
            });
        }
    }
    let finishing = std::mem::ManuallyDrop::into_inner(zw);
    let first = first_error.take();
    if let Some(e) = first {
        return Err(io_err(out_path)(e));
    }
    finishing.finish().map_err(|e| zip_err(out_path, e))?;
    tmp.as_file().sync_all().map_err(io_err(out_path))?;
    fsx::fault::hit(fsx::fault::Point::Rename, out_path).map_err(io_err(out_path))?;
    tmp.persist(out_path).map_err(|e| ArchiveError::Io {
        path: out_path.display().to_string(),
        source: e.error,
    })?;
    Digest::of_file(out_path).map_err(io_err(out_path))
}

fn zip_err(path: &Path, e: zip::result::ZipError) -> ArchiveError {
    let source = match e {
        zip::result::ZipError::Io(io) => io,
        other => io::Error::other(other.to_string()),
    };
    ArchiveError::Io {
        path: path.display().to_string(),
        source,
    }
}

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
fn normalize_member(name: &str, policy: &ExtractPolicy) -> Result<String, String> {
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

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let p = t.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        t
    }

    fn raw_zip(path: &Path, members: &[(&str, &[u8])]) {
        let f = fs::File::create(path).unwrap();
        let mut zw = zip::ZipWriter::new(f);
        for (name, body) in members {
            zw.start_file(*name, SimpleFileOptions::default()).unwrap();
            zw.write_all(body).unwrap();
        }
        zw.finish().unwrap();
    }

    #[test]
    fn deterministic_and_round_trips() {
        let src = tree(&[("b/x.json", "{}"), ("a.md", "# hi\n"), ("index.json", "[]")]);
        let out = tempfile::tempdir().unwrap();
        let z1 = out.path().join("1.zip");
        let z2 = out.path().join("2.zip");
        let d1 = write_deterministic_zip(src.path(), &z1).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let d2 = write_deterministic_zip(src.path(), &z2).unwrap();
        assert_eq!(d1, d2);
        assert_eq!(fs::read(&z1).unwrap(), fs::read(&z2).unwrap());
        assert_eq!(Digest::of_file(&z1).unwrap(), d1);
        let mut zip = zip::ZipArchive::new(fs::File::open(&z1).unwrap()).unwrap();
        let names: Vec<String> = (0..zip.len())
            .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
            .collect();
        assert_eq!(
            names,
            vec!["a.md", "b/x.json", "index.json"],
            "sorted entries"
        );
        let e = zip.by_name("a.md").unwrap();
        assert_eq!(e.unix_mode().unwrap() & 0o777, 0o644);
        assert_eq!(e.last_modified().unwrap().year(), 1980);
        drop(e);
        let dest = out.path().join("x");
        let rep = extract_safe(&z1, &dest, &ExtractPolicy::history()).unwrap();
        assert_eq!(rep.files, vec!["a.md", "b/x.json", "index.json"]);
        assert_eq!(fs::read_to_string(dest.join("b/x.json")).unwrap(), "{}");
    }

    #[test]
    fn strips_prefixes_and_refuses_duplicates() {
        let out = tempfile::tempdir().unwrap();
        let z = out.path().join("a.zip");
        raw_zip(&z, &[("code/artifacts/history/tier1/index.json", b"{}")]);
        let dest = out.path().join("d");
        let rep = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap();
        assert_eq!(rep.files, vec!["index.json"]);
        raw_zip(
            &z,
            &[("history/tier1/index.json", b"{}"), ("index.json", b"{}")],
        );
        let dest2 = out.path().join("d2");
        let err = extract_safe(&z, &dest2, &ExtractPolicy::history()).unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{err}");
        assert!(!dest2.exists());
    }

    /// Replace every occurrence of `from` with `to` (same length) in the file: names are stored
    /// twice (local header and central directory) and are not covered by the CRC.
    fn patch(path: &Path, from: &str, to: &str, occurrences: usize) {
        assert_eq!(from.len(), to.len());
        let mut bytes = fs::read(path).unwrap();
        let mut done = 0;
        let mut i = 0;
        while i + from.len() <= bytes.len() && done < occurrences {
            if &bytes[i..i + from.len()] == from.as_bytes() {
                bytes[i..i + from.len()].copy_from_slice(to.as_bytes());
                done += 1;
            }
            i += 1;
        }
        assert_eq!(done, occurrences, "patched {from:?}");
        fs::write(path, bytes).unwrap();
    }

    #[test]
    fn refuses_exact_duplicate_names_from_the_central_directory() {
        let out = tempfile::tempdir().unwrap();
        let z = out.path().join("dup.zip");
        raw_zip(
            &z,
            &[
                ("r1/manifest.json", b"{\"run_id\": \"r1\"}"),
                ("r1/manifesX.json", b"{}"),
            ],
        );
        patch(&z, "r1/manifesX.json", "r1/manifest.json", 2);
        let dest = out.path().join("d");
        let err = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"r1/manifest.json\""), "{msg}");
        assert!(msg.contains("2 times in the central directory"), "{msg}");
        assert_eq!(err.exit(), Exit::Integrity);
        assert!(!dest.exists());
        assert_eq!(
            fs::read_dir(out.path()).unwrap().count(),
            1,
            "nothing staged"
        );
    }

    #[test]
    fn refuses_a_local_header_that_disagrees_with_the_central_directory() {
        let out = tempfile::tempdir().unwrap();
        let z = out.path().join("split.zip");
        raw_zip(
            &z,
            &[("r1/report.md", b"# ok\n"), ("r1/summary.json", b"{}")],
        );
        // Only the local header (the first occurrence) is renamed: a streaming reader would see
        // another file than the central directory promises.
        patch(&z, "r1/report.md", "r1/rePort.md", 1);
        let dest = out.path().join("d");
        let err = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("local header"), "{msg}");
        assert!(msg.contains(&z.display().to_string()), "{msg}");
        assert_eq!(err.exit(), Exit::Integrity);
        assert!(!dest.exists());
    }

    #[test]
    fn accepts_streamed_members_with_data_descriptors() {
        let out = tempfile::tempdir().unwrap();
        let z = out.path().join("stream.zip");
        let mut zw = zip::ZipWriter::new_stream(fs::File::create(&z).unwrap());
        for (name, body) in [("r1/index.json", &b"{}"[..]), ("r1/a.md", b"# a\n")] {
            zw.start_file(name, SimpleFileOptions::default()).unwrap();
            zw.write_all(body).unwrap();
        }
        zw.finish().unwrap();
        let dest = out.path().join("d");
        let rep = extract_safe(&z, &dest, &ExtractPolicy::history()).unwrap();
        assert_eq!(rep.files, ["r1/a.md", "r1/index.json"]);
    }

    #[test]
    fn refuses_unsafe_names() {
        let p = ExtractPolicy::history();
        for bad in [
            "/etc/x.json",
            "../x.json",
            "a/../../x.json",
            "a b.json",
            "c:/x.json",
        ] {
            assert!(normalize_member(bad, &p).is_err(), "{bad}");
        }
        assert_eq!(
            normalize_member("r1/summary.json", &p).unwrap(),
            "r1/summary.json"
        );
    }

    #[test]
    fn expanded_cap_counts_real_bytes() {
        let out = tempfile::tempdir().unwrap();
        let z = out.path().join("a.zip");
        raw_zip(&z, &[("a.json", &[b'x'; 2000]), ("b.json", &[b'y'; 2000])]);
        let mut p = ExtractPolicy::history();
        p.max_expanded_bytes = 3000;
        let dest = out.path().join("d");
        let err = extract_safe(&z, &dest, &p).unwrap_err();
        assert!(err.to_string().contains("b.json"), "{err}");
        assert!(err.to_string().contains("cap of 3000"), "{err}");
        assert!(!dest.exists());
        assert_eq!(
            fs::read_dir(out.path()).unwrap().count(),
            1,
            "no stray staging dir"
        );
    }
}
