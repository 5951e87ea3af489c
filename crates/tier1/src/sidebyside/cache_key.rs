//! The key that tells a build-cache entry this tier1 made from one it did not. The cache may be
//! shared (`$RUNNER_TOOL_CACHE/tier1-builds`, between jobs and users of one machine), so a
//! completion marker beside the outputs proves nothing by itself: whoever can write the cache can
//! rewrite an output and its recorded digest together. Each marker therefore carries an
//! HMAC-SHA256 over its content under a secret key that only the user who builds holds: 32 random
//! bytes in `<state dir>/build-cache-<builder>.key`, the state directory being `TIER1_STATE_DIR`,
//! else `$XDG_STATE_HOME/tier1`, else `$HOME/.local/state/tier1`. The directory is created mode
//! 0700 and the key mode 0600; a key or directory that another user owns, that others can write
//! (the directory) or read (the key), or that is a symbolic link, is refused, never used. Each
//! builder (`tier1-run`'s side by side, `tier1-bisect`) has a key of its own, so the nightly does
//! not trust an entry that a bisection built, even as the same user.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Bytes of a key.
const KEY_BYTES: usize = 32;

/// The program that builds (and signs) cache entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builder {
    /// `tier1-run`'s side-by-side comparison (in a night, or a preview).
    SideBySide,
    /// `tier1-bisect`.
    Bisect,
}

impl Builder {
    /// The word in the key's file name.
    fn as_str(self) -> &'static str {
        match self {
            Builder::SideBySide => "run",
            Builder::Bisect => "bisect",
        }
    }
}

/// A loaded key, with the file it came from (for messages).
pub(crate) struct CacheKey {
    key: [u8; KEY_BYTES],
    path: PathBuf,
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheKey")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The directory holding the keys (see the module docs).
pub(crate) fn state_dir() -> Result<PathBuf, String> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("TIER1_STATE_DIR") {
        return Ok(d);
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return Ok(d.join("tier1"));
    }
    var("HOME")
        .map(|h| h.join(".local").join("state").join("tier1"))
        .ok_or_else(|| {
            "no state directory for the build cache's key: set TIER1_STATE_DIR (or HOME)".into()
        })
}

/// The uid this process runs as (the owner of its own `/proc` entry).
fn my_uid() -> Result<u32, String> {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| format!("/proc/self: cannot tell which user this is: {e}"))
}

impl CacheKey {
    /// The key of `builder`, created on first use (see the module docs).
    pub(crate) fn load_or_create(builder: Builder) -> Result<CacheKey, String> {
        Self::in_dir(&state_dir()?, builder)
    }

