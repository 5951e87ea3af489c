//! Bind a run's evidence identity to the checkout (contract §4.2 step 11): the summary, manifest
//! and result JSON must name this run and this clean commit, and their references must be relative
//! paths that start with the run id and stay inside the evidence root. Everything is checked before
//! anything is written; files are rewritten atomically only where a value changes.

use super::{EvidenceError, manifest_rel};
use crate::fsx;
use crate::gate::is_commit_hex;
use crate::history::model::{SUMMARY_FILE, Summary};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What to bind.
#[derive(Debug, Clone)]
pub struct BindRequest<'a> {
    /// The run id.
    pub run_id: &'a str,
    /// The evidence root (`artifacts/runs`).
    pub evidence_root: &'a Path,
    /// The candidate history root holding `<run_id>/summary.json`.
    pub history_root: &'a Path,
    /// The checkout's commit (`GITHUB_SHA`), 40 hex.
    pub commit: &'a str,
    /// Whether the checkout is dirty (must be false).
    pub dirty: bool,
    /// The dirty files (`git status` lines), named in the refusal.
    pub dirty_files: &'a [String],
    /// When given, the summary's `evidence_artifact_name` must equal it.
    pub evidence_artifact_name: Option<&'a str>,
}

/// The bound identity, printed as JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// The run id.
    pub(crate) run_id: String,
    /// The commit bound.
    pub(crate) commit: String,
    /// Always false.
    pub(crate) dirty: bool,
    /// Evidence-relative files whose identity was checked.
    pub(crate) files: Vec<String>,
    /// Files rewritten because a value changed.
    pub(crate) rewritten: Vec<String>,
}

/// One evidence file to bind: where it is, its relative path, its bound value and whether that
/// differs from what is on disk.
struct Pending {
    path: PathBuf,
    rel: String,
    value: Value,
    changed: bool,
}

/// Check and bind; see the module docs: the checkout and run id checked, the summary read and
/// checked, its manifest and result resolved and checked, then the three bound to this commit and
/// each written where a value changed.
pub fn bind(req: &BindRequest<'_>) -> Result<Bound, EvidenceError> {
    let commit = checked_checkout(req)?;
    let summary_rel = format!("{}/{SUMMARY_FILE}", req.run_id);
    let summary_path = req.history_root.join(&summary_rel);
    let sp = summary_path.display().to_string();
    let old_summary: Value =
        crate::json::read(&summary_path).map_err(|e| EvidenceError::invalid(&sp, e.to_string()))?;
    let mut summary: Summary = serde_json::from_value(old_summary.clone())
        .map_err(|e| EvidenceError::invalid(&sp, format!("invalid content: {e}")))?;
    check_summary(req, &summary, &commit, &sp)?;
    let manifest_ref = summary
        .source_manifest_json
        .clone()
        .unwrap_or_else(|| manifest_rel(req.run_id));
    let result_ref = summary.source_result_json.clone().ok_or_else(|| {
        EvidenceError::invalid(&sp, "source_result_json: expected a path, found null")
    })?;
    let manifest = load_ref(req, &manifest_ref, "source_manifest_json")?;
    let result = load_ref(req, &result_ref, "source_result_json")?;
    check_manifest_git(&manifest, &commit)?;
    let mut pending = vec![manifest, result];
    summary.source_git_commit = Some(commit.clone());
    summary.source_manifest_git_commit = Some(commit.clone());
    summary.source_git_dirty = Some(false);
    let new_summary =
        serde_json::to_value(&summary).map_err(|e| EvidenceError::invalid(&sp, e.to_string()))?;
    pending.push(Pending {
        changed: new_summary != old_summary,
        path: summary_path,
        rel: summary_rel,
        value: new_summary,
    });
    let rewritten = write_changed(&pending)?;
    Ok(Bound {
        run_id: req.run_id.to_string(),
        commit,
        dirty: false,
        files: pending.iter().take(2).map(|p| p.rel.clone()).collect(),
        rewritten,
    })
}

