//! The vault's records: an object of immutable, never-expiring storage, addressed by name, with the
//! size and SHA-256 the store itself computed when the bytes arrived (GitHub: a published release
//! with one asset, whose `digest` GitHub computes; the local store: `vault/`). Sealed history
//! segments live there once they leave the package (docs/formats.md, "A history that lasts").
//! What a store does with them is the `ArtifactStore` trait's `vault_*` methods.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One object of the vault, as its store reports it (metadata only: nothing is downloaded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VaultObject {
    /// The object's name (GitHub: the release tag), unique in the vault.
    pub name: String,
    /// The file it holds (GitHub: the asset's name).
    pub file_name: String,
    /// Its size, as the store recorded it.
    pub size_in_bytes: u64,
    /// `sha256:<64 hex>` of its bytes, as the store computed it (None when the store reports none).
    pub digest: Option<String>,
    /// When the store received it.
    pub created_at: DateTime<Utc>,
    /// The store's id of the bytes (GitHub: the asset id; the local store: 0).
    pub id: u64,
    /// Whether the store guarantees the object can never change (GitHub: an immutable release;
    /// the local store: always). None when the store does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

impl VaultObject {
    /// Whether the object holds exactly `bytes` bytes whose SHA-256 is `digest` (by its metadata).
    pub(crate) fn holds(&self, digest: &str, bytes: u64) -> bool {
        self.size_in_bytes == bytes && self.digest.as_deref() == Some(digest)
    }

    /// The object, when it holds `digest` and `size`: a put of the bytes it already holds.
    /// Otherwise the vault holds other bytes under the name (`held`, e.g. "the vault's release"),
    /// which are never replaced: an integrity failure naming both.
    pub(crate) fn must_hold(
        self,
        digest: &crate::digest::Digest,
        size: u64,
        held: &str,
    ) -> Result<VaultObject, super::StoreError> {
        if self.holds(digest.as_str(), size) {
            return Ok(self);
        }
        Err(super::StoreError::Integrity {
            id: self.id,
            name: self.name.clone(),
            message: format!(
                "{held} holds {} bytes {}, not {size} bytes {digest}: a vault object never changes",
                self.size_in_bytes,
                self.digest.as_deref().unwrap_or("with no digest")
            ),
        })
    }
}

/// Whether `name` can name a vault object: 1-200 characters of `[A-Za-z0-9_.-]`, starting with a
/// letter or digit (a valid tag name and a safe file name).
pub(crate) fn is_valid_object_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names() {
        assert!(is_valid_object_name("tier1-segment-0a1b"));
        for bad in ["", "-x", "a/b", "a b", "../x"] {
            assert!(!is_valid_object_name(bad), "{bad}");
        }
        assert!(!is_valid_object_name(&"a".repeat(201)));
    }
}
