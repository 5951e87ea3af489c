//! Restore's sanitizing of a freshly extracted history tree (contract §5.5 step 4): legacy absolute
//! paths relocated under the run, portable source and artifact references, default evidence name,
//! memory backfill, generic warning text (no runner paths leak) and a re-rendered Markdown summary.

use crate::aggregate;
use crate::artifacts::is_evidence_artifact_name;
use crate::fsx;
use crate::history::chain::ChainState;
use crate::history::error::HistoryError;
use crate::history::model::{INDEX_FILE, IndexRow, REGRESSION_MD_FILE};
use crate::history::package::{self, IndexDoc, RunFiles};
use crate::suite::Goal;
use serde_json::Value;
use std::path::Path;

/// The single warning line that replaces restored warnings.
pub(crate) const GENERIC_WARNING: &str =
    "Restored package recorded one or more Tier-1 history warnings";

const PATH_FIELDS: [&str; 4] = [
    "summary_path",
    "regression_summary_path",
    "regression_json_path",
    "trend_snapshot_path",
];

/// Relocate legacy absolute row paths to `<run_id>/<basename>`. Only a legacy (unchained) index may
/// need it; a chained index with such a path is tampered. Returns whether anything changed.
pub(crate) fn relocate_legacy_paths(
    doc: &mut IndexDoc,
    chain: &ChainState,
) -> Result<bool, HistoryError> {
    let mut changed = false;
    if let Some(Value::Array(rows)) = doc.raw.get_mut("runs") {
        for row in rows.iter_mut() {
            let Some(obj) = row.as_object_mut() else {
                continue;
            };
            let run_id = obj
                .get("run_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            for field in PATH_FIELDS {
                let Some(p) = obj.get(field).and_then(Value::as_str) else {
                    continue;
                };
                if !(p.starts_with('/') || p.contains('\\')) {
                    continue;
                }
                if *chain != ChainState::Unchained {
                    return Err(HistoryError::integrity(
                        INDEX_FILE,
                        format!("run {run_id:?}: `{field}` {p:?} is absolute in a chained index"),
                    ));
                }
                let base = p.rsplit(['/', '\\']).next().unwrap_or("");
                let rel = format!("{run_id}/{base}");
                if fsx::safe_relative_parts(&rel).is_none() {
                    return Err(HistoryError::integrity(
                        INDEX_FILE,
                        format!(
                            "run {run_id:?}: `{field}` {p:?} cannot be relocated under the history root"
                        ),
                    ));
                }
                obj.insert(field.into(), Value::String(rel));
                changed = true;
            }
        }
    }
    if changed {
        let v = Value::Object(doc.raw.clone());
        *doc = IndexDoc::from_value(v)?;
    }
    Ok(changed)
}

/// A stored reference made portable: kept when it is safe and relative, else cut to the part that
/// starts at the `run_id` component; None when no such part exists.
pub(crate) fn portable(p: &str, run_id: &str) -> Option<String> {
    if fsx::safe_relative_parts(p).is_some() {
        return Some(p.to_string());
    }
    let parts: Vec<&str> = p.split(['/', '\\']).collect();
    let start = parts.iter().rposition(|c| *c == run_id)?;
    let rel = parts[start..].join("/");
    fsx::safe_relative_parts(&rel).is_some().then_some(rel)
}

/// Sanitize one run's files in memory and write them back under `root`, a staged tree (files are
/// overwritten in place; the tree is published by one rename).
pub(crate) fn sanitize_run(
    root: &Path,
    row: &IndexRow,
    f: &mut RunFiles,
) -> Result<(), HistoryError> {
    let id = row.run_id.as_str();
    let s = &mut f.summary;
    let name = s
        .evidence_artifact_name
        .clone()
        .unwrap_or_else(|| format!("tier1-evidence-{id}"));
    if !is_evidence_artifact_name(&name) {
        return Err(HistoryError::structural(
            &row.summary_path,
            format!(
                "evidence_artifact_name: expected {}, found {name:?}",
                crate::artifacts::EVIDENCE_NAME_PATTERN
            ),
        ));
    }
    s.evidence_artifact_name = Some(name);
    for r in [
        &mut s.source_result_json,
        &mut s.source_manifest_json,
        &mut s.source_markdown_report,
    ] {
        *r = r.as_deref().and_then(|p| portable(p, id));
    }
    for t in &mut s.targets {
        t.artifacts = std::mem::take(&mut t.artifacts)
            .into_iter()
            .filter_map(|(k, v)| portable(&v, id).map(|v| (k, v)))
            .collect();
        if aggregate::goal(t) == Goal::Memory && t.best_optimized_memory_mb.is_none() {
            t.best_optimized_memory_mb =
                aggregate::best_optimized_memory(t.baseline_memory_mb, t.best_memory_savings_pct)
                    .map(Into::into);
        }
    }
    let r = &mut f.regression;
    if !r.warnings.is_empty() {
        r.warnings = vec![GENERIC_WARNING.into()];
    }
    for rc in &mut r.rechecks {
        if let Some(p) = portable(&rc.recheck_output_json, &rc.recheck_run_id) {
            rc.recheck_output_json = p;
        }
    }
    if r.regression_rechecks_path.is_some() {
        r.regression_rechecks_path =
            Some(package::run_path(id, crate::history::model::RECHECKS_FILE));
    }
    package::write_json_staged(root, &row.summary_path, &f.summary, &f.summary_bytes)?;
    package::write_json_staged(
        root,
        &row.regression_json_path,
        &f.regression,
        &f.regression_bytes,
    )?;
    let md = crate::regress_md::render(&f.regression);
    let md_rel = if row.regression_summary_path.ends_with(".md") {
        row.regression_summary_path.clone()
    } else {
        package::run_path(id, REGRESSION_MD_FILE)
    };
    fsx::overwrite_staged_if_changed(&root.join(&md_rel), md.as_bytes())
        .map(|_| ())
        .map_err(|e| HistoryError::structural(&md_rel, format!("cannot rewrite: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_paths() {
        assert_eq!(
            portable("r1/summary.json", "r1").as_deref(),
            Some("r1/summary.json")
        );
        assert_eq!(
            portable("/home/runner/work/x/r1/results/a.json", "r1").as_deref(),
            Some("r1/results/a.json")
        );
        assert_eq!(portable("/tmp/other/a.json", "r1"), None);
        assert_eq!(portable("../r1/../x", "r1"), None);
    }
}
