//! Deterministic gzip-compressed tar archives (`.tar.gz`, POSIX ustar) and their bounded, safe
//! reading: the container of sealed history segments. Writing is byte-identical for identical
//! input (members in the order given, mode 0644, uid/gid 0, mtime 0, empty user and group names,
//! gzip header without name or time, deflate level 6). Reading accepts only what the writer
//! makes: regular files with safe relative names, a valid header checksum, within the caps. Every
//! read is bounded whatever the stream claims: a member's bytes are read as they arrive (never
//! allocated from its header's size), and after the end-of-archive marker at most
//! [`MAX_TRAILER_BYTES`] of zeros are read before the stream is refused, so a small archive padded
//! with gigabytes of compressed zeros costs neither memory nor time.

use crate::fsx;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use std::io::{self, Read, Write};

/// Size of a tar block.
const BLOCK: usize = 512;
/// Longest `name` field of a ustar header.
const NAME_LEN: usize = 100;
/// Longest `prefix` field of a ustar header.
const PREFIX_LEN: usize = 155;
/// Largest member the 11 octal digits of the size field can state.
const MAX_MEMBER_BYTES: u64 = 0o77_777_777_777;
/// Most zero bytes read after the end-of-archive marker's first block: the rest of a tar record
/// of 20 blocks (what `tar` pads to; this writer writes one more block).
pub(crate) const MAX_TRAILER_BYTES: u64 = 19 * BLOCK as u64;
/// Most bytes a member's buffer is given before its bytes arrive.
const INITIAL_MEMBER_CAPACITY: u64 = 1 << 20;

/// A refused or failed `.tar.gz` operation; the message names the member and what is wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TgzError {
    /// Reading or writing the underlying stream failed (a corrupt gzip stream included).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A member name cannot be stored in a ustar header.
    #[error("member {name:?}: {message}")]
    Name {
        /// The member name.
        name: String,
        /// Why.
        message: String,
    },
    /// The archive is not one this writer makes, or it breaks a cap.
    #[error("{0}")]
    Refused(String),
}

/// Caps on what [`read`] accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadLimits {
    /// Most members.
    pub(crate) max_members: usize,
    /// Most decompressed member bytes, summed.
    pub(crate) max_bytes: u64,
}

/// Write `members` (relative `/` name, bytes), in the order given, as a deterministic `.tar.gz`.
pub(crate) fn write<W: Write>(out: W, members: &[(String, Vec<u8>)]) -> Result<W, TgzError> {
    let mut gz = flate2::GzBuilder::new()
        .operating_system(255)
        .write(out, Compression::new(6));
    for (name, bytes) in members {
        write_member(&mut gz, name, bytes)?;
    }
    gz.write_all(&[0u8; 2 * BLOCK])?;
    Ok(gz.finish()?)
}

fn write_member<W: Write>(gz: &mut GzEncoder<W>, name: &str, bytes: &[u8]) -> Result<(), TgzError> {
    let bad = |message: &str| TgzError::Name {
        name: name.to_string(),
        message: message.into(),
    };
    if fsx::safe_relative_parts(name).is_none() {
        return Err(bad("not a safe relative path"));
    }
    if bytes.len() as u64 > MAX_MEMBER_BYTES {
        return Err(bad("larger than a ustar header can state"));
    }
    let (prefix, short) = split_name(name).ok_or_else(|| {
        bad("too long for a ustar header (at most 155 + 100 bytes, split at a `/`)")
    })?;
    let mut h = [0u8; BLOCK];
    h[..short.len()].copy_from_slice(short.as_bytes());
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], bytes.len() as u64);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
    let sum = checksum(&h);
    octal(&mut h[148..155], sum);
    h[155] = b' ';
    gz.write_all(&h)?;
    gz.write_all(bytes)?;
    let pad = (BLOCK - bytes.len() % BLOCK) % BLOCK;
    gz.write_all(&[0u8; BLOCK][..pad])?;
    Ok(())
}

/// `(prefix, name)` of a ustar header for `full`, or None when it does not fit.
fn split_name(full: &str) -> Option<(&str, &str)> {
    if full.len() <= NAME_LEN {
        return Some(("", full));
    }
    full.match_indices('/')
        .map(|(i, _)| (&full[..i], &full[i + 1..]))
        .find(|(p, n)| p.len() <= PREFIX_LEN && n.len() <= NAME_LEN && !n.is_empty())
}

