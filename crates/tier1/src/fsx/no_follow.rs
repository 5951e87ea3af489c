//! Files opened and directories used without following symbolic links.

use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The error for a file that is a symbolic link where tier1 reads or writes a file of its own.
pub(crate) fn symlink_refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link: refusing to open it (expected a regular file)",
            path.display()
        ),
    )
}

/// Open `path` with `options`, refusing a symbolic link as its last component (`O_NOFOLLOW`)
/// with [`symlink_refused`]'s message.
pub(crate) fn open_no_follow(path: &Path, options: &mut fs::OpenOptions) -> io::Result<fs::File> {
    options
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => symlink_refused(path),
            _ => e,
        })
}

/// Read a whole file without following a symbolic link.
pub(crate) fn read_no_follow(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = open_no_follow(path, fs::OpenOptions::new().read(true))?;
    let mut out = Vec::new();
    io::Read::read_to_end(&mut f, &mut out)?;
    Ok(out)
}

/// [`read_no_follow`], refusing a file of more than `max` bytes (`FileTooLarge`, naming it) after
/// reading at most one byte past the cap.
pub(crate) fn read_no_follow_at_most(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let f = open_no_follow(path, fs::OpenOptions::new().read(true))?;
    let mut out = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(f, max.saturating_add(1)), &mut out)?;
    if out.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("{} is larger than {max} bytes", path.display()),
        ));
    }
    Ok(out)
}

/// Create the directory `dir` when absent (its parents too) and check that it is a real directory,
/// never a symbolic link to one.
pub(crate) fn real_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link: refusing to use it (expected a real directory)",
                dir.display()
            ),
        )),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir)?;
            real_dir(dir)
        }
        Err(e) => Err(e),
    }
}
