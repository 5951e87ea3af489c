//! Restore of canonical history (contract §5): discovery, per-candidate download with digest check,
//! safe extraction, validation and sanitizing, evidence provenance by metadata, renewal and expiry,
//! the skip-versus-refuse policy (§5.6), bootstrap, and the atomic install into an empty destination.
//! Restoring from a `tier1-export` archive instead, offline, is [`export`].

pub mod discovery;
pub mod evidence;
pub mod export;

use crate::archive::{self, ArchiveError, ExtractPolicy};
use crate::digest::{Digest, Hasher};
use crate::exit::{Classify, Exit};
use crate::fsx;
use crate::history::error::HistoryErrorKind;
use crate::history_check;
use crate::store::{ArtifactMeta, ArtifactStore, StoreError};
use discovery::Candidate;
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// At most this many runs (of every status) are scanned.
pub const MAX_RUNS_TO_SCAN: usize = 100;
/// At most this many history candidates are tried.
pub const MAX_ARTIFACT_CANDIDATES: usize = 20;
/// Default workflow file.
pub const DEFAULT_WORKFLOW: &str = "tier1-nightly.yml";
/// Conclusions that prove a run did not succeed (a structurally bad package from one is skipped).
pub const NON_SUCCESS_CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "skipped",
    "stale",
    "startup_failure",
    "timed_out",
];
/// The reference message when nothing can be restored and bootstrap is not allowed; the store's
/// [`ArtifactStore::bootstrap_hint`] follows it.
pub const NO_CANDIDATE_MESSAGE: &str =
    "No prior completed Tier-1 run has a matching unexpired history and evidence artifact pair.";
/// The reference renewal message.
pub const RENEWAL_MESSAGE: &str = "Tier-1 baseline evidence is at least 60 days old. Run a protected manual anchor renewal before the 90-day evidence artifact expires.";

/// What to restore and where.
#[derive(Debug, Clone)]
pub struct RestoreOptions {
    /// `owner/name` the history must come from.
    pub repository: String,
    /// Workflow file name.
    pub workflow: String,
    /// Branch the history must come from.
    pub branch: String,
    /// The current run (never a candidate).
    pub current_run_id: Option<u64>,
    /// Destination directory: absent or empty.
    pub destination: PathBuf,
    /// Allow the bootstrap outcome when no usable history exists.
    pub allow_bootstrap: bool,
    /// Allow evidence 60 days old or older (protected renewal).
    pub allow_anchor_renewal: bool,
    /// The artifact prefix: candidates are `<prefix>-history-*` with `<prefix>-evidence-*`.
    pub artifact_prefix: crate::artifacts::ArtifactPrefix,
}

/// A candidate that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// History artifact id.
    pub artifact_id: u64,
    /// History artifact name.
    pub artifact_name: String,
    /// Its run.
    pub workflow_run_id: u64,
    /// Its run's conclusion.
    pub workflow_run_conclusion: Option<String>,
    /// Why it was skipped.
    pub reason: String,
}

/// The JSON status printed on success: the reference keys plus additions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreOutcome {
    /// `restored` or `bootstrap`.
    pub status: &'static str,
    /// True when a history tree was installed.
    pub history_restored: bool,
    /// The restored history artifact's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<u64>,
    /// The restored history artifact's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_name: Option<String>,
    /// The anchor's evidence artifact id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence_artifact_id: Option<u64>,
    /// The anchor's evidence artifact name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence_artifact_name: Option<String>,
    /// True when the evidence is 60 days old or more (allowed only with renewal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_renewal_required: Option<bool>,
    /// Skipped candidates.
    pub rejections: Vec<Rejection>,
    /// Addition: the run that uploaded the restored history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_run_id: Option<u64>,
    /// Addition: the latest eligible anchor's run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor_run_id: Option<String>,
    /// Addition: whether discovery hit a cap.
    pub discovery_truncated: bool,
}