/// Zero-padded octal digits, NUL-terminated, filling `field`.
fn octal(field: &mut [u8], v: u64) {
    let digits = field.len() - 1;
    let s = format!("{v:0digits$o}");
    field[..digits].copy_from_slice(&s.as_bytes()[s.len() - digits..]);
    field[digits] = 0;
}

/// The header checksum: the byte sum with the checksum field read as spaces.
fn checksum(h: &[u8; BLOCK]) -> u64 {
    h.iter()
        .enumerate()
        .map(|(i, b)| u64::from(if (148..156).contains(&i) { b' ' } else { *b }))
        .sum()
}

fn parse_octal(field: &[u8], what: &str) -> Result<u64, TgzError> {
    let s: Vec<u8> = field
        .iter()
        .copied()
        .take_while(|b| *b != 0)
        .filter(|b| *b != b' ')
        .collect();
    let s = std::str::from_utf8(&s).unwrap_or("?");
    u64::from_str_radix(s, 8).map_err(|_| {
        TgzError::Refused(format!(
            "header field {what}: expected octal digits, found {s:?}"
        ))
    })
}

fn field_str<'a>(field: &'a [u8], what: &str) -> Result<&'a str, TgzError> {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    std::str::from_utf8(&field[..end])
        .map_err(|_| TgzError::Refused(format!("header field {what} is not UTF-8")))
}

/// A reader of a `.tar.gz` stream's members, one after the other.
pub(crate) struct Members<R: Read> {
    gz: GzDecoder<R>,
    limits: ReadLimits,
    seen: usize,
    bytes: u64,
    done: bool,
}

impl<R: Read> std::fmt::Debug for Members<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Members").field("seen", &self.seen).finish()
    }
}

/// Read members of the `.tar.gz` stream `src` one at a time under `limits`.
pub(crate) fn members<R: Read>(src: R, limits: ReadLimits) -> Members<R> {
    Members {
        gz: GzDecoder::new(src),
        limits,
        seen: 0,
        bytes: 0,
        done: false,
    }
}

impl<R: Read> Members<R> {
    /// The next member (name, bytes); `Ok(None)` at the end-of-archive marker.
    pub(crate) fn next_member(&mut self) -> Result<Option<(String, Vec<u8>)>, TgzError> {
        if self.done {
            return Ok(None);
        }
        let mut h = [0u8; BLOCK];
        self.gz.read_exact(&mut h)?;
        if h.iter().all(|b| *b == 0) {
            self.done = true;
            return Ok(None);
        }
        let stored = parse_octal(&h[148..156], "chksum")?;
        if stored != checksum(&h) {
            return Err(TgzError::Refused(format!(
                "header checksum: expected {}, found {stored}",
                checksum(&h)
            )));
        }
        if &h[257..263] != b"ustar\0" || &h[263..265] != b"00" {
            return Err(TgzError::Refused(
                "header magic: expected a POSIX ustar header (\"ustar\\0\" \"00\")".into(),
            ));
        }
        let short = field_str(&h[..100], "name")?;
        let prefix = field_str(&h[345..500], "prefix")?;
        let name = if prefix.is_empty() {
            short.to_string()
        } else {
            format!("{prefix}/{short}")
        };
        let refuse = |m: String| TgzError::Name {
            name: name.clone(),
            message: m,
        };
        if h[156] != b'0' && h[156] != 0 {
            return Err(refuse(format!(
                "type {:?} refused (expected a regular file)",
                char::from(h[156])
            )));
        }
        if fsx::safe_relative_parts(&name).is_none() {
            return Err(refuse("not a safe relative path".into()));
        }
        self.seen += 1;
        if self.seen > self.limits.max_members {
            return Err(refuse(format!(
                "more than {} members",
                self.limits.max_members
            )));
        }
        let size = parse_octal(&h[124..136], "size")?;
        self.bytes = self.bytes.saturating_add(size);
        if self.bytes > self.limits.max_bytes {
            return Err(refuse(format!(
                "the members expand past the cap of {} bytes",
                self.limits.max_bytes
            )));
        }
        // Grown as the bytes arrive: a header may claim up to the cap while the stream ends early.
        let mut bytes = Vec::with_capacity(size.min(INITIAL_MEMBER_CAPACITY) as usize);
        let got = (&mut self.gz).take(size).read_to_end(&mut bytes)?;
        if got as u64 != size {
            return Err(refuse(format!(
                "the archive ends inside the member: its header states {size} bytes, found {got}"
            )));
        }
        let pad = (BLOCK - (size as usize) % BLOCK) % BLOCK;
        let mut skip = [0u8; BLOCK];
        self.gz.read_exact(&mut skip[..pad])?;
        Ok(Some((name, bytes)))
    }

