//! `tier1-evidence verify`: after `actions/upload-artifact` uploaded the packed evidence file, find
//! that artifact in this run and require REST `digest` == local file digest == the action's
//! `artifact-digest` output, and `size_in_bytes` == the file's length, and an effective retention
//! past the renewal age (retention.rs); then publish the identity as step outputs.

use super::retention::effective_retention;
use crate::digest::Digest;
use crate::exit::{Classify, Exit};
use crate::gha::append_outputs;
use crate::restore::provenance::artifact_rejection;
use crate::store::{ArtifactMeta, ArtifactStore, StoreError};
use std::path::PathBuf;

/// Which artifact of the run to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactRef {
    /// By name (the highest id where a re-run uploaded the name twice).
    Name(String),
    /// By id (must belong to the run).
    Id(u64),
    /// By id, also requiring the name.
    IdAndName(u64, String),
}

/// What to verify.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The packed evidence file that was uploaded.
    pub file: PathBuf,
    /// This workflow run (`GITHUB_RUN_ID`).
    pub run_id: u64,
    /// The artifact to look up.
    pub artifact: ArtifactRef,
    /// The upload action's `artifact-digest` output (bare hex or `sha256:<hex>`).
    pub expected_digest: String,
    /// `$GITHUB_OUTPUT`, when set.
    pub github_output: Option<PathBuf>,
}