/// A refusal or failure of restore. Nothing is written to the destination.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The destination is unusable (holds data, is a symbolic link or not a directory).
    #[error("--destination: {0}")]
    Destination(#[from] crate::fsx::OutputRootError),
    /// The options are unusable.
    #[error("{0}")]
    Invalid(String),
    /// Discovery was cut short: refusing to reset canonical history.
    #[error("Refusing to reset canonical history: discovery was truncated: {message}")]
    DiscoveryTruncated {
        /// Details.
        message: String,
    },
    /// A candidate failed integrity validation (fatal, no fallback, no bootstrap).
    #[error(
        "Tier-1 history artifact {artifact} (id {artifact_id}, run {run_id}) failed integrity validation: {message}"
    )]
    Integrity {
        /// History artifact name.
        artifact: String,
        /// Its id.
        artifact_id: u64,
        /// Its run.
        run_id: u64,
        /// What failed, naming the member, field or artifact.
        message: String,
    },
    /// A package from a successful or unverified run failed structural validation.
    #[error(
        "Tier-1 history artifact {artifact} (id {artifact_id}, run {run_id}, conclusion {conclusion}) from a successful or unverified workflow run failed structural validation: {message}"
    )]
    Structural {
        /// History artifact name.
        artifact: String,
        /// Its id.
        artifact_id: u64,
        /// Its run.
        run_id: u64,
        /// The run's conclusion (`unknown` when absent).
        conclusion: String,
        /// What failed.
        message: String,
    },
    /// No usable history or evidence and bootstrap is not allowed (or not possible).
    #[error("{message}")]
    Unavailable {
        /// Details.
        message: String,
    },
    /// The anchor evidence needs a protected renewal.
    #[error("{RENEWAL_MESSAGE} ({message})")]
    RenewalRequired {
        /// Which artifact and how old.
        message: String,
    },
    /// The store failed.
    #[error("artifact store: {0}")]
    Store(#[from] StoreError),
    /// Local I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Writing the restored tree failed locally (a full disk): the package is not at fault.
    #[error("restoring into the destination: {0}")]
    Local(crate::history::error::HistoryError),
}

impl Classify for RestoreError {
    fn exit(&self) -> Exit {
        match self {
            RestoreError::Destination(e) => e.exit(),
            RestoreError::Invalid(_) | RestoreError::Structural { .. } => Exit::Invalid,
            RestoreError::DiscoveryTruncated { .. } | RestoreError::Integrity { .. } => {
                Exit::Integrity
            }
            RestoreError::Unavailable { .. } => Exit::Unavailable,
            RestoreError::RenewalRequired { .. } => Exit::RenewalRequired,
            RestoreError::Store(e) => e.exit(),
            RestoreError::Io { source, .. } => crate::exit::of_io(source),
            RestoreError::Local(e) => e.exit(),
        }
    }
}

/// Why one candidate could not be restored (the §5.6 error classes).
#[derive(Debug)]
pub enum CandidateError {
    /// Baseline evidence unavailable (expired, deleted, never uploaded).
    Unavailable(String),
    /// Structurally bad package.
    Structural(String),
    /// Tampering or unsafe content.
    Integrity(String),
    /// Evidence needs renewal and renewal is not allowed.
    Renewal(String),
    /// Not about the candidate: the store or the disk failed.
    Fatal(RestoreError),
}

impl CandidateError {
    /// Classify a store failure met while working on a candidate.
    pub fn from_store(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. } | StoreError::Expired { .. } => {
                CandidateError::Unavailable(e.to_string())
            }
            StoreError::Integrity { .. } | StoreError::Corrupt { .. } => {
                CandidateError::Integrity(e.to_string())
            }
            other => CandidateError::Fatal(RestoreError::Store(other)),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> RestoreError + '_ {
    move |source| RestoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A sink that hashes what passes into a file (restore computes its own digest).
struct HashingFile<'a> {
    file: &'a mut std::fs::File,
    hasher: Hasher,
}

impl Write for HashingFile<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// What a successful candidate yields.
struct Restored {
    evidence: ArtifactMeta,
    anchor_run_id: String,
    renewal_required: bool,
}