    /// Every remaining member, then the end marker; nothing may follow it but at most
    /// [`MAX_TRAILER_BYTES`] of zeros (read in one block's buffer, never collected).
    pub(crate) fn read_all(mut self) -> Result<Vec<(String, Vec<u8>)>, TgzError> {
        let mut out = Vec::new();
        while let Some(m) = self.next_member()? {
            out.push(m);
        }
        let mut block = [0u8; BLOCK];
        let mut trailer = 0u64;
        loop {
            let n = match self.gz.read(&mut block) {
                Ok(0) => return Ok(out),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if block[..n].iter().any(|b| *b != 0) {
                return Err(TgzError::Refused(
                    "data after the end-of-archive marker (expected only zero blocks)".into(),
                ));
            }
            trailer += n as u64;
            if trailer > MAX_TRAILER_BYTES {
                return Err(TgzError::Refused(format!(
                    "more than {MAX_TRAILER_BYTES} bytes after the end-of-archive marker (expected at most the zero blocks of one tar record): the archive was padded"
                )));
            }
        }
    }
}

/// Every member of the `.tar.gz` stream `src` under `limits`.
pub(crate) fn read<R: Read>(
    src: R,
    limits: ReadLimits,
) -> Result<Vec<(String, Vec<u8>)>, TgzError> {
    members(src, limits).read_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ReadLimits = ReadLimits {
        max_members: 100,
        max_bytes: 1 << 20,
    };

    fn sample() -> Vec<(String, Vec<u8>)> {
        let long = format!("{}/{}", "r".repeat(150), "summary.json");
        vec![
            ("segment.json".into(), b"{\"a\": 1}\n".to_vec()),
            ("r1/summary.json".into(), vec![b'x'; 513]),
            ("r1/empty.md".into(), vec![]),
            (long, b"{}".to_vec()),
        ]
    }

    #[test]
    fn round_trips_byte_identically() {
        let a = write(Vec::new(), &sample()).unwrap();
        let b = write(Vec::new(), &sample()).unwrap();
        assert_eq!(a, b, "deterministic");
        assert_eq!(read(&a[..], LIMITS).unwrap(), sample());
        assert_eq!(a[9], 255, "gzip OS byte: unknown");
        assert_eq!(&a[4..8], &[0, 0, 0, 0], "gzip mtime 0");
    }

    #[test]
    fn the_system_tar_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.tar.gz");
        std::fs::write(&file, write(Vec::new(), &sample()).unwrap()).unwrap();
        let Ok(out) = std::process::Command::new("tar")
            .arg("-tzf")
            .arg(&file)
            .output()
        else {
            panic!("tar is required by this test");
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        let want: Vec<String> = sample().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, want);
    }

    #[test]
    fn refuses_unsafe_names_corruption_and_caps() {
        assert!(write(Vec::new(), &[("../x".into(), vec![])]).is_err());
        assert!(write(Vec::new(), &[("a".repeat(101), vec![])]).is_err());
        let good = write(Vec::new(), &sample()).unwrap();
        let e = read(
            &good[..],
            ReadLimits {
                max_members: 2,
                max_bytes: 1 << 20,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("more than 2 members"), "{e}");
        let e = read(
            &good[..],
            ReadLimits {
                max_members: 100,
                max_bytes: 100,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("cap of 100 bytes"), "{e}");
        let mut bad = good.clone();
        let n = bad.len();
        bad[n / 2] ^= 0xff;
        assert!(read(&bad[..], LIMITS).is_err(), "a flipped byte is refused");
        assert!(
            read(&good[..n - 10], LIMITS).is_err(),
            "a cut stream is refused"
        );
    }

    /// The tar stream of `members` (the writer's output, decompressed).
    fn tar_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut tar = Vec::new();
        GzDecoder::new(&write(Vec::new(), members).unwrap()[..])
            .read_to_end(&mut tar)
            .unwrap();
        tar
    }

    /// `tar` followed by `zeros` zero bytes, gzip-compressed (fast: zeros compress 1000:1).
    fn gz_padded(tar: &[u8], zeros: u64) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(tar).unwrap();
        let chunk = vec![0u8; 1 << 20];
        let mut left = zeros;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            e.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
        e.finish().unwrap()
    }