    /// The key of `builder` in the state directory `dir`.
    pub(crate) fn in_dir(dir: &Path, builder: Builder) -> Result<CacheKey, String> {
        let uid = my_uid()?;
        let shown = dir.display();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("{shown}: could not create the state directory: {e}"))?;
        let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{shown}: the build cache's key directory must be a real directory of user {uid} that no one else can write (expected mode 0700), found {} owned by user {} with mode {:04o}",
                if meta.file_type().is_symlink() {
                    "a symbolic link"
                } else if meta.is_dir() {
                    "a directory"
                } else {
                    "a file"
                },
                meta.uid(),
                meta.mode() & 0o7777
            ));
        }
        let path = dir.join(format!("build-cache-{}.key", builder.as_str()));
        match Self::read(&path, uid) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(dir, &path, uid),
            Err(e) => Err(format!("{}: {e}", path.display())),
            Ok(key) => Ok(CacheKey { key, path }),
        }
    }

    /// Read an existing key: a regular file of ours, `KEY_BYTES` long, readable by no one else.
    fn read(path: &Path, uid: u32) -> std::io::Result<[u8; KEY_BYTES]> {
        let mut f = crate::fsx::open_no_follow(path, std::fs::OpenOptions::new().read(true))?;
        let meta = f.metadata()?;
        if !meta.is_file() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "expected a regular file of user {uid} readable by no one else (mode 0600), found owner {} and mode {:04o}: refusing to trust the build cache with it",
                    meta.uid(),
                    meta.mode() & 0o7777
                ),
            ));
        }
        let mut key = [0u8; KEY_BYTES];
        let mut rest = Vec::new();
        f.read_exact(&mut key)
            .and_then(|()| f.take(1).read_to_end(&mut rest))
            .ok()
            .filter(|n| *n == 0)
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("expected exactly {KEY_BYTES} bytes, found another length"),
                )
            })?;
        Ok(key)
    }

    /// Make a new key: random bytes written to a private temporary file, linked into place (a key
    /// another process made first wins, and is read).
    fn create(dir: &Path, path: &Path, uid: u32) -> Result<CacheKey, String> {
        let shown = path.display();
        crate::fsx::stale::tidy([dir.to_path_buf()]);
        let mut key = [0u8; KEY_BYTES];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut r| r.read_exact(&mut key))
            .map_err(|e| format!("/dev/urandom: {e}"))?;
        let tmp = tempfile::Builder::new()
            .prefix(&crate::fsx::stale::temp_prefix("key"))
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        tmp.as_file()
            .write_all(&key)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| format!("{shown}: {e}"))?;
        match std::fs::hard_link(tmp.path(), path) {
            Ok(()) => {
                tracing::info!(key = %shown, "created the build cache's key (entries signed with it are trusted; keep it private)");
                Ok(CacheKey {
                    key,
                    path: path.to_path_buf(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::read(path, uid)
                .map(|key| CacheKey {
                    key,
                    path: path.to_path_buf(),
                })
                .map_err(|e| format!("{shown}: {e}")),
            Err(e) => Err(format!("{shown}: {e}")),
        }
        // The temporary name is removed when `tmp` drops.
    }

    /// The file the key came from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn hmac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes a key of any length")
    }

    /// HMAC-SHA256 of `bytes`, hex.
    pub(crate) fn sign(&self, bytes: &[u8]) -> String {
        let mut m = self.hmac();
        m.update(bytes);
        hex::encode(m.finalize().into_bytes())
    }

    /// Whether `mac` (hex) is this key's HMAC of `bytes` (compared in constant time).
    pub(crate) fn verifies(&self, bytes: &[u8], mac: &str) -> bool {
        let Ok(tag) = hex::decode(mac) else {
            return false;
        };
        let mut m = self.hmac();
        m.update(bytes);
        m.verify_slice(&tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        let k = CacheKey {
            key: [0; KEY_BYTES],
            path: PathBuf::new(),
        };
        // RFC 4231 test case 2 uses the key "Jefe"; check the primitive itself with it.
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(m.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mac = k.sign(b"marker");
        assert!(k.verifies(b"marker", &mac));
        assert!(!k.verifies(b"marker!", &mac));
        assert!(!k.verifies(b"marker", "not hex"));
    }

    #[test]
    fn a_key_is_made_once_private_and_separate_per_builder() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        let a = CacheKey::in_dir(&dir, Builder::SideBySide).unwrap();
        let again = CacheKey::in_dir(&dir, Builder::SideBySide).unwrap();
        assert_eq!(a.key, again.key, "the same key on every use");
        let b = CacheKey::in_dir(&dir, Builder::Bisect).unwrap();
        assert_ne!(a.key, b.key, "each builder has its own");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(a.path()), 0o600);
        assert!(!b.verifies(b"x", &a.sign(b"x")));
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
    }

    #[test]
    fn a_key_others_can_read_or_a_linked_key_is_refused_and_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        let a = CacheKey::in_dir(&dir, Builder::SideBySide).unwrap();
        std::fs::set_permissions(a.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = CacheKey::in_dir(&dir, Builder::SideBySide).unwrap_err();
        assert!(e.contains("mode 0600") && e.contains("found owner"), "{e}");
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("build-cache-bisect.key")).unwrap();
        let e = CacheKey::in_dir(&dir, Builder::Bisect).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = CacheKey::in_dir(&dir, Builder::SideBySide).unwrap_err();
        assert!(e.contains("no one else can write"), "{e}");
    }
}
