//! A file a zip is written to that keeps its first write error and then takes every later write
//! without doing it. The zip writer finishes an archive again when it is dropped after a failed
//! `finish` (a full disk while writing the central directory), and prints that second failure on
//! stderr in front of the real error; through this writer the second attempt writes nothing and
//! fails nothing, and the caller reports the first error, with its OS code (`ENOSPC`: exit 12).

use std::cell::RefCell;
use std::io::{self, Seek, SeekFrom, Write};
use std::rc::Rc;

/// See the module docs.
pub(crate) struct Quiet<W> {
    inner: W,
    failed: FirstError,
}

/// The first write error of a [`Quiet`] writer, readable while the writer is owned elsewhere.
#[derive(Clone, Default)]
pub(crate) struct FirstError(Rc<RefCell<Option<io::Error>>>);

impl FirstError {
    /// The first write error, if any (its OS error code kept).
    pub(crate) fn take(&self) -> Option<io::Error> {
        self.0.borrow_mut().take()
    }

    fn is_set(&self) -> bool {
        self.0.borrow().is_some()
    }
}

impl<W> Quiet<W> {
    /// Wrap `inner`; the handle reads its first error.
    pub(crate) fn new(inner: W) -> (Self, FirstError) {
        let failed = FirstError::default();
        (
            Quiet {
                inner,
                failed: failed.clone(),
            },
            failed,
        )
    }
}

impl<W: Write> Write for Quiet<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed.is_set() {
            return Ok(buf.len());
        }
        self.inner.write(buf).inspect_err(|e| {
            *self.failed.0.borrow_mut() = Some(match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            });
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.failed.is_set() {
            return Ok(());
        }
        self.inner.flush()
    }
}

impl<W: Seek> Seek for Quiet<W> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that is full after `room` bytes.
    struct Full {
        room: usize,
        at: u64,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            self.room -= buf.len();
            self.at += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Full {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            if let SeekFrom::Start(p) = pos {
                self.at = p;
            }
            Ok(self.at)
        }
    }

    #[test]
    fn the_first_error_is_kept_and_later_writes_are_taken() {
        let (mut q, first) = Quiet::new(Full { room: 4, at: 0 });
        q.write_all(b"abc").unwrap();
        let e = q.write_all(b"defgh").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        q.write_all(b"more").unwrap();
        q.flush().unwrap();
        assert_eq!(first.take().unwrap().raw_os_error(), Some(libc::ENOSPC));
    }
}
