//! The promotion request ([`PromoteRequest`], contract §6.1) and the checks of its own values
//! (contract §6.2 items 1 to 6), made before anything is read; the free-text rules are shared with
//! `tier1-nightly`.

use super::error::{PromoteError, invalid};
use crate::digest::Digest;
use crate::gate;
use crate::history_check::is_evidence_artifact_name;
use std::path::PathBuf;

/// The promotion request (contract §6.1 plus tier1's `reviewers` and local workflow-run form).
#[derive(Debug, Clone)]
pub struct PromoteRequest {
    /// The immutable candidate history tree.
    pub history_root: PathBuf,
    /// The downloaded evidence artifact root.
    pub evidence_root: PathBuf,
    /// The run to ratify (the candidate's newest row).
    pub run_id: String,
    /// Who requested the promotion: who started this attempt (`$GITHUB_TRIGGERING_ACTOR`).
    pub requester: String,
    /// Public acceptance note.
    pub note: String,
    /// The Actions run URL of this promotion.
    pub workflow_run: String,
    /// The commit the evidence must come from.
    pub expected_git_commit: String,
    /// `tier1-evidence-<suffix>`.
    pub expected_evidence_artifact: String,
    /// `sha256:<hex>` or bare hex of the evidence artifact.
    pub expected_evidence_digest: String,
    /// Live canonical history (absent only with bootstrap).
    pub canonical_history_root: Option<PathBuf>,
    /// Where the ratified tree goes (must not exist or be empty).
    pub output_history_root: PathBuf,
    /// The suite file (`--suite-config`); None: the suite the candidate history records, chosen
    /// by [`Suite::discover`](crate::suite::Suite::discover) under `repo_root`.
    pub suite_config: Option<PathBuf>,
    /// The checkout whose `configs/benchmark_suites/` discovery looks in.
    pub repo_root: PathBuf,
    /// Allow the audited bootstrap reset.
    pub allow_bootstrap: bool,
    /// Reviewers who approved the protected environment (extension).
    pub reviewers: Vec<String>,
    /// Accept `local://<store>/actions/runs/<n>` as the workflow run (local main job).
    pub allow_local_workflow_run: bool,
    /// The runner class ratified (docs/sharding.md): the run and the live history must be of
    /// it; None: the unnamed class.
    pub runner_class: Option<String>,
    /// The shard packages of a combined run (docs/sharding.md §5), found by artifact name.
    pub shard_archives: Vec<PathBuf>,
}

