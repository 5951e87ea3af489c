//! Zip archives: deterministic writing (sorted entries, fixed timestamps and modes, deflate level 6)
//! and safe bounded extraction (size and member caps, no symlinks, no absolute or `..` paths, safe
//! components only, prefix stripping, duplicate check, allowed extensions, staged then renamed).
//! The directory's consistency (no duplicate names, local headers that agree) is checked by the
//! `directory` submodule, the extraction itself by `extract`; deterministic `.tar.gz` (the
//! container of sealed history segments) is `tgz`.

mod directory;
mod error;
mod extract;
mod limits;
mod policy;
mod quiet;
pub(crate) mod tgz;
mod write;

pub use error::ArchiveError;
pub use extract::extract_safe;
pub use limits::MAX_MEMBERS;
pub(crate) use limits::{MAX_ARCHIVE_BYTES, MAX_EXPANDED_BYTES};
pub use policy::{ExtractPolicy, ExtractReport};
pub use write::write_deterministic_zip;

#[cfg(test)]
mod tests;