fn try_candidate(
    store: &dyn ArtifactStore,
    cand: &Candidate,
    opts: &RestoreOptions,
    tree: &Path,
) -> Result<Restored, CandidateError> {
    let h = &cand.history;
    let expected = match h.digest.as_deref().map(Digest::parse) {
        Some(Ok(d)) => d,
        _ => {
            return Err(CandidateError::Integrity(format!(
                "no valid SHA-256 digest metadata (expected sha256:<64 hex>, found {:?})",
                h.digest
            )));
        }
    };
    let parent = tree.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(&fsx::stale::temp_prefix("download"))
        .tempfile_in(parent)
        .map_err(|e| CandidateError::Fatal(io_err(parent)(e)))?;
    let download_path = tmp.path().to_path_buf();
    let mut sink = HashingFile {
        file: tmp.as_file_mut(),
        hasher: Hasher::new(),
    };
    store
        .download(h, &mut sink, archive::MAX_ARCHIVE_BYTES)
        .map_err(|e| match e {
            // The download's destination failed (a full disk): the disk's fault, not the artifact's.
            StoreError::Sink { source, .. } => CandidateError::Fatal(RestoreError::Io {
                path: download_path.display().to_string(),
                source,
            }),
            other => CandidateError::from_store(other),
        })?;
    sink.flush()
        .map_err(|e| CandidateError::Fatal(io_err(parent)(e)))?;
    let found = sink.hasher.finish();
    if found != expected {
        return Err(CandidateError::Integrity(format!(
            "Tier-1 history artifact digest mismatch: expected {expected}, found {found}"
        )));
    }
    archive::extract_safe(tmp.path(), tree, &ExtractPolicy::history()).map_err(|e| match e {
        // A failed write (a full disk) is the destination's failure, never tampering.
        ArchiveError::Io { path, source } => {
            CandidateError::Fatal(RestoreError::Io { path, source })
        }
        ArchiveError::DestinationNotEmpty { .. } => CandidateError::Fatal(RestoreError::Io {
            path: tree.display().to_string(),
            source: io::Error::new(io::ErrorKind::AlreadyExists, e.to_string()),
        }),
        other => CandidateError::Integrity(other.to_string()),
    })?;
    drop(tmp);
    let validated = history_check::sanitize_restored(tree).map_err(|e| match e.kind {
        HistoryErrorKind::Structural => CandidateError::Structural(e.to_string()),
        HistoryErrorKind::Integrity => CandidateError::Integrity(e.to_string()),
        HistoryErrorKind::Io | HistoryErrorKind::DiskFull => {
            CandidateError::Fatal(RestoreError::Local(e))
        }
    })?;
    let anchor = validated.latest_anchor.ok_or_else(|| {
        CandidateError::Structural(
            "index.json: no eligible anchor (baseline_eligible: true)".into(),
        )
    })?;
    let canon = evidence::Canon {
        repository: &opts.repository,
        workflow: &opts.workflow,
        branch: &opts.branch,
    };
    let ev = evidence::find_evidence(store, &anchor, &canon)?;
    let renewal_required = evidence::requires_renewal(&ev, store.now())?;
    if renewal_required && !opts.allow_anchor_renewal {
        return Err(CandidateError::Renewal(format!(
            "evidence artifact {} (id {}) of anchor {} was created {}, now {}",
            ev.name,
            ev.id,
            anchor.run_id,
            ev.created_at.to_rfc3339(),
            store.now().to_rfc3339()
        )));
    }
    Ok(Restored {
        evidence: ev,
        anchor_run_id: anchor.run_id,
        renewal_required,
    })
}

#[derive(PartialEq, Eq)]
enum RunVerdict {
    Success,
    NonSuccess,
    Unknown,
}

fn verdict(conclusion: Option<&str>) -> RunVerdict {
    match conclusion {
        Some("success") => RunVerdict::Success,
        Some(c) if NON_SUCCESS_CONCLUSIONS.contains(&c) => RunVerdict::NonSuccess,
        _ => RunVerdict::Unknown,
    }
}

fn bootstrap(rejections: Vec<Rejection>, truncated: bool) -> RestoreOutcome {
    RestoreOutcome {
        status: "bootstrap",
        history_restored: false,
        artifact_id: None,
        artifact_name: None,
        evidence_artifact_id: None,
        evidence_artifact_name: None,
        anchor_renewal_required: None,
        rejections,
        workflow_run_id: None,
        anchor_run_id: None,
        discovery_truncated: truncated,
    }
}

fn reset_dir(dir: &Path) -> Result<(), RestoreError> {
    std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
    std::fs::create_dir(dir).map_err(io_err(dir))
}