/// The verified identity (printed as JSON, written as step outputs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifyReport {
    /// Always `verified`.
    pub(crate) status: &'static str,
    /// The run checked.
    pub(crate) run_id: u64,
    /// Artifact name.
    pub evidence_artifact_name: String,
    /// Artifact id.
    pub evidence_artifact_id: u64,
    /// `sha256:<hex>`, equal on all three sides.
    pub evidence_artifact_digest: Digest,
    /// Bytes.
    pub(crate) size_in_bytes: u64,
    /// Days from `created_at` to `expires_at` of the REST record (what GitHub keeps).
    pub(crate) retention_days: i64,
    /// Days between the 60-day renewal age and expiry.
    pub(crate) renewal_window_days: i64,
}

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A request value is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The local file could not be read.
    #[error("evidence file {path}: {source}")]
    File {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The artifact lookup failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Two sides disagree.
    #[error("evidence artifact {name} (id {id}): {what}: expected {expected}, found {found}")]
    Mismatch {
        /// Artifact name.
        name: String,
        /// Artifact id.
        id: u64,
        /// What was compared.
        what: String,
        /// The reference value.
        expected: String,
        /// The disagreeing value.
        found: String,
    },
    /// GitHub keeps the evidence too briefly for the anchor renewal rule.
    #[error(
        "evidence artifact {name} (id {id}): effective retention (expires_at - created_at): expected {expected}, found {found}; the repository's or organization's artifact retention caps retention-days without an error, so this evidence would expire before a renewal is even asked for. Raise the limit (Settings → Actions → General → Artifact and log retention) and run again"
    )]
    Retention {
        /// Artifact name.
        name: String,
        /// Artifact id.
        id: u64,
        /// What the rule needs.
        expected: String,
        /// What the record says.
        found: String,
    },
    /// `$GITHUB_OUTPUT` could not be written.
    #[error("step outputs {path}: {source}")]
    Output {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for VerifyError {
    fn exit(&self) -> Exit {
        match self {
            VerifyError::Invalid(_) => Exit::Invalid,
            VerifyError::File { source, .. } | VerifyError::Output { source, .. } => {
                crate::exit::of_io(source)
            }
            VerifyError::Store(e) => e.exit(),
            VerifyError::Mismatch { .. } => Exit::Integrity,
            VerifyError::Retention { .. } => Exit::Invalid,
        }
    }
}

/// Verify the uploaded evidence artifact against the local file and the action's digest output.
pub fn verify(store: &dyn ArtifactStore, req: &VerifyRequest) -> Result<VerifyReport, VerifyError> {
    // 1. The request: a run, and the action's digest output.
    if req.run_id == 0 {
        return Err(VerifyError::Invalid("run id must be > 0".into()));
    }
    let action_digest = Digest::parse_lenient(&req.expected_digest).map_err(|e| {
        VerifyError::Invalid(format!(
            "--expected-digest (upload-artifact artifact-digest): {e}"
        ))
    })?;
    // 2. The local file's digest and length, and the artifact as the store records it.
    let file_err = |source| VerifyError::File {
        path: req.file.display().to_string(),
        source,
    };
    let local = Digest::of_file(&req.file).map_err(file_err)?;
    let local_len = std::fs::metadata(&req.file).map_err(file_err)?.len();
    let artifact = lookup(store, req)?;
    // 3. The three sides agree, and the store keeps the evidence long enough.
    let rest = check_sides(&artifact, &local, local_len, &action_digest)?;
    let retention =
        effective_retention(&artifact).map_err(|(expected, found)| VerifyError::Retention {
            name: artifact.name.clone(),
            id: artifact.id,
            expected,
            found,
        })?;
    if let Some(w) = retention.warning(&artifact) {
        tracing::warn!("{w}");
        crate::gha::warning(&w);
    }
    // 4. The identity, as the report and the step's outputs.
    let report = VerifyReport {
        status: "verified",
        run_id: req.run_id,
        evidence_artifact_name: artifact.name.clone(),
        evidence_artifact_id: artifact.id,
        evidence_artifact_digest: rest,
        size_in_bytes: artifact.size_in_bytes,
        retention_days: retention.days,
        renewal_window_days: retention.renewal_window_days,
    };
    if let Some(path) = &req.github_output {
        write_outputs(path, &report)?;
    }
    Ok(report)
}

/// The decision of the check: the action's digest output is the local file's, the artifact is
/// not expired, its REST digest is recorded, valid and the local file's, and its size is the
/// file's length. Returns the REST digest.
fn check_sides(
    artifact: &ArtifactMeta,
    local: &Digest,
    local_len: u64,
    action_digest: &Digest,
) -> Result<Digest, VerifyError> {
    let mismatch = |what: &str, expected: String, found: String| VerifyError::Mismatch {
        name: artifact.name.clone(),
        id: artifact.id,
        what: what.into(),
        expected,
        found,
    };
    if local != action_digest {
        return Err(mismatch(
            "upload-artifact artifact-digest output differs from the local file digest",
            local.to_string(),
            action_digest.to_string(),
        ));
    }
    if artifact.expired {
        return Err(mismatch("expired", "false".into(), "true".into()));
    }
    let rest = match artifact.digest.as_deref() {
        None => {
            return Err(mismatch(
                "REST digest",
                local.to_string(),
                "null (no digest recorded)".into(),
            ));
        }
        Some(d) => {
            Digest::parse(d).map_err(|e| mismatch("REST digest", local.to_string(), e.found))?
        }
    };
    if rest != *local {
        return Err(mismatch(
            "REST digest differs from the local file digest",
            local.to_string(),
            rest.to_string(),
        ));
    }
    if artifact.size_in_bytes != local_len {
        return Err(mismatch(
            "size_in_bytes differs from the local file length",
            local_len.to_string(),
            artifact.size_in_bytes.to_string(),
        ));
    }
    Ok(rest)
}

/// The verified identity appended to `$GITHUB_OUTPUT`.
fn write_outputs(path: &std::path::Path, report: &VerifyReport) -> Result<(), VerifyError> {
    append_outputs(
        path,
        &[
            (
                "evidence_artifact_name",
                report.evidence_artifact_name.clone(),
            ),
            (
                "evidence_artifact_id",
                report.evidence_artifact_id.to_string(),
            ),
            (
                "evidence_artifact_digest",
                report.evidence_artifact_digest.to_string(),
            ),
        ],
    )
    .map_err(|source| VerifyError::Output {
        path: path.display().to_string(),
        source,
    })
}

/// The artifact the request names, uploaded by this run.
fn lookup(store: &dyn ArtifactStore, req: &VerifyRequest) -> Result<ArtifactMeta, VerifyError> {
    let by_id = |id: u64| -> Result<ArtifactMeta, VerifyError> {
        let listing = store.list_run_artifacts(req.run_id, &artifact_rejection)?;
        let truncated = listing.truncated;
        if let Some(s) = listing.skipped.iter().find(|s| s.id == id) {
            return Err(StoreError::Corrupt {
                path: format!("artifact {} (id {id}) of run {}", s.name, req.run_id),
                message: s.reason.clone(),
            }
            .into());
        }
        match listing.items.into_iter().find(|a| a.id == id) {
            Some(a) => Ok(a),
            None if truncated => Err(StoreError::Corrupt {
                path: format!("artifacts of run {}", req.run_id),
                message: format!("listing is incomplete and does not contain artifact id {id}"),
            }
            .into()),
            None => Err(StoreError::NotFound {
                what: format!(
                    "artifact id {id} among the latest artifacts of run {}",
                    req.run_id
                ),
            }
            .into()),
        }
    };
    let found = match &req.artifact {
        ArtifactRef::Name(name) => {
            store.find_run_artifact(req.run_id, name, &artifact_rejection)?
        }
        ArtifactRef::Id(id) => by_id(*id)?,
        ArtifactRef::IdAndName(id, name) => {
            let a = by_id(*id)?;
            if &a.name != name {
                return Err(VerifyError::Mismatch {
                    name: a.name.clone(),
                    id: a.id,
                    what: "artifact name".into(),
                    expected: name.clone(),
                    found: a.name,
                });
            }
            a
        }
    };
    if found.workflow_run_id != req.run_id {
        return Err(VerifyError::Mismatch {
            name: found.name.clone(),
            id: found.id,
            what: "uploading run".into(),
            expected: req.run_id.to_string(),
            found: found.workflow_run_id.to_string(),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(digest: Option<&str>, size: u64, expired: bool) -> ArtifactMeta {
        serde_json::from_value(serde_json::json!({
            "id": 9, "name": "tier1-evidence-7-1", "size_in_bytes": size, "expired": expired,
            "created_at": "2026-01-01T00:00:00Z", "workflow_run_id": 7, "digest": digest,
        }))
        .unwrap()
    }

    #[test]
    fn check_sides_rows() {
        let a = format!("sha256:{}", "a".repeat(64));
        let b = format!("sha256:{}", "b".repeat(64));
        let (da, db) = (Digest::parse(&a).unwrap(), Digest::parse(&b).unwrap());
        /// What was compared, expected and found.
        type Mismatch<'a> = (&'a str, String, String);
        let rows: [(ArtifactMeta, &Digest, Option<Mismatch>); 7] = [
            (artifact(Some(&a), 10, false), &da, None),
            (
                artifact(Some(&a), 10, false),
                &db,
                Some((
                    "upload-artifact artifact-digest output differs from the local file digest",
                    a.clone(),
                    b.clone(),
                )),
            ),
            (
                artifact(Some(&a), 10, true),
                &da,
                Some(("expired", "false".into(), "true".into())),
            ),
            (
                artifact(None, 10, false),
                &da,
                Some(("REST digest", a.clone(), "null (no digest recorded)".into())),
            ),
            (
                artifact(Some("sha256:xyz"), 10, false),
                &da,
                Some(("REST digest", a.clone(), "sha256:xyz".into())),
            ),
            (
                artifact(Some(&b), 10, false),
                &da,
                Some((
                    "REST digest differs from the local file digest",
                    a.clone(),
                    b.clone(),
                )),
            ),
            (
                artifact(Some(&a), 11, false),
                &da,
                Some((
                    "size_in_bytes differs from the local file length",
                    "10".into(),
                    "11".into(),
                )),
            ),
        ];
        for (art, action, want) in rows {
            match (check_sides(&art, &da, 10, action), want) {
                (Ok(rest), None) => assert_eq!(rest, da),
                (
                    Err(VerifyError::Mismatch {
                        what,
                        expected,
                        found,
                        ..
                    }),
                    Some((w, e, f)),
                ) => assert_eq!((what.as_str(), expected, found), (w, e, f)),
                (other, want) => panic!("{other:?}, expected {want:?}"),
            }
        }
    }
}