/// Contract §6.2 item 3: an exact HTTPS Actions run URL; with `allow_local`, also
/// `local://<store-name>/actions/runs/<n>`.
pub(crate) fn check_workflow_run(s: &str, allow_local: bool) -> Result<(), String> {
    let err = |why: &str| {
        Err(format!(
            "--workflow-run {s:?} must be an exact https://<host>/<owner>/<repo>/actions/runs/<id> URL{}: {why}",
            if allow_local {
                " or local://<store>/actions/runs/<id>"
            } else {
                ""
            }
        ))
    };
    let Ok(u) = url::Url::parse(s) else {
        return err("not a URL");
    };
    let min_parts = match u.scheme() {
        "https" => 5,
        "local" if allow_local => 3,
        other => return err(&format!("scheme {other:?} is not allowed")),
    };
    if u.host_str().is_none_or(str::is_empty) {
        return err("no host");
    }
    // The URL parser drops tabs and line breaks, turns `\\` into `/`, lowercases the host and
    // resolves dot segments: the value stored must be the one checked.
    if u.as_str() != s {
        return err(&format!(
            "it is not in canonical form (expected {:?})",
            u.as_str()
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return err("credentials are not allowed");
    }
    if u.query().is_some() || u.fragment().is_some() {
        return err("query or fragment is not allowed");
    }
    let parts: Vec<&str> = u.path_segments().map(|p| p.collect()).unwrap_or_default();
    let n = parts.len();
    let tail_ok = n >= 3
        && parts[n - 3] == "actions"
        && parts[n - 2] == "runs"
        && !parts[n - 1].is_empty()
        && parts[n - 1].bytes().all(|b| b.is_ascii_digit());
    if n < min_parts || !tail_ok || parts.iter().any(|p| p.is_empty()) {
        return err("the path must end in actions/runs/<decimal id>");
    }
    Ok(())
}

/// Longest acceptance note, in bytes (it is copied into the index row and the chain reset).
pub(crate) const MAX_NOTE_BYTES: usize = 4096;
/// Longest requester or reviewer name, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 256;
/// Most reviewers recorded on one acceptance.
pub(crate) const MAX_REVIEWERS: usize = 100;

/// The rules every free text a promotion records follows (the note, the requester, each
/// reviewer), checked by `tier1-promote` and, before anything runs, by `tier1-nightly`: printable
/// (no control, line-break or bidirectional characters) and at most [`MAX_NOTE_BYTES`] for
/// `--note`, [`MAX_NAME_BYTES`] for a name.
pub(crate) fn check_free_text(field: &str, v: &str) -> Result<(), String> {
    let v = v.trim();
    crate::text::check_printable(field, v)?;
    let max = if field == "--note" {
        MAX_NOTE_BYTES
    } else {
        MAX_NAME_BYTES
    };
    if v.len() > max {
        return Err(format!(
            "{field}: expected at most {max} bytes, found {}",
            v.len()
        ));
    }
    Ok(())
}

/// The request's normalised values the later steps use.
pub(super) struct Checked {
    /// The expected commit, lower-cased.
    pub(super) commit: String,
    /// The expected evidence digest.
    pub(super) digest: Digest,
}

/// Contract §6.2 items 1 to 6 (docs/tier1-promote.md "Checks, in order" 1-6): the request's own
/// values, before anything is read.
pub(super) fn check_request(r: &PromoteRequest) -> Result<Checked, PromoteError> {
    if !crate::fsx::is_safe_run_id(&r.run_id) {
        return invalid(format!(
            "--run-id {:?} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
            r.run_id
        ));
    }
    for (name, v) in [
        ("--requester", &r.requester),
        ("--note", &r.note),
        ("--workflow-run", &r.workflow_run),
    ] {
        if v.trim().is_empty() {
            return invalid(format!("{name} must be a non-blank string"));
        }
    }
    // The workflow-run URL is held to its canonical form instead (which has no control characters).
    for (name, v) in [("--requester", &r.requester), ("--note", &r.note)]
        .into_iter()
        .chain(r.reviewers.iter().map(|v| ("--reviewer", v)))
    {
        check_free_text(name, v).map_err(PromoteError::Invalid)?;
    }
    if r.reviewers.len() > MAX_REVIEWERS {
        return invalid(format!(
            "--reviewer: expected at most {MAX_REVIEWERS} reviewers, found {}",
            r.reviewers.len()
        ));
    }
    check_workflow_run(r.workflow_run.trim(), r.allow_local_workflow_run)
        .map_err(PromoteError::Invalid)?;
    let commit = r.expected_git_commit.trim().to_ascii_lowercase();
    if !gate::is_commit_hex(&commit) {
        return invalid(format!(
            "--expected-git-commit must be 40 hex characters, found {:?}",
            r.expected_git_commit
        ));
    }
    if !is_evidence_artifact_name(&r.expected_evidence_artifact) {
        return invalid(format!(
            "--expected-evidence-artifact must match {}, found {:?}",
            crate::artifacts::EVIDENCE_NAME_PATTERN,
            r.expected_evidence_artifact
        ));
    }
    let digest = Digest::parse_lenient(&r.expected_evidence_digest)
        .map_err(|e| PromoteError::Invalid(format!("--expected-evidence-digest: {e}")))?;
    for rev in &r.reviewers {
        if rev.trim().is_empty() {
            return invalid("--reviewer must be a non-blank name");
        }
    }
    Ok(Checked { commit, digest })
}