/// Restore the newest valid canonical history from `store` into `opts.destination`, or report
/// bootstrap. On any error the destination is left absent or empty.
pub fn restore(
    store: &dyn ArtifactStore,
    opts: &RestoreOptions,
) -> Result<RestoreOutcome, RestoreError> {
    for (name, v) in [
        ("repository", &opts.repository),
        ("workflow", &opts.workflow),
        ("branch", &opts.branch),
    ] {
        if v.trim().is_empty() {
            return Err(RestoreError::Invalid(format!(
                "--{name}: expected a non-empty value, found {v:?}"
            )));
        }
    }
    let dest = &opts.destination;
    let own = store.own_paths();
    let inputs: Vec<(&str, &Path)> = own.iter().map(|p| ("local store", p.as_path())).collect();
    fsx::check_output_root(dest, &inputs)?;
    let found = discovery::discover(
        store,
        &opts.workflow,
        &opts.branch,
        opts.current_run_id,
        &opts.artifact_prefix,
    )?;
    tracing::info!(
        candidates = found.candidates.len(),
        runs = found.runs_scanned,
        truncated = found.truncated,
        "discovery"
    );
    if found.candidates.is_empty() {
        if !opts.allow_bootstrap {
            return Err(RestoreError::Unavailable {
                message: format!("{NO_CANDIDATE_MESSAGE} {}", store.bootstrap_hint()),
            });
        }
        return Ok(bootstrap(found.rejections, found.truncated));
    }
    let staged = fsx::StagedDir::new(dest).map_err(io_err(dest))?;
    let mut rejections = found.rejections.clone();
    for cand in &found.candidates {
        let h = &cand.history;
        let conclusion = cand.run.conclusion.clone();
        tracing::info!(artifact = %h.name, id = h.id, run = cand.run.id, "trying candidate");
        let err = match try_candidate(store, cand, opts, staged.path()) {
            Ok(r) => {
                staged.commit().map_err(io_err(dest))?;
                return Ok(RestoreOutcome {
                    status: "restored",
                    history_restored: true,
                    artifact_id: Some(h.id),
                    artifact_name: Some(h.name.clone()),
                    evidence_artifact_id: Some(r.evidence.id),
                    evidence_artifact_name: Some(r.evidence.name.clone()),
                    anchor_renewal_required: Some(r.renewal_required),
                    rejections,
                    workflow_run_id: Some(cand.run.id),
                    anchor_run_id: Some(r.anchor_run_id),
                    discovery_truncated: found.truncated,
                });
            }
            Err(e) => e,
        };
        reset_dir(staged.path())?;
        let rejection = |reason: String| Rejection {
            artifact_id: h.id,
            artifact_name: h.name.clone(),
            workflow_run_id: cand.run.id,
            workflow_run_conclusion: conclusion.clone(),
            reason: crate::text::redact_urls(&reason).into_owned(),
        };
        let v = verdict(conclusion.as_deref());
        match err {
            CandidateError::Fatal(e) => return Err(e),
            CandidateError::Integrity(message) => {
                return Err(RestoreError::Integrity {
                    artifact: h.name.clone(),
                    artifact_id: h.id,
                    run_id: cand.run.id,
                    message,
                });
            }
            CandidateError::Renewal(message) => {
                return Err(RestoreError::RenewalRequired { message });
            }
            CandidateError::Structural(message) => {
                if v != RunVerdict::NonSuccess {
                    return Err(RestoreError::Structural {
                        artifact: h.name.clone(),
                        artifact_id: h.id,
                        run_id: cand.run.id,
                        conclusion: conclusion.unwrap_or_else(|| "unknown".into()),
                        message,
                    });
                }
                tracing::warn!(artifact = %h.name, %message, "skipping structurally bad package from a non-success run");
                rejections.push(rejection(message));
            }
            CandidateError::Unavailable(message) => match v {
                RunVerdict::NonSuccess => {
                    tracing::warn!(artifact = %h.name, %message, "skipping: evidence unavailable, run did not succeed");
                    rejections.push(rejection(message));
                }
                RunVerdict::Success if opts.allow_bootstrap && !found.truncated => {
                    rejections.push(rejection(message));
                    return Ok(bootstrap(rejections, false));
                }
                RunVerdict::Success if opts.allow_bootstrap => {
                    return Err(RestoreError::DiscoveryTruncated {
                        message: format!("baseline evidence unavailable for {}: {message}", h.name),
                    });
                }
                _ => {
                    return Err(RestoreError::Unavailable {
                        message: format!(
                            "Tier-1 baseline evidence is unavailable for history artifact {} (id {}, run {}, conclusion {}): {message}. An operator must use the audited bootstrap recovery path.",
                            h.name,
                            h.id,
                            cand.run.id,
                            conclusion.as_deref().unwrap_or("unknown")
                        ),
                    });
                }
            },
        }
    }
    if found.truncated {
        return Err(RestoreError::DiscoveryTruncated {
            message: format!(
                "no candidate of the first {} could be restored and more may exist",
                found.candidates.len()
            ),
        });
    }
    if !opts.allow_bootstrap {
        let reasons: Vec<String> = rejections
            .iter()
            .map(|r| {
                format!(
                    "{} (run {}): {}",
                    r.artifact_name, r.workflow_run_id, r.reason
                )
            })
            .collect();
        return Err(RestoreError::Unavailable {
            message: format!(
                "{NO_CANDIDATE_MESSAGE} {} Rejected candidates: {}",
                store.bootstrap_hint(),
                reasons.join("; ")
            ),
        });
    }
    Ok(bootstrap(rejections, false))
}
