//! The anchor's evidence, by metadata only (contract §5.5 steps 5-6): find a retained evidence
//! artifact whose run matches the canonical workflow, branch, commit and repository and whose digest
//! equals the persisted one; then the 60-day renewal rule on its age.

use super::CandidateError;
use super::provenance::artifact_rejection;
use crate::digest::Digest;
use crate::history_check::AnchorRef;
use crate::store::local::strip_ref;
use crate::store::{ArtifactMeta, ArtifactStore};
use chrono::{DateTime, Duration, Utc};

/// Evidence this old or older needs a protected anchor renewal.
pub(crate) const ANCHOR_RENEWAL_DAYS: i64 = 60;
/// A creation time further than this in the future is refused.
pub(crate) const CLOCK_SKEW_MINUTES: i64 = 5;

/// What the evidence check needs to know about the canonical source.
#[derive(Debug, Clone)]
pub(crate) struct Canon<'a> {
    /// `owner/name`.
    pub(crate) repository: &'a str,
    /// Workflow file name (`tier1-nightly.yml`).
    pub(crate) workflow: &'a str,
    /// Branch.
    pub(crate) branch: &'a str,
}

/// Why one evidence artifact does not match, or None when it does.
fn mismatch(
    store: &dyn ArtifactStore,
    a: &ArtifactMeta,
    anchor: &AnchorRef,
    canon: &Canon<'_>,
) -> Result<Option<String>, CandidateError> {
    let run = store
        .get_run(a.workflow_run_id)
        .map_err(CandidateError::from_store)?;
    let want_path = format!(".github/workflows/{}", canon.workflow);
    let path = strip_ref(&run.path);
    let mut why = Vec::new();
    if path != want_path {
        why.push(format!(
            "workflow path expected {want_path:?}, found {path:?}"
        ));
    }
    if run.head_branch != canon.branch {
        why.push(format!(
            "branch expected {:?}, found {:?}",
            canon.branch, run.head_branch
        ));
    }
    if run.head_sha != anchor.git_commit {
        why.push(format!(
            "commit expected {:?}, found {:?}",
            anchor.git_commit, run.head_sha
        ));
    }
    if !run.repository.eq_ignore_ascii_case(canon.repository) {
        why.push(format!(
            "repository expected {:?}, found {:?}",
            canon.repository, run.repository
        ));
    }
    match a.digest.as_deref().map(Digest::parse) {
        Some(Ok(d)) => {
            if let Some(p) = &anchor.evidence_digest
                && *p != d
            {
                why.push(format!("digest expected persisted {p}, found {d}"));
            }
        }
        Some(Err(_)) | None => why.push(format!(
            "digest expected sha256:<64 hex>, found {:?}",
            a.digest
        )),
    }
    Ok((!why.is_empty()).then(|| {
        format!(
            "{} (id {}, run {}): {}",
            a.name,
            a.id,
            run.id,
            why.join("; ")
        )
    }))
}

/// The newest retained evidence artifact of the anchor that matches the canonical contract.
pub(crate) fn find_evidence(
    store: &dyn ArtifactStore,
    anchor: &AnchorRef,
    canon: &Canon<'_>,
) -> Result<ArtifactMeta, CandidateError> {
    let listing = store
        .find_artifacts_by_name(&anchor.evidence_artifact_name, &artifact_rejection)
        .map_err(CandidateError::from_store)?;
    let mut retained: Vec<&ArtifactMeta> = listing.items.iter().filter(|a| !a.expired).collect();
    retained.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    if retained.is_empty() {
        return Err(CandidateError::Unavailable(format!(
            "anchor {}'s evidence artifact {} is not available (expired or deleted)",
            anchor.run_id, anchor.evidence_artifact_name
        )));
    }
    let mut reasons = Vec::new();
    for a in retained {
        match mismatch(store, a, anchor, canon)? {
            None => return Ok(a.clone()),
            Some(why) => reasons.push(why),
        }
    }
    Err(CandidateError::Integrity(format!(
        "anchor {}'s evidence artifact {} does not match the canonical workflow, branch, commit, repository, and persisted digest contract: {}",
        anchor.run_id,
        anchor.evidence_artifact_name,
        reasons.join(" | ")
    )))
}

/// Whether evidence created at `created` needs renewal at `now` (60 days or older). A creation
/// time more than 5 minutes in the future is an integrity error.
pub(crate) fn requires_renewal(
    a: &ArtifactMeta,
    now: DateTime<Utc>,
) -> Result<bool, CandidateError> {
    let created = a.created_at;
    if created > now + Duration::minutes(CLOCK_SKEW_MINUTES) {
        return Err(CandidateError::Integrity(format!(
            "evidence artifact {} (id {}) created_at {} is in the future (now {})",
            a.name,
            a.id,
            created.to_rfc3339(),
            now.to_rfc3339()
        )));
    }
    Ok(now - created >= Duration::days(ANCHOR_RENEWAL_DAYS))
}