    #[test]
    fn zeros_after_the_end_marker_are_bounded() {
        let tar = tar_of(&sample());
        // Padded to a whole tar record (what `tar` writes): accepted.
        let record = 20 * BLOCK;
        let pad = (record - tar.len() % record) % record;
        assert_eq!(
            read(&gz_padded(&tar, pad as u64)[..], LIMITS).unwrap(),
            sample()
        );
        // Padded with 256 MiB of zeros (a stream of a few MiB): refused after one record, the
        // zeros never collected.
        let padded = gz_padded(&tar, 256 << 20);
        assert!(padded.len() < 4 << 20, "{}", padded.len());
        let e = read(&padded[..], LIMITS).unwrap_err();
        assert!(
            e.to_string().contains(&format!(
                "more than {MAX_TRAILER_BYTES} bytes after the end-of-archive marker"
            )),
            "{e}"
        );
        // Anything but zeros after the marker is refused too.
        let mut junk = tar.clone();
        junk.extend_from_slice(b"junk");
        let e = read(&gz_padded(&junk, 0)[..], LIMITS).unwrap_err();
        assert!(
            e.to_string()
                .contains("data after the end-of-archive marker"),
            "{e}"
        );
    }

    #[test]
    fn a_header_that_claims_more_than_the_stream_holds_allocates_nothing_for_it() {
        // One member whose header states the largest size ustar can state (8 GiB), over a stream
        // that ends after 1 KiB: refused when the stream ends, naming both sizes.
        let mut tar = tar_of(&[("a.json".into(), vec![b'x'; 1024])]);
        let mut h = [0u8; BLOCK];
        h.copy_from_slice(&tar[..BLOCK]);
        octal(&mut h[124..136], MAX_MEMBER_BYTES);
        let sum = checksum(&h);
        octal(&mut h[148..155], sum);
        h[155] = b' ';
        tar[..BLOCK].copy_from_slice(&h);
        tar.truncate(BLOCK + 1024);
        let limits = ReadLimits {
            max_members: 10,
            max_bytes: u64::MAX,
        };
        let e = read(&gz_padded(&tar, 0)[..], limits).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("states {MAX_MEMBER_BYTES} bytes, found 1024")),
            "{e}"
        );
    }

    #[test]
    fn refuses_links_and_bad_checksums() {
        // A header block patched by hand: a symbolic link, then a checksum that does not add up.
        let mut raw = Vec::new();
        let mut gz = flate2::GzBuilder::new().write(&mut raw, Compression::new(6));
        write_member(&mut gz, "a.json", b"{}").unwrap();
        gz.finish().unwrap();
        let mut tar = Vec::new();
        GzDecoder::new(&raw[..]).read_to_end(&mut tar).unwrap();
        let regz = |tar: &[u8]| {
            let mut e = GzEncoder::new(Vec::new(), Compression::new(6));
            e.write_all(tar).unwrap();
            e.write_all(&[0u8; 2 * BLOCK]).unwrap();
            e.finish().unwrap()
        };
        let mut link = tar.clone();
        link[156] = b'2';
        let mut h = [0u8; BLOCK];
        h.copy_from_slice(&link[..BLOCK]);
        octal(&mut link[148..155], checksum(&h));
        let e = read(&regz(&link)[..], LIMITS).unwrap_err();
        assert!(e.to_string().contains("expected a regular file"), "{e}");
        let mut sum = tar;
        sum[0] = b'b';
        let e = read(&regz(&sum)[..], LIMITS).unwrap_err();
        assert!(e.to_string().contains("header checksum"), "{e}");
    }
}
