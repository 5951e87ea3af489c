//! What a refused or failed archive operation says, and the exit code it maps to.

use crate::exit::{Classify, Exit};
use std::io;
use std::path::Path;

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

pub(super) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.display().to_string(),
        source,
    }
}

pub(super) fn zip_err(path: &Path, e: zip::result::ZipError) -> ArchiveError {
    let source = match e {
        zip::result::ZipError::Io(io) => io,
        other => io::Error::other(other.to_string()),
    };
    ArchiveError::Io {
        path: path.display().to_string(),
        source,
    }
}
