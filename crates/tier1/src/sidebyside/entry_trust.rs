//! Whether a build-cache entry is one this tier1 made, and still exactly as it made it. The
//! completion marker (`build-<step>.json`) records the commit, the step, the digest of every output
//! and of the whole worktree (every file, tracked or built, `.git` aside), and carries an
//! HMAC-SHA256 of all of it under the builder's private key (`cache_key`). A marker without a
//! valid MAC was not written by this builder (another user or job of a shared cache, an older
//! tier1, `tier1-bisect` for the nightly): the entry is not trusted and is built again from
//! nothing. A marker with a valid MAC whose outputs or worktree no longer have their recorded
//! digests was changed after it was built: it is refused.

use super::cache_key::CacheKey;
use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `schema` of a completion marker.
pub(crate) const MARKER_SCHEMA: &str = "tier1.build.v2";
/// The marker field holding the MAC (left out of what it signs).
const MAC_FIELD: &str = "mac";
/// Largest marker read (it lists every output of the step).
const MAX_MARKER_BYTES: u64 = 16 << 20;

/// The completion marker of one step in one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Marker {
    pub(crate) schema: String,
    pub(crate) commit: String,
    pub(crate) step: Vec<String>,
    /// Output path (relative to the entry) to its digest.
    pub(crate) outputs: BTreeMap<String, String>,
    pub(crate) outputs_digest: String,
    /// [`tree_digest`] of the entry's worktree after the build.
    pub(crate) worktree_digest: String,
    #[serde(default)]
    pub(crate) toolchain: Option<String>,
    pub(crate) seconds: f64,
    /// HMAC-SHA256 (hex) of the canonical JSON of every other field.
    #[serde(default)]
    pub(crate) mac: String,
}

/// What an existing marker says about its entry.
#[derive(Debug)]
pub(crate) enum Found {
    /// Signed by this builder's key.
    Ours(Box<Marker>),
    /// Not signed by it (why, in words).
    NotOurs(String),
}

/// The canonical bytes a marker's MAC covers: its JSON object without `mac`.
fn signed_bytes(object: &serde_json::Map<String, Value>) -> Vec<u8> {
    crate::json::canonical_without(object, MAC_FIELD).into_bytes()
}

/// Set `marker.mac` under `key`.
pub(crate) fn seal(marker: &mut Marker, key: &CacheKey) -> Result<(), String> {
    marker.mac.clear();
    let Value::Object(object) = serde_json::to_value(&*marker).map_err(|e| e.to_string())? else {
        return Err("a marker serializes to an object".into());
    };
    marker.mac = key.sign(&signed_bytes(&object));
    Ok(())
}

/// Read the marker at `path` (never through a symbolic link, at most [`MAX_MARKER_BYTES`]):
/// `None` when there is none.
pub(crate) fn read(path: &Path, key: &CacheKey) -> Result<Option<Found>, String> {
    let bytes = match crate::fsx::read_no_follow_at_most(path, MAX_MARKER_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Ok(Some(Found::NotOurs(format!("unreadable marker: {e}")))),
    };
    let object = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => m,
        Ok(_) | Err(_) => return Ok(Some(Found::NotOurs("its marker is not JSON".into()))),
    };
    let schema = object.get("schema").and_then(Value::as_str).unwrap_or("");
    if schema != MARKER_SCHEMA {
        return Ok(Some(Found::NotOurs(format!(
            "its marker's schema is {schema:?}, expected {MARKER_SCHEMA:?}"
        ))));
    }
    let mac = object.get(MAC_FIELD).and_then(Value::as_str).unwrap_or("");
    if !key.verifies(&signed_bytes(&object), mac) {
        return Ok(Some(Found::NotOurs(format!(
            "its marker is not signed with this builder's key {} (written by another user, job or tool, or edited)",
            key.path().display()
        ))));
    }
    let marker: Marker = serde_json::from_value(Value::Object(object)).map_err(|e| {
        format!(
            "{}: a signed marker that does not parse: {e}",
            path.display()
        )
    })?;
    Ok(Some(Found::Ours(Box::new(marker))))
}

