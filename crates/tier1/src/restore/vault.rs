//! The sealed segments of a restored history against the vault (docs/formats.md, "A history that
//! lasts"), by the vault's metadata only (the size and SHA-256 the store computed; nothing is
//! downloaded), as old evidence is checked. Every segment recorded as vaulted must be there with
//! its chained record's size and digest; every pending archive of the package that the vault
//! already holds identically is left out of the restored tree and recorded as vaulted, so the
//! next publication no longer carries it. A segment thus leaves the package only once a
//! digest-verified immutable copy exists where restore finds it.

use super::error::{CandidateError, RestoreError};
use crate::artifacts::ArtifactPrefix;
use crate::history::model::INDEX_FILE;
use crate::history::package::IndexDoc;
use crate::history::segment::LEGACY_SEGMENTED_SCHEMA_VERSION;
use crate::store::ArtifactStore;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// Where the restored history's segments are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct VaultReport {
    /// Segments whose archive is in the vault (checked by its metadata).
    pub(crate) segments_vaulted: usize,
    /// Segments whose archive is only in the package (the vault job has not stored them yet).
    pub(crate) segments_pending: usize,
    /// Segments whose package copy this restore left out, the vault holding them.
    pub(crate) segments_left_in_vault: Vec<String>,
}

/// Check and reconcile the segments of the restored tree at `tree` (validated as `doc`) against
/// the vault of `store`; `index.json` is rewritten in place when segments left the package.
pub(crate) fn reconcile(
    store: &dyn ArtifactStore,
    prefix: &ArtifactPrefix,
    tree: &Path,
    doc: &mut IndexDoc,
) -> Result<VaultReport, CandidateError> {
    let mut report = VaultReport::default();
    if doc.index.segments.is_empty() {
        return Ok(report);
    }
    let names: Vec<String> = doc
        .index
        .segments
        .iter()
        .map(|s| s.vault_name(prefix))
        .collect();
    let found = store
        .vault_find(&names)
        .map_err(|e| CandidateError::Fatal(RestoreError::Store(e)))?;
    let mut vaulted: BTreeSet<String> = doc.index.vaulted.iter().cloned().collect();
    // A schema_version 2 index cannot record vaulted segments: its archives stay until the next
    // publication rewrites it as version 3.
    let can_leave = doc.index.schema_version != Some(LEGACY_SEGMENTED_SCHEMA_VERSION);
    for (s, name) in doc.index.segments.iter().zip(&names) {
        let archive = tree.join(&s.path);
        let in_package = archive.is_file();
        match found.get(name) {
            Some(o) if !o.holds(&s.digest, s.bytes) => {
                return Err(CandidateError::Integrity(format!(
                    "segment {:?}: the vault's object {name} holds {} bytes {}, the chained record {} bytes {}: the vault's copy is not the sealed segment",
                    s.name,
                    o.size_in_bytes,
                    o.digest.as_deref().unwrap_or("with no digest"),
                    s.bytes,
                    s.digest
                )));
            }
            Some(_) if in_package && can_leave => {
                std::fs::remove_file(&archive).map_err(|e| {
                    CandidateError::Fatal(RestoreError::Io {
                        path: archive.display().to_string(),
                        source: e,
                    })
                })?;
                vaulted.insert(s.name.clone());
                report.segments_left_in_vault.push(s.name.clone());
                report.segments_vaulted += 1;
            }
            Some(_) if in_package => report.segments_pending += 1,
            Some(_) => report.segments_vaulted += 1,
            None if in_package => report.segments_pending += 1,
            None => {
                return Err(CandidateError::Integrity(format!(
                    "segment {:?} is recorded as vaulted, but the vault has no object {name} (its release was deleted or never published): the sealed runs are in neither the package nor the vault",
                    s.name
                )));
            }
        }
    }
    if !report.segments_left_in_vault.is_empty() {
        let list: Vec<serde_json::Value> = vaulted.into_iter().map(Into::into).collect();
        let local = |e: crate::history::HistoryError| CandidateError::Fatal(RestoreError::Local(e));
        doc.set_field("vaulted", serde_json::Value::Array(list))
            .map_err(local)?;
        let bytes = doc.to_bytes().map_err(local)?;
        crate::fsx::overwrite_staged_if_changed(&tree.join(INDEX_FILE), &bytes).map_err(|e| {
            CandidateError::Fatal(RestoreError::Io {
                path: tree.join(INDEX_FILE).display().to_string(),
                source: e,
            })
        })?;
        if tree
            .join(crate::history::segment::SEGMENTS_DIR)
            .read_dir()
            .is_ok_and(|mut d| d.next().is_none())
        {
            let _ = std::fs::remove_dir(tree.join(crate::history::segment::SEGMENTS_DIR));
        }
    }
    Ok(report)
}
