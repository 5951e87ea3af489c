//! `Digest` (`sha256:<64 lower hex>`), bare-hex normalisation and streaming hashing with a size cap:
//! a stream is read (and written on) by the caller while a second thread hashes the chunks already
//! read, so reading costs no hashing time (SHA-256 itself is `sha2`'s SHA-NI path where the CPU has
//! one; measured against `openssl speed` in `benches/core/main.rs`).

use sha2::{Digest as _, Sha256};
use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::mpsc;

/// Bytes per read of a streaming copy.
const CHUNK: usize = 256 * 1024;
/// Chunks read ahead of the hashing thread at most.
const IN_FLIGHT: usize = 4;

/// A SHA-256 digest in the canonical `sha256:<64 lower hex>` form.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct Digest(String);

/// Why a digest string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid SHA-256 digest {found:?}: expected `sha256:` followed by 64 hex characters")]
pub struct DigestParseError {
    /// The refused input.
    pub(crate) found: String,
}

impl Digest {
    /// Parse the strict form `sha256:<64 hex>` (upper-case hex is lowered).
    pub(crate) fn parse(s: &str) -> Result<Self, DigestParseError> {
        let err = || DigestParseError {
            found: s.to_string(),
        };
        let hex = s.strip_prefix("sha256:").ok_or_else(err)?;
        Self::from_hex(hex).map_err(|_| err())
    }

    /// Parse either the strict form or bare 64-hex (the form `actions/upload-artifact` outputs).
    pub(crate) fn parse_lenient(s: &str) -> Result<Self, DigestParseError> {
        let t = s.trim();
        if t.starts_with("sha256:") {
            Self::parse(t)
        } else {
            Self::from_hex(t)
        }
    }

    /// Build from 64 hex characters.
    pub(crate) fn from_hex(hex: &str) -> Result<Self, DigestParseError> {
        if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Digest(format!("sha256:{}", hex.to_ascii_lowercase())))
        } else {
            Err(DigestParseError {
                found: hex.to_string(),
            })
        }
    }

    /// Build from raw 32 bytes of a SHA-256 output.
    pub(crate) fn from_bytes(bytes: &[u8; 32]) -> Self {
        Digest(format!("sha256:{}", hex::encode(bytes)))
    }

    /// Digest of an in-memory byte string.
    pub fn of_bytes(data: &[u8]) -> Self {
        Self::from_bytes(&Sha256::digest(data).into())
    }

    /// Digest of a file, streamed ([`copy_hashed`] into a sink).
    pub fn of_file(path: &Path) -> io::Result<Self> {
        let mut f = std::fs::File::open(path)?;
        Ok(copy_hashed(&mut f, &mut io::sink(), u64::MAX)?.0)
    }

    /// The canonical `sha256:<hex>` text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 lower-hex characters without the prefix.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Digest {
    type Error = DigestParseError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Digest::parse(&s)
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.0
    }
}

/// An incremental SHA-256 that is also an `io::Write` sink, counting bytes.
#[derive(Default, Clone)]
pub(crate) struct Hasher {
    inner: Sha256,
    len: u64,
}

impl fmt::Debug for Hasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hasher").field("len", &self.len).finish()
    }
}

impl Hasher {
    /// A fresh hasher.
    pub(crate) fn new() -> Self {
        Self::default()
    }
    /// Feed bytes.
    pub(crate) fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
        self.len += data.len() as u64;
    }
    /// Bytes fed so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }
    /// The final digest.
    pub(crate) fn finish(self) -> Digest {
        Digest::from_bytes(&self.inner.finalize().into())
    }
}

impl Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer that remembers whether its destination refused a write, so the caller of a copy that
/// failed can tell a destination that failed (a full disk) from a source that failed.
pub(crate) struct Watched<'a, W: Write + ?Sized> {
    inner: &'a mut W,
    error: Option<io::Error>,
}

impl<'a, W: Write + ?Sized> Watched<'a, W> {
    /// Watch writes to `inner`.
    pub(crate) fn new(inner: &'a mut W) -> Self {
        Watched { inner, error: None }
    }

    /// True once a write or flush to the destination failed.
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The destination's first error (its OS error code kept), if any.
    pub(crate) fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    fn keep(&mut self, e: &io::Error) {
        if self.error.is_none() {
            self.error = Some(match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            });
        }
    }
}

impl<W: Write + ?Sized> Write for Watched<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        if let Err(e) = &r {
            self.keep(e);
        }
        r
    }
    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        if let Err(e) = &r {
            self.keep(e);
        }
        r
    }
}