/// SHA-256 over `path\0kind:digest\n` lines of every entry under `root` in path order, its
/// top-level `.git` left out: a regular file by its content's digest, a symbolic link by its
/// target (never followed).
pub(crate) fn tree_digest(root: &Path) -> Result<String, String> {
    let files = crate::fsx::list_files(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut text = String::new();
    for rel in files {
        if rel == ".git" || rel.starts_with(".git/") {
            continue;
        }
        let path = root.join(&rel);
        let meta =
            std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let what = if meta.file_type().is_symlink() {
            let target =
                std::fs::read_link(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            format!(
                "link:{}",
                Digest::of_bytes(target.as_os_str().as_encoded_bytes())
            )
        } else if meta.is_file() {
            let d = Digest::of_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            format!("file:{d}")
        } else {
            "other:".to_string()
        };
        text.push_str(&format!("{rel}\0{what}\n"));
    }
    Ok(Digest::of_bytes(text.as_bytes()).to_string())
}

#[cfg(test)]
mod tests {
    use super::super::cache_key::Builder;
    use super::*;

    fn marker() -> Marker {
        Marker {
            schema: MARKER_SCHEMA.into(),
            commit: "a".repeat(40),
            step: vec!["make".into()],
            outputs: BTreeMap::from([("src/bench".into(), "sha256:00".into())]),
            outputs_digest: "sha256:11".into(),
            worktree_digest: "sha256:22".into(),
            toolchain: None,
            seconds: 1.5,
            mac: String::new(),
        }
    }

    #[test]
    fn only_a_marker_signed_with_the_builders_key_is_ours() {
        let t = tempfile::tempdir().unwrap();
        let key = CacheKey::in_dir(&t.path().join("s"), Builder::SideBySide).unwrap();
        let other = CacheKey::in_dir(&t.path().join("s"), Builder::Bisect).unwrap();
        let path = t.path().join("build-x.json");
        assert!(read(&path, &key).unwrap().is_none());
        let mut m = marker();
        seal(&mut m, &key).unwrap();
        std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
        assert!(matches!(read(&path, &key).unwrap(), Some(Found::Ours(f)) if *f == m));
        assert!(matches!(
            read(&path, &other).unwrap(),
            Some(Found::NotOurs(_))
        ));
        // An output re-digested, and its combined digest with it: the MAC no longer holds.
        let mut forged = m.clone();
        forged
            .outputs
            .insert("src/bench".into(), "sha256:99".into());
        forged.outputs_digest = "sha256:98".into();
        std::fs::write(&path, serde_json::to_vec_pretty(&forged).unwrap()).unwrap();
        let Some(Found::NotOurs(why)) = read(&path, &key).unwrap() else {
            panic!("a re-digested marker is trusted");
        };
        assert!(why.contains("not signed with this builder's key"), "{why}");
        // The old format is not ours either.
        std::fs::write(&path, br#"{"schema": "tier1.build.v1"}"#).unwrap();
        assert!(
            matches!(read(&path, &key).unwrap(), Some(Found::NotOurs(w)) if w.contains("tier1.build.v1"))
        );
    }

    #[test]
    fn the_tree_digest_sees_every_file_and_link_but_not_git() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("a")).unwrap();
        std::fs::write(r.join("a/x"), b"1").unwrap();
        std::fs::write(r.join(".git"), b"gitdir: elsewhere").unwrap();
        let d0 = tree_digest(r).unwrap();
        std::fs::write(r.join(".git"), b"gitdir: moved").unwrap();
        assert_eq!(tree_digest(r).unwrap(), d0, ".git is not content");
        std::fs::write(r.join("a/x"), b"2").unwrap();
        let d1 = tree_digest(r).unwrap();
        assert_ne!(d1, d0);
        std::os::unix::fs::symlink("a/x", r.join("l")).unwrap();
        let d2 = tree_digest(r).unwrap();
        assert_ne!(d2, d1);
        std::fs::remove_file(r.join("l")).unwrap();
        std::os::unix::fs::symlink("a/y", r.join("l")).unwrap();
        assert_ne!(tree_digest(r).unwrap(), d2, "a link is its target");
    }
}
