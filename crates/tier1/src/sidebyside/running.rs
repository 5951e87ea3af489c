//! The running binary as the current side of a built-in target's comparison. `tier1-nightly` and
//! `tier1-run` record at start which commit they were built from and whether the files the build
//! reads matched it ([`record`], from the package's build script: `TIER1_BUILD_COMMIT`,
//! `TIER1_BUILD_CLEAN`); both run a built-in target alone with `--emit-target KEY`. When the
//! night's checkout is clean at that same commit, the running binary *is* the current commit's
//! build, so the comparison invokes it instead of building the commit again through the cache
//! (issue 37: that build was about 3 of a newcomer's 5 minutes on the second night). Anything
//! unproven (another commit, a dirty build or checkout, a binary that recorded nothing) builds
//! through the cache as before, with the reason logged.

use std::path::PathBuf;
use std::sync::OnceLock;

/// Which commit a binary was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildIdentity {
    /// The full commit id (empty: not built from a git checkout).
    pub commit: &'static str,
    /// No file the build reads differed from the commit.
    pub clean: bool,
}

static RUNNING: OnceLock<BuildIdentity> = OnceLock::new();

/// Record the running binary's identity (`commit`, `clean` as the build script wrote them:
/// `"1"` is clean). Only binaries that accept `--emit-target KEY` call it; the first call wins.
pub fn record(commit: &'static str, clean: &'static str) {
    let _ = RUNNING.set(BuildIdentity {
        commit,
        clean: clean == "1",
    });
}

/// Why `identity` is not the build of the checkout at `commit` (clean when `dirty` is
/// `Some(false)`), or `Ok` when it is.
pub(crate) fn proven(
    identity: Option<BuildIdentity>,
    commit: Option<&str>,
    dirty: Option<bool>,
) -> Result<(), String> {
    let id = identity.ok_or("the running binary records no build commit")?;
    if id.commit.is_empty() {
        return Err("the running binary was not built from a git checkout".into());
    }
    if !id.clean {
        return Err(format!(
            "the running binary was built from commit {} with local changes",
            id.commit
        ));
    }
    match (commit, dirty) {
        (Some(c), Some(false)) if c == id.commit => Ok(()),
        (Some(c), Some(false)) => Err(format!(
            "the running binary is commit {}'s build, the checkout is at {c}",
            id.commit
        )),
        _ => Err("the checkout is not a clean git checkout".into()),
    }
}

/// The running binary, when it is proven to be the build of the checkout at `commit` (clean when
/// `dirty` is `Some(false)`); else why not.
pub(crate) fn program_for(commit: Option<&str>, dirty: Option<bool>) -> Result<PathBuf, String> {
    proven(RUNNING.get().copied(), commit, dirty)?;
    std::env::current_exe().map_err(|e| format!("the running binary's path is unknown: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "0123456789abcdef0123456789abcdef01234567";

    /// Issue 37: the running binary is the current side only when it is proven to be the
    /// checkout's build: the same commit, built clean, the checkout clean.
    #[test]
    fn the_running_binary_is_the_current_build_only_when_proven() {
        let id = |commit, clean| Some(BuildIdentity { commit, clean });
        assert_eq!(proven(id(C, true), Some(C), Some(false)), Ok(()));
        let e = proven(id(C, true), Some("f00"), Some(false)).unwrap_err();
        assert!(e.contains("the checkout is at f00"), "{e}");
        assert!(
            proven(id(C, true), Some(C), Some(true))
                .unwrap_err()
                .contains("not a clean git checkout")
        );
        assert!(proven(id(C, true), None, None).is_err());
        assert!(
            proven(id(C, false), Some(C), Some(false))
                .unwrap_err()
                .contains("with local changes")
        );
        assert!(proven(id("", true), Some(C), Some(false)).is_err());
        assert!(
            proven(None, Some(C), Some(false))
                .unwrap_err()
                .contains("records no build commit")
        );
    }
}
