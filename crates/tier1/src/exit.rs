//! Exit codes: the one table every binary maps its outcome to (documented in docs/exit-codes.md).

use std::fmt;

/// A process exit code of a tier1 binary. The numbers are API: scripts and workflows branch on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    /// The operation completed and, where it judges something, the verdict is "pass".
    Ok,
    /// The operation completed but the release gate (or another verdict) says "fail".
    Gate,
    /// The command line is malformed (clap's own code).
    Usage,
    /// An input file, field or request fails validation; nothing was written.
    Invalid,
    /// Integrity failure: digest mismatch, unsafe archive, broken hash chain, provenance mismatch.
    /// Fail closed: no fallback and no bootstrap.
    Integrity,
    /// No usable prior history or evidence exists and bootstrap was not allowed.
    Unavailable,
    /// The anchor's evidence is 60 days old or more and renewal was not allowed.
    RenewalRequired,
    /// The runner or GPU attestation failed (labels, runner version, GPU name, MIG, count).
    Attestation,
    /// The destination already holds data (non-empty directory, existing run id).
    Conflict,
    /// A remote API (GitHub) failed after the allowed retries.
    Remote,
    /// Local I/O or another environment failure.
    Io,
    /// Stopped by SIGINT or SIGTERM before it completed; what it owned was cleaned up.
    Cancelled,
    /// A write failed because the destination's file system is full or over quota (ENOSPC,
    /// EDQUOT): never tampering, never invalid input. Free space and rerun.
    DiskFull,
}

impl Exit {
    /// Every exit code, in numeric order (used by the docs test).
    pub const ALL: [Exit; 13] = [
        Exit::Ok,
        Exit::Gate,
        Exit::Usage,
        Exit::Invalid,
        Exit::Integrity,
        Exit::Unavailable,
        Exit::RenewalRequired,
        Exit::Attestation,
        Exit::Conflict,
        Exit::Remote,
        Exit::Io,
        Exit::Cancelled,
        Exit::DiskFull,
    ];

    /// The numeric process exit status.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Gate => 1,
            Exit::Usage => 2,
            Exit::Invalid => 3,
            Exit::Integrity => 4,
            Exit::Unavailable => 5,
            Exit::RenewalRequired => 6,
            Exit::Attestation => 7,
            Exit::Conflict => 8,
            Exit::Remote => 9,
            Exit::Io => 10,
            Exit::Cancelled => 11,
            Exit::DiskFull => 12,
        }
    }

    /// What the code means, in one sentence (the `meaning` column of docs/exit-codes.md).
    pub const fn meaning(self) -> &'static str {
        match self {
            Exit::Ok => "the operation completed; where it judges something, the verdict is pass",
            Exit::Gate => "the operation completed but the release gate said fail",
            Exit::Usage => "the command line is malformed",
            Exit::Invalid => {
                "an input file, field or request fails validation; nothing was written"
            }
            Exit::Integrity => "integrity failure; fail closed, no fallback, no bootstrap",
            Exit::Unavailable => {
                "no usable prior history or evidence exists and bootstrap was not allowed"
            }
            Exit::RenewalRequired => {
                "the anchor's evidence is 60 days old or more and renewal was not allowed"
            }
            Exit::Attestation => "the runner or GPU attestation failed",
            Exit::Conflict => "the destination already holds data",
            Exit::Remote => "a remote API failed after the allowed retries",
            Exit::Io => "local I/O or another environment failure",
            Exit::Cancelled => "stopped by SIGINT or SIGTERM before it completed",
            Exit::DiskFull => "a write failed because the destination's file system is full",
        }
    }

    /// A short stable name, as printed in JSON status output.
    pub const fn name(self) -> &'static str {
        match self {
            Exit::Ok => "ok",
            Exit::Gate => "gate_failed",
            Exit::Usage => "usage",
            Exit::Invalid => "invalid_input",
            Exit::Integrity => "integrity",
            Exit::Unavailable => "unavailable",
            Exit::RenewalRequired => "renewal_required",
            Exit::Attestation => "attestation_failed",
            Exit::Conflict => "conflict",
            Exit::Remote => "remote_api",
            Exit::Io => "io",
            Exit::Cancelled => "cancelled",
            Exit::DiskFull => "disk_full",
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code(), self.name())
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

/// Implemented by every module error: which exit code the failure maps to.
pub trait Classify {
    /// The exit code a binary returns when this error ends it.
    fn exit(&self) -> Exit;
}

impl Classify for std::io::Error {
    fn exit(&self) -> Exit {
        of_io(self)
    }
}

/// True when `e` says the file system is full or over quota (ENOSPC, EDQUOT).
pub(crate) fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) || matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// The exit code of a local I/O failure: [`Exit::DiskFull`] for a full disk or quota, else
/// [`Exit::Io`]. Every module error's I/O variant is classified through here.
pub(crate) fn of_io(e: &std::io::Error) -> Exit {
    if is_disk_full(e) {
        Exit::DiskFull
    } else {
        Exit::Io
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_ordered() {
        for (i, e) in Exit::ALL.iter().enumerate() {
            assert_eq!(usize::from(e.code()), i, "{e}");
        }
    }

    #[test]
    fn a_full_disk_is_its_own_code() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(full.exit(), Exit::DiskFull);
        let quota = std::io::Error::from_raw_os_error(libc::EDQUOT);
        assert_eq!(of_io(&quota), Exit::DiskFull);
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(of_io(&denied), Exit::Io);
        assert_eq!(Exit::DiskFull.code(), 12);
    }
}
