//! The names of the workflow artifacts: `<prefix>-evidence-<suffix>`, `<prefix>-history-<suffix>`
//! and `<prefix>-candidate-history-<suffix>` (`<suffix>` is `<github run id>-<attempt>`). A history
//! the workflows publish carries the attempt of the job that published it,
//! `<prefix>-history-<suffix>-publication-<attempt>`: an artifact name is taken in its run as soon
//! as an upload reserved it, even when that upload failed and nothing was listed, so a re-run must
//! publish under a name of its own (issue 36, N4); it pairs with the evidence of `<suffix>`. The
//! reference fixes the prefix to `tier1`; an adopting repository may choose its own
//! (`artifact-prefix` of the action, `--artifact-prefix` of restore), and every reader accepts any
//! valid prefix in a recorded evidence name.

/// The prefix tier1's own workflows use.
pub(crate) const DEFAULT_PREFIX: &str = "tier1";

/// Words that may not end a prefix: `<prefix>-history-` must never find another prefix's
/// candidate history (`tier1-candidate` would), nor an evidence name parse two ways.
const RESERVED_TAILS: [&str; 3] = ["candidate", "evidence", "history"];

/// A validated artifact prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactPrefix(String);

impl Default for ArtifactPrefix {
    fn default() -> Self {
        ArtifactPrefix(DEFAULT_PREFIX.to_string())
    }
}

impl std::fmt::Display for ArtifactPrefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ArtifactPrefix {
    /// Check `s`: 1-64 characters of `[A-Za-z0-9_.-]`, starting with a letter or digit, not
    /// ending in `-`, and no `-`-separated word that is `candidate`, `evidence` or `history`.
    /// The error says what was expected and what was found.
    pub(crate) fn parse(s: &str) -> Result<ArtifactPrefix, String> {
        let bad = |why: &str| {
            Err(format!(
                "--artifact-prefix: expected 1-64 characters of [A-Za-z0-9_.-] starting with a letter or digit{why}, found {s:?}"
            ))
        };
        let chars_ok = s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        let starts_ok = s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
        if s.is_empty() || s.len() > 64 || !chars_ok || !starts_ok || s.ends_with('-') {
            return bad("");
        }
        if let Some(word) = s.split('-').find(|w| RESERVED_TAILS.contains(w)) {
            return bad(&format!(
                " and without the word {word:?} (it would collide with the evidence, history or candidate-history names)"
            ));
        }
        Ok(ArtifactPrefix(s.to_string()))
    }

    /// The prefix text (the tests compare it).
    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// `<prefix>-evidence-<suffix>`.
    pub(crate) fn evidence(&self, suffix: &str) -> String {
        format!("{}-evidence-{suffix}", self.0)
    }

    /// `<prefix>-history-<suffix>`: the published history the next restore looks for.
    pub(crate) fn history(&self, suffix: &str) -> String {
        format!("{}-history-{suffix}", self.0)
    }

    /// `<prefix>-history-<suffix>-publication-<attempt>`: the history a job of attempt `attempt`
    /// publishes for the night `<suffix>` (every publisher, the workflows' and the local night's,
    /// so a re-run never meets a name an earlier attempt reserved).
    pub(crate) fn publication(&self, suffix: &str, attempt: u32) -> String {
        format!("{}{PUBLICATION_MARKER}{attempt}", self.history(suffix))
    }

    /// `<prefix>-candidate-history-<suffix>`: the producer's candidate.
    pub(crate) fn candidate_history(&self, suffix: &str) -> String {
        format!("{}-candidate-history-{suffix}", self.0)
    }

    /// `<prefix>-shard-<run>-<attempt>-<shard>`: shard `shard`'s evidence package, uploaded by
    /// attempt `attempt` of workflow run `run` (docs/sharding.md).
    pub(crate) fn shard(&self, run: u64, attempt: u32, shard: u32) -> String {
        format!("{}-shard-{run}-{attempt}-{shard}", self.0)
    }

    /// `(run, attempt, shard)` of a shard package name of this prefix, or None.
    pub(crate) fn shard_parts(&self, name: &str) -> Option<(u64, u32, u32)> {
        let rest = name
            .strip_prefix(self.0.as_str())?
            .strip_prefix("-shard-")?;
        let mut it = rest.split('-');
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        let (run, attempt, shard) = (it.next()?, it.next()?, it.next()?);
        if it.next().is_some() || ![run, attempt, shard].iter().all(|s| digits(s)) {
            return None;
        }
        Some((
            run.parse().ok()?,
            attempt.parse().ok()?,
            shard.parse().ok()?,
        ))
    }

    /// The suffix of a history artifact name of this prefix, or None.
    pub(crate) fn history_suffix<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.0.as_str())?
            .strip_prefix("-history-")
            .filter(|rest| !rest.is_empty())
    }
}

/// What separates a history's night suffix from the attempt of the job that published it.
pub(crate) const PUBLICATION_MARKER: &str = "-publication-";

