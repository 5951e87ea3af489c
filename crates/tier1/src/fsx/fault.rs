//! Test-only fault injection, read in this one place: `TIER1_FAULT` makes the nth write, rename or
//! upload point of the process kill it (SIGKILL, as `kill -9` would) or fail with ENOSPC, so the
//! fault-injection suite (`tests/it/nightly_faults.rs`, docs/fault-injection.md) can stop
//! `tier1-nightly` at every point where it changes the disk. Unset (always, outside that suite),
//! every point is a no-op after one environment lookup.
//!
//! - `TIER1_FAULT=count:FILE` appends one line `<point> <path>` to FILE per point reached.
//! - `TIER1_FAULT=<point>:<n>:kill` kills the process at the nth `<point>` (`write`, `rename`,
//!   `upload`), counted from 1.
//! - `TIER1_FAULT=<point>:<n>:enospc` makes the nth `<point>` fail with "No space left on device".
//! - `TIER1_FAULT=shard:<n>:fail` makes the nth shard job of a local sharded night fail before it
//!   measures (its package is then missing, docs/sharding.md).
#![allow(unsafe_code)] // kill(2) of the process itself; the block says why.

use std::io::{self, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that configures fault injection.
pub(crate) const ENV: &str = "TIER1_FAULT";

/// A kind of point where the process changes the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// A file is about to be written (created, copied, extracted or overwritten).
    Write,
    /// A staged file or tree is about to be renamed into place (or an old one out of the way).
    Rename,
    /// An artifact is about to be stored, or its bytes were stored and its record is next.
    Upload,
    /// A shard job of a local sharded night is about to measure (docs/sharding.md).
    Shard,
}

impl Point {
    /// The name used in `TIER1_FAULT` and in count files.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Point::Write => "write",
            Point::Rename => "rename",
            Point::Upload => "upload",
            Point::Shard => "shard",
        }
    }

    const fn index(self) -> usize {
        match self {
            Point::Write => 0,
            Point::Rename => 1,
            Point::Upload => 2,
            Point::Shard => 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Kill,
    NoSpace,
    Fail,
}

#[derive(Debug)]
enum Config {
    Count(std::path::PathBuf),
    Inject {
        point: Point,
        nth: u64,
        action: Action,
    },
}

fn parse(spec: &str) -> Option<Config> {
    if let Some(file) = spec.strip_prefix("count:") {
        return (!file.is_empty()).then(|| Config::Count(file.into()));
    }
    let mut parts = spec.split(':');
    let point = match parts.next()? {
        "write" => Point::Write,
        "rename" => Point::Rename,
        "upload" => Point::Upload,
        "shard" => Point::Shard,
        _ => return None,
    };
    let nth = parts.next()?.parse().ok().filter(|n| *n > 0)?;
    let action = match parts.next()? {
        "kill" => Action::Kill,
        "enospc" => Action::NoSpace,
        "fail" => Action::Fail,
        _ => return None,
    };
    parts
        .next()
        .is_none()
        .then_some(Config::Inject { point, nth, action })
}

fn config() -> Option<&'static Config> {
    static CONFIG: OnceLock<Option<Config>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let spec = std::env::var(ENV).ok()?;
            let parsed = parse(&spec);
            if parsed.is_none() {
                tracing::warn!("{ENV}={spec:?} is not a fault specification; ignored");
            }
            parsed
        })
        .as_ref()
}

static HITS: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// Reach a `point` about `path`: a no-op unless `TIER1_FAULT` is set (see the module docs).
pub(crate) fn hit(point: Point, path: &Path) -> io::Result<()> {
    let Some(cfg) = config() else {
        return Ok(());
    };
    let n = HITS[point.index()].fetch_add(1, Ordering::SeqCst) + 1;
    match cfg {
        Config::Count(file) => {
            let line = format!("{} {}\n", point.name(), path.display());
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)?;
            f.write_all(line.as_bytes())
        }
        Config::Inject {
            point: p,
            nth,
            action,
        } if *p == point && *nth == n => match action {
            Action::Kill => {
                // SAFETY: kill(2) on this process's own pid; SIGKILL cannot be caught, so nothing
                // after it runs, exactly as when an operator runs `kill -9`.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                Err(io::Error::other(
                    "fault injection: SIGKILL was not delivered",
                ))
            }
            Action::NoSpace => Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            Action::Fail => Err(io::Error::other(format!(
                "fault injection: the {} failed at {}",
                point.name(),
                path.display()
            ))),
        },
        Config::Inject { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifications_parse_strictly() {
        assert!(matches!(parse("count:/tmp/x"), Some(Config::Count(_))));
        assert!(matches!(
            parse("rename:3:kill"),
            Some(Config::Inject {
                point: Point::Rename,
                nth: 3,
                action: Action::Kill
            })
        ));
        assert!(matches!(
            parse("shard:2:fail"),
            Some(Config::Inject {
                point: Point::Shard,
                nth: 2,
                action: Action::Fail
            })
        ));
        assert!(matches!(
            parse("write:1:enospc"),
            Some(Config::Inject {
                action: Action::NoSpace,
                ..
            })
        ));
        for bad in [
            "",
            "count:",
            "write",
            "write:0:kill",
            "write:x:kill",
            "fsync:1:kill",
            "write:1:boom",
            "write:1:kill:extra",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}
