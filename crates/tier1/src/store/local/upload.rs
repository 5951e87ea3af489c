//! Uploading artifacts to a local store: checking the name and retention, copying the bytes
//! (a file as given, or a directory zipped without its hidden files) and recording them.

use super::files::io_at;
use super::state::MAX_RETENTION_DAYS;
use super::{LocalStore, StoredArtifact};
use crate::digest::{self, Digest};
use crate::fsx::{self, fault, fault::Point};
use crate::store::local_check::{ARTIFACTS_DIR, check_counters, next_artifact_id};
use crate::store::{ArtifactMeta, ArtifactStore, StoreError};
use chrono::Duration;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// True when an artifact name is acceptable to `actions/upload-artifact`.
pub(crate) fn is_valid_artifact_name(name: &str) -> bool {
    !name.is_empty()
        && !name.chars().any(|c| {
            matches!(
                c,
                '"' | ':' | '<' | '>' | '|' | '*' | '?' | '\r' | '\n' | '\\' | '/'
            )
        })
}

impl LocalStore {
    /// Upload one file's bytes as given (like `upload-artifact` with `archive: false`).
    pub fn upload_file(
        &self,
        run_id: u64,
        name: &str,
        path: &Path,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        let mut src = fs::File::open(path).map_err(io_at(path))?;
        self.upload_reader(run_id, name, &mut src, retention_days)
    }

    /// Zip a directory deterministically (see `archive::write_deterministic_zip`) and upload the zip
    /// (like the default `upload-artifact`, which leaves hidden files out).
    pub fn upload_dir_zipped(
        &self,
        run_id: u64,
        name: &str,
        dir: &Path,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        let tmp = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("upload"))
            .tempdir_in(&self.dir)
            .map_err(io_at(&self.dir))?;
        let visible = tmp.path().join("visible");
        copy_visible_files(dir, &visible).map_err(|e| match e {
            StoreError::Invalid(m) => StoreError::Invalid(format!("artifact {name}: {m}")),
            other => other,
        })?;
        let dir = visible.as_path();
        let zip = tmp.path().join("artifact.zip");
        crate::archive::write_deterministic_zip(dir, &zip).map_err(|e| match e {
            // Writing the zip failed (a full disk): the destination's failure, never the input's.
            crate::archive::ArchiveError::Io { path, source } => StoreError::Io { path, source },
            other => StoreError::Invalid(format!(
                "artifact {name}: cannot zip {}: {other}",
                dir.display()
            )),
        })?;
        self.upload_file(run_id, name, &zip, retention_days)
    }

    pub(super) fn upload_reader(
        &self,
        run_id: u64,
        name: &str,
        src: &mut dyn io::Read,
        retention_days: u32,
    ) -> Result<ArtifactMeta, StoreError> {
        if !is_valid_artifact_name(name) {
            return Err(StoreError::Invalid(format!(
                "artifact name {name:?} is empty or contains one of \" : < > | * ? \\r \\n \\ /"
            )));
        }
        if retention_days == 0 || retention_days > MAX_RETENTION_DAYS {
            return Err(StoreError::Invalid(format!(
                "artifact {name}: retention days must be 1..={MAX_RETENTION_DAYS}, found {retention_days}"
            )));
        }
        let now = self.now();
        let art_dir = self.dir.join(ARTIFACTS_DIR);
        fsx::real_dir(&art_dir).map_err(io_at(&art_dir))?;
        let dir = self.dir.clone();
        fault::hit(Point::Upload, &art_dir).map_err(io_at(&art_dir))?;
        fault::hit(Point::Write, &art_dir).map_err(io_at(&art_dir))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("tmp"))
            .suffix(".tmp")
            .tempfile_in(&art_dir)
            .map_err(io_at(&art_dir))?;
        let (digest, size) = copy_into(src, &mut tmp, &art_dir)?;
        let stored =
            self.update(|state| {
                check_counters(&dir, &state.counters())?;
                let run = state.runs.iter().find(|r| r.id == run_id).ok_or_else(|| {
                    StoreError::NotFound {
                        what: format!("run {run_id}"),
                    }
                })?;
                if state
                    .artifacts
                    .iter()
                    .any(|a| a.workflow_run_id == run.id && a.name == name)
                {
                    return Err(StoreError::Invalid(format!(
                        "run {run_id} already has an artifact named {name}"
                    )));
                }
                let id = next_artifact_id(&dir, state.next_artifact_id)?;
                let a = StoredArtifact {
                    id,
                    name: name.to_string(),
                    workflow_run_id: run_id,
                    size_in_bytes: size,
                    digest: Some(digest.to_string()),
                    created_at: now,
                    expires_at: now + Duration::days(i64::from(retention_days)),
                    expired: false,
                };
                // Bytes first, then the record that points at them (both inside the lock); the
                // bytes never replace a file that is already there.
                let dest = self.artifact_path(a.id);
                fault::hit(Point::Rename, &dest).map_err(io_at(&dest))?;
                tmp.persist_noclobber(&dest).map_err(|e| StoreError::Io {
                    path: dest.display().to_string(),
                    source: e.error,
                })?;
                fault::hit(Point::Upload, &dest).map_err(io_at(&dest))?;
                state.next_artifact_id = id + 1;
                state.artifacts.push(a.clone());
                Ok((a, run.clone()))
            })?;
        Ok(self.meta(&stored.0, Some(&stored.1)))
    }
}

/// Copy the files of `src` into `dst` (created) except hidden ones (a path component starting with
/// `.`), as `actions/upload-artifact` leaves them out (v4.4+, `include-hidden-files: false`).
/// Anything that is not a regular file is recreated as it is (a symbolic link stays one), so the
/// zip writer judges it as before. Refuses a directory with nothing visible to upload.
fn copy_visible_files(src: &Path, dst: &Path) -> Result<(), StoreError> {
    let files = crate::fsx::list_files(src).map_err(io_at(src))?;
    let visible: Vec<&String> = files
        .iter()
        .filter(|rel| !rel.split('/').any(|part| part.starts_with('.')))
        .collect();
    if visible.is_empty() {
        return Err(StoreError::Invalid(format!(
            "{}: no files to upload (hidden files are not uploaded)",
            src.display()
        )));
    }
    for rel in visible {
        let (from, to) = (src.join(rel), dst.join(rel));
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        let meta = fs::symlink_metadata(&from).map_err(io_at(&from))?;
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&from).map_err(io_at(&from))?;
            std::os::unix::fs::symlink(target, &to).map_err(io_at(&to))?;
        } else {
            fs::copy(&from, &to).map_err(io_at(&from))?;
        }
    }
    Ok(())
}

/// Copy an upload's bytes into its temporary file, hashing them, and flush them to disk. A failure
/// to write names the artifacts directory (the destination), never the source.
fn copy_into(
    src: &mut dyn io::Read,
    tmp: &mut tempfile::NamedTempFile,
    art_dir: &Path,
) -> Result<(Digest, u64), StoreError> {
    let file = tmp.as_file_mut();
    let mut sink = digest::Watched::new(file);
    let copied = digest::copy_hashed(src, &mut sink, u64::MAX);
    let failed = sink.failed();
    let (digest, size) = copied.map_err(|source| StoreError::Io {
        path: if failed {
            art_dir.display().to_string()
        } else {
            "the upload's source".into()
        },
        source,
    })?;
    file.flush().map_err(io_at(art_dir))?;
    file.sync_all().map_err(io_at(art_dir))?;
    Ok((digest, size))
}