/// The night's suffix of a history suffix: without a trailing `-publication-<attempt>` (the
/// evidence of the night carries the night's suffix alone).
pub(crate) fn night_suffix(history_suffix: &str) -> &str {
    match history_suffix.rsplit_once(PUBLICATION_MARKER) {
        Some((night, attempt))
            if !night.is_empty()
                && !attempt.is_empty()
                && attempt.bytes().all(|b| b.is_ascii_digit()) =>
        {
            night
        }
        _ => history_suffix,
    }
}

/// Whether `s` is an evidence artifact name `<prefix>-evidence-<suffix>` for a valid prefix and a
/// non-empty suffix of `[A-Za-z0-9_.-]`.
pub(crate) fn is_evidence_artifact_name(s: &str) -> bool {
    let Some((prefix, suffix)) = s.split_once("-evidence-") else {
        return false;
    };
    ArtifactPrefix::parse(prefix).is_ok()
        && !suffix.is_empty()
        && suffix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The pattern [`is_evidence_artifact_name`] accepts, for messages.
pub(crate) const EVIDENCE_NAME_PATTERN: &str = "<prefix>-evidence-[A-Za-z0-9_.-]+";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_prefix() {
        let p = ArtifactPrefix::parse("acme-gpu").unwrap();
        assert_eq!(p.evidence("7-1"), "acme-gpu-evidence-7-1");
        assert_eq!(p.history("7-1"), "acme-gpu-history-7-1");
        assert_eq!(p.candidate_history("7-1"), "acme-gpu-candidate-history-7-1");
        assert_eq!(p.history_suffix("acme-gpu-history-7-1"), Some("7-1"));
        assert_eq!(p.history_suffix("acme-gpu-candidate-history-7-1"), None);
        assert_eq!(p.history_suffix("acme-history-7-1"), None);
        let d = ArtifactPrefix::default();
        assert_eq!(d.history_suffix("tier1-candidate-history-7-1"), None);
        assert_eq!(d.history_suffix("tier1-history-"), None);
    }

    #[test]
    fn a_publication_attempt_pairs_with_the_night_s_evidence() {
        let tier1 = ArtifactPrefix::parse("tier1").unwrap();
        let name = tier1.publication("7-1", 2);
        assert_eq!(name, "tier1-history-7-1-publication-2");
        assert_eq!(night_suffix(tier1.history_suffix(&name).unwrap()), "7-1");
        assert_eq!(night_suffix("7-1-publication-2"), "7-1");
        assert_eq!(night_suffix("7-1"), "7-1");
        assert_eq!(night_suffix("7-1-publication-"), "7-1-publication-");
        assert_eq!(night_suffix("7-1-publication-x"), "7-1-publication-x");
        assert_eq!(night_suffix("-publication-3"), "-publication-3");
        let p = ArtifactPrefix::default();
        assert_eq!(
            p.history_suffix("tier1-history-7-1-publication-2")
                .map(night_suffix),
            Some("7-1")
        );
    }

    #[test]
    fn shard_and_plan_names_parse_back_and_never_cross_a_class() {
        let p = ArtifactPrefix::parse("tier1-b200").unwrap();
        assert_eq!(p.shard(7, 2, 3), "tier1-b200-shard-7-2-3");
        assert_eq!(p.shard_parts("tier1-b200-shard-7-2-3"), Some((7, 2, 3)));
        let d = ArtifactPrefix::default();
        assert_eq!(d.shard_parts("tier1-b200-shard-7-2-3"), None);
        assert_eq!(p.shard_parts("tier1-b200-shard-7-2"), None);
        assert_eq!(p.shard_parts("tier1-b200-shard-7-2-3-4"), None);
        assert_eq!(p.shard_parts("tier1-b200-shard-7-x-3"), None);
        // A class's history is never another prefix's.
        assert_eq!(d.history_suffix("tier1-b200-history-7-1"), None);
    }

    #[test]
    fn bad_prefixes_are_refused_with_what_was_found() {
        for bad in [
            "",
            "-x",
            "x-",
            "a/b",
            "a b",
            "tier1-candidate",
            "x-evidence",
            "history",
        ] {
            let e = ArtifactPrefix::parse(bad).unwrap_err();
            assert!(e.contains(&format!("found {bad:?}")), "{e}");
        }
        assert!(ArtifactPrefix::parse(&"a".repeat(65)).is_err());
        assert!(ArtifactPrefix::parse("my_proj.v2").is_ok());
    }

    #[test]
    fn evidence_names_of_any_valid_prefix() {
        assert!(is_evidence_artifact_name("tier1-evidence-1-1"));
        assert!(is_evidence_artifact_name("acme-gpu-evidence-20260801_1"));
        assert!(!is_evidence_artifact_name("tier1-evidence-"));
        assert!(!is_evidence_artifact_name("tier1-history-1-1"));
        assert!(!is_evidence_artifact_name("-evidence-1"));
        assert!(!is_evidence_artifact_name("tier1-evidence-a/b"));
        assert!(!is_evidence_artifact_name("../x-evidence-1"));
    }
}
