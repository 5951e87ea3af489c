//! The local store's vault (`vault/`), as GitHub's is a set of immutable releases: each object is
//! `vault/<name>.bin` (its bytes) and `vault/<name>.json` (the store's record of it: size and the
//! SHA-256 computed while the bytes arrived). The bytes are written first, then the record, each
//! renamed into place without replacing anything, so an object never changes once its record
//! exists; bytes whose record a crash never wrote are taken up again by the next upload of the
//! same object. Nothing expires. Layout documented in docs/local-store.md.

use super::local::LocalStore;
use super::local_check::VAULT_DIR;
use super::vault::{VaultObject, is_valid_object_name};
use super::{Downloaded, StoreError};
use crate::digest::{self, Digest};
use crate::fsx::{self, fault, fault::Point};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn check_name(name: &str) -> Result<(), StoreError> {
    if is_valid_object_name(name) {
        return Ok(());
    }
    Err(StoreError::Invalid(format!(
        "vault object name: expected 1-200 characters of [A-Za-z0-9_.-] starting with a letter or digit, found {name:?}"
    )))
}

impl LocalStore {
    fn vault_dir(&self) -> PathBuf {
        self.dir().join(VAULT_DIR)
    }

    fn vault_record_path(&self, name: &str) -> PathBuf {
        self.vault_dir().join(format!("{name}.json"))
    }

    fn vault_bytes_path(&self, name: &str) -> PathBuf {
        self.vault_dir().join(format!("{name}.bin"))
    }

    /// The record of object `name`, if it exists (read without following a link).
    fn vault_record(&self, name: &str) -> Result<Option<VaultObject>, StoreError> {
        check_name(name)?;
        let path = self.vault_record_path(name);
        let bytes = match fsx::read_no_follow(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_at(&path)(e)),
        };
        let obj: VaultObject = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!("invalid vault record: {e}"),
        })?;
        if obj.name != name {
            return Err(StoreError::Corrupt {
                path: path.display().to_string(),
                message: format!("name: expected {name:?}, found {:?}", obj.name),
            });
        }
        Ok(Some(obj))
    }

    /// The objects of `names` that exist in the vault (metadata only).
    pub(crate) fn local_vault_find(
        &self,
        names: &[String],
    ) -> Result<BTreeMap<String, VaultObject>, StoreError> {
        let mut out = BTreeMap::new();
        for name in names {
            if let Some(obj) = self.vault_record(name)? {
                out.insert(name.clone(), obj);
            }
        }
        Ok(out)
    }

    /// Store the bytes of `path` as object `name` (file `file_name`): an existing object with the
    /// same bytes is returned as it is; one with other bytes is refused (objects never change).
    pub(crate) fn local_vault_put(
        &self,
        name: &str,
        file_name: &str,
        path: &Path,
    ) -> Result<VaultObject, StoreError> {
        check_name(name)?;
        let dir = self.vault_dir();
        fsx::real_dir(&dir).map_err(io_at(&dir))?;
        fault::hit(Point::Upload, &dir).map_err(io_at(&dir))?;
        fault::hit(Point::Write, &dir).map_err(io_at(&dir))?;
        let mut src = std::fs::File::open(path).map_err(io_at(path))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("vault"))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(io_at(&dir))?;
        let (digest, size) =
            digest::copy_hashed(&mut src, tmp.as_file_mut(), u64::MAX).map_err(io_at(&dir))?;
        tmp.as_file_mut().flush().map_err(io_at(&dir))?;
        tmp.as_file().sync_all().map_err(io_at(&dir))?;
        if let Some(existing) = self.vault_record(name)? {
            return existing.must_hold(&digest, size, "the vault's object");
        }
        let bytes_path = self.vault_bytes_path(name);
        fault::hit(Point::Rename, &bytes_path).map_err(io_at(&bytes_path))?;
        match tmp.persist_noclobber(&bytes_path) {
            Ok(_) => {}
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                // Bytes an interrupted upload left without their record: they must be these.
                let found = Digest::of_file(&bytes_path).map_err(io_at(&bytes_path))?;
                if found != digest {
                    return Err(StoreError::Integrity {
                        id: 0,
                        name: name.to_string(),
                        message: format!(
                            "vault bytes {} hold {found}, not the {digest} being stored under this name",
                            bytes_path.display()
                        ),
                    });
                }
            }
            Err(e) => return Err(io_at(&bytes_path)(e.error)),
        }
        let obj = VaultObject {
            name: name.to_string(),
            file_name: file_name.to_string(),
            size_in_bytes: size,
            digest: Some(digest.to_string()),
            created_at: crate::store::ArtifactStore::now(self),
            id: 0,
            immutable: Some(true),
        };
        let record = crate::json::to_pretty(&obj, name).map_err(|e| StoreError::Corrupt {
            path: self.vault_record_path(name).display().to_string(),
            message: e.to_string(),
        })?;
        let mut rec = tempfile::Builder::new()
            .prefix(&fsx::stale::temp_prefix("vault"))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(io_at(&dir))?;
        rec.write_all(&record).map_err(io_at(&dir))?;
        rec.as_file().sync_all().map_err(io_at(&dir))?;
        let record_path = self.vault_record_path(name);
        fault::hit(Point::Upload, &record_path).map_err(io_at(&record_path))?;
        match rec.persist_noclobber(&record_path) {
            Ok(_) => Ok(obj),
            // Another writer stored the object meanwhile: it must be the same one.
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                let existing = self
                    .vault_record(name)?
                    .ok_or_else(|| StoreError::NotFound {
                        what: format!("vault object {name}"),
                    })?;
                existing.must_hold(&digest, size, "the vault's object")
            }
            Err(e) => Err(io_at(&record_path)(e.error)),
        }
    }

    /// Stream object `obj`'s bytes into `sink` (at most `cap`), refusing bytes whose length is
    /// not the recorded size.
    pub(crate) fn local_vault_download(
        &self,
        obj: &VaultObject,
        sink: &mut dyn Write,
        cap: u64,
    ) -> Result<Downloaded, StoreError> {
        check_name(&obj.name)?;
        let path = self.vault_bytes_path(&obj.name);
        let mut f = fsx::open_no_follow(&path, std::fs::OpenOptions::new().read(true)).map_err(
            |e| match e.kind() {
                std::io::ErrorKind::NotFound => StoreError::NotFound {
                    what: format!("vault object {}", obj.name),
                },
                _ => io_at(&path)(e),
            },
        )?;
        let mut sink = digest::Watched::new(sink);
        let copied = digest::copy_hashed(&mut f, &mut sink, cap);
        let integrity = |message: String| StoreError::Integrity {
            id: obj.id,
            name: obj.name.clone(),
            message,
        };
        match copied {
            Ok((digest, bytes)) if bytes == obj.size_in_bytes => Ok(Downloaded { digest, bytes }),
            Ok((_, bytes)) => Err(integrity(format!(
                "size: expected {} bytes (the vault's record), found {bytes}",
                obj.size_in_bytes
            ))),
            Err(source) if sink.failed() => Err(StoreError::Sink {
                id: obj.id,
                name: obj.name.clone(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => Err(integrity(format!(
                "download exceeds the cap of {cap} bytes"
            ))),
            Err(e) => Err(io_at(&path)(e)),
        }
    }
}