/// The checkout's commit (trimmed, lower case), once it is 40 hex characters of a clean tree and
/// the run id is safe.
fn checked_checkout(req: &BindRequest<'_>) -> Result<String, EvidenceError> {
    let commit = req.commit.trim().to_ascii_lowercase();
    if !is_commit_hex(&commit) {
        return Err(EvidenceError::Checkout(format!(
            "expected commit: 40 lower-hex characters, found {:?}",
            req.commit
        )));
    }
    if req.dirty {
        return Err(EvidenceError::Checkout(format!(
            "the checkout of {commit} has uncommitted changes ({}): evidence binds only to a clean tree; commit them, or list files your targets create in .gitignore",
            if req.dirty_files.is_empty() {
                "unknown files".to_string()
            } else {
                req.dirty_files.join(", ")
            }
        )));
    }
    if !fsx::is_safe_run_id(req.run_id) {
        return Err(EvidenceError::invalid(
            "--run-id",
            format!("{:?} is not a safe run id", req.run_id),
        ));
    }
    Ok(commit)
}

/// Refuses a summary (at `sp`) of another run, another commit, a dirty tree, or another evidence
/// artifact than the one asked for.
fn check_summary(
    req: &BindRequest<'_>,
    summary: &Summary,
    commit: &str,
    sp: &str,
) -> Result<(), EvidenceError> {
    if summary.run_id != req.run_id {
        return Err(EvidenceError::invalid(
            sp,
            format!(
                "run_id: expected {:?}, found {:?}",
                req.run_id, summary.run_id
            ),
        ));
    }
    if let Some(c) = &summary.source_git_commit
        && c.to_ascii_lowercase() != commit
    {
        return Err(EvidenceError::invalid(
            sp,
            format!("source_git_commit: expected {commit}, found {c}"),
        ));
    }
    if summary.source_git_dirty == Some(true) {
        return Err(EvidenceError::invalid(
            sp,
            "source_git_dirty: expected false, found true",
        ));
    }
    let found = summary.evidence_artifact_name.as_deref();
    if let Some(want) = req.evidence_artifact_name
        && found != Some(want)
    {
        return Err(EvidenceError::invalid(
            sp,
            format!("evidence_artifact_name: expected {want:?}, found {found:?}"),
        ));
    }
    Ok(())
}

/// Writes each pending file whose value changed; their relative paths, in order.
fn write_changed(pending: &[Pending]) -> Result<Vec<String>, EvidenceError> {
    let mut rewritten = Vec::new();
    for p in pending {
        if p.changed {
            crate::json::write(&p.path, &p.value).map_err(EvidenceError::json_write)?;
            rewritten.push(p.rel.clone());
        }
    }
    Ok(rewritten)
}

/// Resolve an evidence reference: relative, first part the run id, inside the evidence root, existing,
/// a JSON object whose `run_id` is null or this run (then set to it).
fn load_ref(req: &BindRequest<'_>, rel: &str, field: &str) -> Result<Pending, EvidenceError> {
    let parts = fsx::safe_relative_parts(rel).ok_or_else(|| {
        EvidenceError::invalid(
            field,
            format!("{rel:?} must be a relative path inside the evidence root"),
        )
    })?;
    if parts.first() != Some(&req.run_id) {
        return Err(EvidenceError::invalid(
            field,
            format!("{rel:?} must start with the run id {:?}", req.run_id),
        ));
    }
    let path = req.evidence_root.join(rel);
    let mut value: Value = crate::json::read(&path)
        .map_err(|e| EvidenceError::invalid(path.display().to_string(), e.to_string()))?;
    let Value::Object(map) = &mut value else {
        return Err(EvidenceError::invalid(rel, "expected a JSON object"));
    };
    let changed = match map.get("run_id") {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) if s == req.run_id => false,
        Some(other) => {
            return Err(EvidenceError::invalid(
                rel,
                format!("run_id: expected {:?} or null, found {other}", req.run_id),
            ));
        }
    };
    map.insert("run_id".into(), Value::String(req.run_id.to_string()));
    Ok(Pending {
        path,
        rel: rel.to_string(),
        value,
        changed,
    })
}

fn check_manifest_git(m: &Pending, commit: &str) -> Result<(), EvidenceError> {
    let git = m.value.get("git");
    let found_commit = git
        .and_then(|g| g.get("commit"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let found_dirty = git.and_then(|g| g.get("dirty")).and_then(Value::as_bool);
    if found_commit.as_deref() != Some(commit) || found_dirty != Some(false) {
        return Err(EvidenceError::invalid(
            &m.rel,
            format!(
                "git: expected {{commit: {commit}, dirty: false}}, found {{commit: {found_commit:?}, dirty: {found_dirty:?}}}"
            ),
        ));
    }
    Ok(())
}
