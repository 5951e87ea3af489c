//! Would promotion accept the evidence package of a run? It extracts the package under
//! [`ExtractPolicy::evidence`]: at most `archive::MAX_MEMBERS` files of `*.json` and `*.md`,
//! `archive::MAX_EXPANDED_BYTES` in all (`crate::bench::limits`). `tier1-run` checks its evidence
//! before it appends the run to the candidate history, and `tier1-evidence pack` before it
//! writes the archive, so evidence that its own promotion would refuse (as tampering) is refused
//! where it is made (invalid input), with the file or cap named.

use super::EvidenceError;
use crate::archive::ExtractPolicy;
use std::path::Path;

/// Check the evidence directories `dirs` (under `root`) against promotion's extraction policy.
pub(crate) fn check(root: &Path, dirs: &[String]) -> Result<(), EvidenceError> {
    let policy = ExtractPolicy::evidence();
    let (mut members, mut bytes) = (0usize, 0u64);
    for d in dirs {
        let dir = root.join(d);
        let files = crate::fsx::list_files(&dir).map_err(|e| EvidenceError::io(&dir, e))?;
        for rel in files {
            let member = format!("{d}/{rel}");
            let path = dir.join(&rel);
            let meta = std::fs::symlink_metadata(&path).map_err(|e| EvidenceError::io(&path, e))?;
            if !meta.is_file() || !policy.allows(&member) {
                return Err(EvidenceError::invalid(
                    path.display().to_string(),
                    format!(
                        "promotion would refuse the evidence package: member {member:?} is not a regular *.json or *.md file"
                    ),
                ));
            }
            members += 1;
            bytes += meta.len();
        }
    }
    let shown = root
        .join(dirs.first().map(String::as_str).unwrap_or(""))
        .display()
        .to_string();
    let caps = [
        ("files", members as u64, policy.max_members as u64),
        ("bytes", bytes, policy.max_expanded_bytes),
    ];
    if let Some((what, found, cap)) = caps.into_iter().find(|(_, found, cap)| found > cap) {
        return Err(EvidenceError::invalid(
            shown,
            format!(
                "promotion would refuse the evidence package: {found} {what}, over the {cap} it extracts (record fewer samples: docs/command-targets.md); nothing was packed"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_promotion_would_refuse_is_refused_naming_the_cap() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("run1/results")).unwrap();
        std::fs::write(r.join("run1/results/a.json"), b"{}").unwrap();
        check(r, &["run1".into()]).unwrap();
        std::fs::write(r.join("run1/stdout.txt"), b"x").unwrap();
        let e = check(r, &["run1".into()]).unwrap_err().to_string();
        assert!(
            e.contains("\"run1/stdout.txt\"") && e.contains("*.json or *.md"),
            "{e}"
        );
        std::fs::remove_file(r.join("run1/stdout.txt")).unwrap();
        let big = std::fs::File::create(r.join("run1/results/big.json")).unwrap();
        big.set_len(crate::archive::MAX_EXPANDED_BYTES).unwrap();
        let e = check(r, &["run1".into()]).unwrap_err();
        assert_eq!(crate::exit::Classify::exit(&e), crate::exit::Exit::Invalid);
        assert!(
            e.to_string().contains("over the 67108864 it extracts"),
            "{e}"
        );
    }
}
