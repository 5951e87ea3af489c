//! Promotion's evidence-package check (reference §6.2 item 14): the manifest, result JSON and report
//! exist under the evidence root and belong to the run; the manifest binds the expected clean commit;
//! every referenced artifact and recheck output exists; the recheck list exists in the history tree.

use crate::fsx;
use crate::history::package::RunFiles;
use serde_json::Value;
use std::path::Path;

/// Resolve an evidence reference: relative, no `..`, first component the run id (or a recheck run
/// id of this run), and the file exists.
fn resolve(
    root: &Path,
    what: &str,
    rel: Option<&str>,
    run_id: &str,
) -> Result<std::path::PathBuf, String> {
    let Some(rel) = rel else {
        return Err(format!("summary has no {what} reference"));
    };
    let parts = fsx::safe_relative_parts(rel).ok_or_else(|| {
        format!("{what} {rel:?} must be a safe relative path under the evidence root")
    })?;
    let first = parts[0];
    let recheck_prefix = format!("{run_id}__recheck__");
    if first != run_id && !first.starts_with(&recheck_prefix) {
        return Err(format!(
            "{what} {rel:?}: first path component must be {run_id:?}, found {first:?}"
        ));
    }
    let p =
        fsx::join_safe(root, rel).ok_or_else(|| format!("{what} {rel:?} is not a safe path"))?;
    if !p.is_file() {
        return Err(format!(
            "{what} {rel:?} does not exist under the evidence root {}",
            root.display()
        ));
    }
    Ok(p)
}

fn read_object(p: &Path, what: &str) -> Result<serde_json::Map<String, Value>, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("{what} {}: {e}", p.display()))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{what} {}: expected a JSON object", p.display())),
        Err(e) => Err(format!("{what} {}: invalid JSON: {e}", p.display())),
    }
}

/// Check the evidence package of `run_id` against its summary and comparison.
pub fn check(
    evidence_root: &Path,
    history_root: &Path,
    run_id: &str,
    commit: &str,
    f: &RunFiles,
) -> Result<(), String> {
    let s = &f.summary;
    let manifest = resolve(
        evidence_root,
        "source_manifest_json",
        s.source_manifest_json.as_deref(),
        run_id,
    )?;
    let result = resolve(
        evidence_root,
        "source_result_json",
        s.source_result_json.as_deref(),
        run_id,
    )?;
    resolve(
        evidence_root,
        "source_markdown_report",
        s.source_markdown_report.as_deref(),
        run_id,
    )?;
    let m = read_object(&manifest, "manifest")?;
    let git = m.get("git").cloned().unwrap_or(Value::Null);
    if git.get("commit").and_then(Value::as_str) != Some(commit)
        || git.get("dirty") != Some(&Value::Bool(false))
    {
        return Err(format!(
            "manifest git: expected {{commit: {commit:?}, dirty: false}}, found {git}"
        ));
    }
    if m.get("run_id").and_then(Value::as_str) != Some(run_id) {
        return Err(format!(
            "manifest run_id: expected {run_id:?}, found {:?}",
            m.get("run_id")
        ));
    }
    let r = read_object(&result, "result JSON")?;
    if let Some(found) = r.get("run_id")
        && found.as_str() != Some(run_id)
    {
        return Err(format!(
            "result JSON run_id: expected {run_id:?}, found {found}"
        ));
    }
    for t in &s.targets {
        for (kind, rel) in &t.artifacts {
            resolve(
                evidence_root,
                &format!("target {:?} artifact {kind:?}", t.key),
                Some(rel),
                run_id,
            )?;
        }
    }
    for rc in &f.regression.rechecks {
        resolve(
            evidence_root,
            "recheck_output_json",
            Some(&rc.recheck_output_json),
            run_id,
        )?;
    }
    if let Some(p) = &f.regression.regression_rechecks_path {
        let ok = fsx::join_safe(history_root, p).is_some_and(|p| p.is_file());
        if !ok {
            return Err(format!(
                "regression_rechecks_path {p:?} does not exist in the candidate history"
            ));
        }
    }
    Ok(())
}
