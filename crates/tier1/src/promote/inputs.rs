//! Promotion inputs that come from the GitHub job rather than from disk trees: the downloaded
//! evidence file (its digest must equal the expected one before it is safely extracted) and the
//! protected environment's approvals, decided from the whole set of records for the environment
//! (the API gives them no order, time or attempt): any record that is not `approved` refuses.

use super::PromoteError;
use crate::archive::{self, ExtractPolicy};
use crate::digest::Digest;
use crate::store::github::Approval;
use std::path::Path;

/// The environment whose approval ratifies an anchor.
pub const ACCEPTANCE_ENVIRONMENT: &str = "tier1-canonical-acceptance";

/// Check `archive` (the packed evidence as downloaded) against `expected_digest` (bare hex or
/// `sha256:`), then extract it into `dest` (absent or empty) under the archive safety rules.
pub fn unpack_evidence_archive(
    archive: &Path,
    expected_digest: &str,
    dest: &Path,
) -> Result<(), PromoteError> {
    let expected = Digest::parse_lenient(expected_digest)
        .map_err(|e| PromoteError::Invalid(format!("--expected-evidence-digest: {e}")))?;
    let found = Digest::of_file(archive).map_err(|source| PromoteError::Io {
        path: archive.display().to_string(),
        source,
    })?;
    if found != expected {
        return Err(PromoteError::Integrity(format!(
            "evidence archive {}: digest {found} differs from the expected {expected}",
            archive.display()
        )));
    }
    archive::extract_safe(archive, dest, &ExtractPolicy::evidence())?;
    Ok(())
}

/// The regular files directly in `dir` or one directory below it (where download-artifact puts
/// several artifacts: `dir/<name>/<file>`), sorted; symbolic links are refused.
pub fn files_in(dir: &Path) -> Result<Vec<std::path::PathBuf>, PromoteError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| PromoteError::Io { path, source }
    };
    let mut out = Vec::new();
    for depth in [0, 1] {
        let dirs: Vec<std::path::PathBuf> = if depth == 0 {
            vec![dir.to_path_buf()]
        } else {
            let mut v = Vec::new();
            for e in std::fs::read_dir(dir).map_err(io(dir))? {
                let e = e.map_err(io(dir))?;
                if e.file_type().map_err(io(dir))?.is_dir() {
                    v.push(e.path());
                }
            }
            v
        };
        for d in dirs {
            for e in std::fs::read_dir(&d).map_err(io(&d))? {
                let e = e.map_err(io(&d))?;
                let t = e.file_type().map_err(io(&d))?;
                if t.is_symlink() {
                    return Err(PromoteError::Invalid(format!(
                        "{}: a symbolic link among the shard packages",
                        e.path().display()
                    )));
                }
                if t.is_file() {
                    out.push(e.path());
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The reviewers who approved `environment`, from all of a run's approval records. At least one
/// record must cover the environment and every one that does must be `approved`: the records carry
/// no time or attempt, so a rejection cannot be told apart from a later approval (fail closed).
pub(crate) fn approving_reviewers(
    approvals: &[Approval],
    environment: &str,
) -> Result<Vec<String>, PromoteError> {
    let relevant: Vec<&Approval> = approvals
        .iter()
        .filter(|a| a.environments.iter().any(|e| e == environment))
        .collect();
    if relevant.is_empty() {
        return Err(PromoteError::Invalid(format!(
            "no approval record of environment {environment} exists for this run"
        )));
    }
    let refused: Vec<String> = relevant
        .iter()
        .filter(|a| a.state != "approved")
        .map(|a| format!("{:?} by {}", a.state, a.reviewer_login))
        .collect();
    if !refused.is_empty() {
        return Err(PromoteError::Invalid(format!(
            "environment {environment} has {} approval record(s) that are not \"approved\" ({}) among {} for this run: the API records no time or attempt, so a rejection is never outweighed by an approval; dispatch the promotion again and approve the new run",
            refused.len(),
            refused.join(", "),
            relevant.len()
        )));
    }
    let mut logins: Vec<String> = relevant.iter().map(|a| a.reviewer_login.clone()).collect();
    logins.sort();
    logins.dedup();
    Ok(logins)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(state: &str, who: &str, env: &str) -> Approval {
        Approval {
            state: state.into(),
            reviewer_login: who.into(),
            reviewer_id: 1,
            comment: String::new(),
            environments: vec![env.into()],
        }
    }

    #[test]
    fn approvals_must_exist_and_be_approved() {
        let env = ACCEPTANCE_ENVIRONMENT;
        let e = approving_reviewers(&[], env).unwrap_err().to_string();
        assert!(e.contains("no approval record"), "{e}");
        let e = approving_reviewers(&[approval("approved", "bob", "other")], env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no approval record"), "{e}");
        let e = approving_reviewers(
            &[
                approval("approved", "bob", env),
                approval("rejected", "carol", env),
            ],
            env,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"rejected\" by carol"), "{e}");
        assert!(e.contains("dispatch the promotion again"), "{e}");
        // Order carries no meaning: a rejection listed first refuses as well.
        let e = approving_reviewers(
            &[
                approval("rejected", "carol", env),
                approval("approved", "bob", env),
            ],
            env,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"rejected\" by carol"), "{e}");
        let e = approving_reviewers(&[approval("pending", "dan", env)], env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"pending\" by dan"), "{e}");
        let ok = approving_reviewers(
            &[
                approval("approved", "bob", env),
                approval("approved", "ann", env),
            ],
            env,
        )
        .unwrap();
        assert_eq!(ok, ["ann", "bob"]);
    }

    #[test]
    fn evidence_archive_digest_is_checked_before_extraction() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src/r1");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("manifest.json"), b"{}").unwrap();
        let zip = t.path().join("tier1-evidence-1-1");
        let digest = archive::write_deterministic_zip(&t.path().join("src"), &zip).unwrap();
        let dest = t.path().join("out");
        let wrong = Digest::of_bytes(b"x");
        let e = unpack_evidence_archive(&zip, wrong.as_str(), &dest)
            .unwrap_err()
            .to_string();
        assert!(e.contains("differs from the expected"), "{e}");
        assert!(!dest.exists(), "nothing extracted on a digest mismatch");
        unpack_evidence_archive(&zip, digest.hex(), &dest).unwrap();
        assert!(dest.join("r1/manifest.json").is_file());
    }
}
