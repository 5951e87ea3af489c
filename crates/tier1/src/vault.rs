//! `tier1-vault`: move a published history's sealed segments to the vault (docs/formats.md, "A
//! history that lasts"; docs/tier1-vault.md). For every segment whose archive is still in the
//! package (pending), the vault's object `<prefix>-segment-<sha256>` is stored from the archive
//! unless the vault already holds it, and the vault's own metadata (size and SHA-256) must then
//! equal the chained record; every segment recorded as vaulted must be there too. With `deep`,
//! the vaulted archives are downloaded and opened (the deep check of `tier1-export`). It never
//! changes the history: the next restore leaves the vaulted archives out of the package.

use crate::artifacts::ArtifactPrefix;
use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use crate::history::segment::SegmentRecord;
use crate::history_check::{segments, validate_history_root};
use crate::store::{ArtifactStore, StoreError};
use serde::Serialize;
use std::path::PathBuf;

/// What to vault.
#[derive(Debug, Clone)]
pub struct VaultRequest {
    /// A published (or restored) history root, read only.
    pub history_root: PathBuf,
    /// The history's artifact prefix (the vault's object names start with it).
    pub artifact_prefix: ArtifactPrefix,
    /// Also download and open every vaulted segment (the deep check).
    pub deep: bool,
}

/// The JSON `tier1-vault` prints.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VaultOutcome {
    /// Always true on success.
    pub(crate) success: bool,
    /// Segments stored in the vault now.
    pub(crate) stored: Vec<String>,
    /// Pending segments the vault already held.
    pub(crate) already_vaulted: Vec<String>,
    /// Segments recorded as vaulted, found in the vault by their metadata.
    pub(crate) vaulted_checked: usize,
    /// Segments opened and checked whole (with `deep`).
    pub(crate) deep_checked_segments: usize,
    /// Sealed runs checked whole (with `deep`).
    pub(crate) deep_checked_runs: usize,
}

/// Why vaulting failed; the history is unchanged (objects already stored stay: they are
/// content-addressed and immutable, and the next run finds them).
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The history fails validation.
    #[error("history {root}: {source}")]
    History {
        /// The history root.
        root: String,
        /// The failure.
        source: HistoryError,
    },
    /// The vault refused or failed.
    #[error("vault: {0}")]
    Store(#[from] StoreError),
    /// The vault holds another object than the record, or lacks one recorded as vaulted.
    #[error("vault: {0}")]
    Integrity(String),
}

impl Classify for VaultError {
    fn exit(&self) -> Exit {
        match self {
            VaultError::History { source, .. } => source.exit(),
            VaultError::Store(e) => e.exit(),
            VaultError::Integrity(_) => Exit::Integrity,
        }
    }
}

/// The check of the vault's object for `s` (its metadata against the chained record).
fn holds(o: &crate::store::VaultObject, s: &SegmentRecord, name: &str) -> Result<(), VaultError> {
    if o.holds(&s.digest, s.bytes) {
        return Ok(());
    }
    Err(VaultError::Integrity(format!(
        "segment {:?}: the vault's object {name} holds {} bytes {}, the chained record {} bytes {}",
        s.name,
        o.size_in_bytes,
        o.digest.as_deref().unwrap_or("with no digest"),
        s.bytes,
        s.digest
    )))
}

/// Store the pending segments of `req.history_root` in `store`'s vault (see the module
/// documentation).
pub fn push(store: &dyn ArtifactStore, req: &VaultRequest) -> Result<VaultOutcome, VaultError> {
    let root = &req.history_root;
    let history = |source| VaultError::History {
        root: root.display().to_string(),
        source,
    };
    let validated = validate_history_root(root).map_err(history)?;
    let doc = &validated.doc;
    let names: Vec<String> = doc
        .index
        .segments
        .iter()
        .map(|s| s.vault_name(&req.artifact_prefix))
        .collect();
    let mut found = store.vault_find(&names)?;
    let mut out = VaultOutcome {
        success: true,
        ..VaultOutcome::default()
    };
    for (s, name) in doc.index.segments.iter().zip(&names) {
        let archive = root.join(&s.path);
        let in_package = archive.is_file();
        match (found.get(name), in_package) {
            (Some(o), true) => {
                holds(o, s, name)?;
                out.already_vaulted.push(s.name.clone());
            }
            (Some(o), false) => {
                holds(o, s, name)?;
                out.vaulted_checked += 1;
            }
            (None, true) => {
                let o = store.vault_put(name, &s.file_name(), &archive)?;
                holds(&o, s, name)?;
                tracing::info!(segment = %s.name, object = %name, "stored in the vault");
                out.stored.push(s.name.clone());
                found.insert(name.clone(), o);
            }
            (None, false) => {
                return Err(VaultError::Integrity(format!(
                    "segment {:?} is recorded as vaulted, but the vault has no object {name}: its runs are in neither the package nor the vault",
                    s.name
                )));
            }
        }
    }
    if req.deep {
        let fetch = |s: &SegmentRecord| -> Result<Option<Vec<u8>>, HistoryError> {
            let name = s.vault_name(&req.artifact_prefix);
            let Some(o) = found.get(&name) else {
                return Ok(None);
            };
            let mut bytes = Vec::new();
            store
                .vault_download(o, &mut bytes, s.bytes)
                .map_err(|e| HistoryError::integrity(&s.path, format!("vault: {e}")))?;
            Ok(Some(bytes))
        };
        let report = segments::check_deep_with(root, doc, &fetch).map_err(history)?;
        out.deep_checked_segments = report.segments;
        out.deep_checked_runs = report.runs;
    }
    Ok(out)
}