/// A chunk read and the number of its bytes that hold data.
type Chunk = (Vec<u8>, usize);

/// Copy `src` into `dst` while hashing, refusing to pass more than `cap` bytes.
/// Returns the digest and the byte count. On exceeding the cap the error kind is
/// `FileTooLarge` and its message names the cap. The caller's thread reads and writes; a scoped
/// thread hashes each chunk once it is read (reading and hashing overlap).
pub fn copy_hashed<R: Read + ?Sized, W: Write + ?Sized>(
    src: &mut R,
    dst: &mut W,
    cap: u64,
) -> io::Result<(Digest, u64)> {
    let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(IN_FLIGHT);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let hashing = scope.spawn(move || {
            let mut h = Hasher::new();
            for (buf, n) in full_rx {
                h.update(&buf[..n]);
                let _ = free_tx.send(buf);
            }
            h
        });
        let copied = pump(src, dst, cap, &full_tx, &free_rx);
        drop(full_tx);
        let h = hashing
            .join()
            .map_err(|_| io::Error::other("the hashing thread panicked"))?;
        let n = copied?;
        debug_assert_eq!(n, h.len());
        Ok((h.finish(), n))
    })
}

/// Read `src` chunk by chunk (buffers recycled from `free`), write each chunk to `dst` and hand it
/// to the hashing thread through `full`; returns the byte count.
fn pump<R: Read + ?Sized, W: Write + ?Sized>(
    src: &mut R,
    dst: &mut W,
    cap: u64,
    full: &mpsc::SyncSender<Chunk>,
    free: &mpsc::Receiver<Vec<u8>>,
) -> io::Result<u64> {
    let stopped = || io::Error::other("the hashing thread stopped");
    let mut total = 0u64;
    let mut allocated = 0;
    loop {
        let mut buf = match free.try_recv() {
            Ok(b) => b,
            Err(_) if allocated < IN_FLIGHT + 2 => {
                allocated += 1;
                vec![0u8; CHUNK]
            }
            Err(_) => free.recv().map_err(|_| stopped())?,
        };
        let n = loop {
            match src.read(&mut buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            return Ok(total);
        }
        if total + n as u64 > cap {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("stream exceeds the cap of {cap} bytes"),
            ));
        }
        dst.write_all(&buf[..n])?;
        total += n as u64;
        full.send((std::mem::take(&mut buf), n))
            .map_err(|_| stopped())?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_and_forms() {
        let d = Digest::of_bytes(b"abc");
        assert_eq!(
            d.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Digest::parse_lenient(&d.hex().to_uppercase()).unwrap(), d);
        assert_eq!(Digest::parse(d.as_str()).unwrap(), d);
        assert!(
            Digest::parse(d.hex()).is_err(),
            "bare hex is not strict form"
        );
        assert!(Digest::parse("sha256:abc").is_err());
        assert!(Digest::parse_lenient("sha1:00").is_err());
    }

    #[test]
    fn copy_hashed_agrees_with_one_shot_hashing_across_chunk_boundaries() {
        /// A reader that returns at most `step` bytes per read (like a network body).
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let data: Vec<u8> = (0..(3 * CHUNK + 17))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        for step in [1 << 20, CHUNK, 4096, 1] {
            let take = if step == 1 { 3000 } else { data.len() };
            let mut out = Vec::new();
            let (d, n) =
                copy_hashed(&mut Trickle(&data[..take], step), &mut out, u64::MAX).unwrap();
            assert_eq!(
                (d, n),
                (Digest::of_bytes(&data[..take]), take as u64),
                "step {step}"
            );
            assert_eq!(out, &data[..take]);
        }
        let (d, n) = copy_hashed(&mut &b""[..], &mut Vec::new(), 0).unwrap();
        assert_eq!((d, n), (Digest::of_bytes(b""), 0));
        /// A writer that fails: the copy reports it and the hashing thread ends.
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let e = copy_hashed(&mut &data[..], &mut Broken, u64::MAX).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }

    #[test]
    fn copy_hashed_caps() {
        let data = vec![7u8; 1000];
        let mut out = Vec::new();
        let (d, n) = copy_hashed(&mut &data[..], &mut out, 1000).unwrap();
        assert_eq!((d, n), (Digest::of_bytes(&data), 1000));
        let err = copy_hashed(&mut &data[..], &mut Vec::new(), 999).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    }
}
