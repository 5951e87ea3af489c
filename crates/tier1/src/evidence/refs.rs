//! References into a run's evidence, checked where a promotion or a sharded night's combine step
//! reads them: a reference is a safe relative path whose first component is the run id (or one of
//! its recheck run ids) and names an existing file; a side-by-side record agrees with the
//! comparison's own `outcome.json`.

use crate::fsx;
use serde_json::Value;
use std::path::Path;

/// Resolve an evidence reference: relative, no `..`, first component the run id (or a recheck run
/// id of this run), and the file exists.
pub(crate) fn resolve(
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

pub(crate) fn read_object(p: &Path, what: &str) -> Result<serde_json::Map<String, Value>, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("{what} {}: {e}", p.display()))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{what} {}: expected a JSON object", p.display())),
        Err(e) => Err(format!("{what} {}: invalid JSON: {e}", p.display())),
    }
}

/// A side-by-side record agrees with the comparison's own `outcome.json` in the evidence:
/// verdict, rounds and both ratios.
pub(crate) fn check_side_by_side(
    evidence_root: &Path,
    run_id: &str,
    c: &crate::history::SideBySideCheck,
) -> Result<(), String> {
    let Some(dir) = &c.evidence_dir else {
        return Ok(());
    };
    let path = resolve(
        evidence_root,
        "side_by_side evidence_dir",
        Some(&format!("{dir}/outcome.json")),
        run_id,
    )?;
    let o = read_object(&path, "side-by-side outcome")?;
    let ratio = |v: Option<&Value>| {
        v.filter(|v| !v.is_null()).map(|r| {
            ["ratio", "low", "high"].map(|k| r.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN))
        })
    };
    let recorded =
        |r: Option<crate::history::SbsRatio>| r.map(|r| [r.ratio, r.low, r.high].map(f64::from));
    let found = (
        o.get("verdict").and_then(Value::as_str).unwrap_or(""),
        o.get("rounds").and_then(Value::as_u64),
        ratio(o.get("optimized_time_ratio")),
        ratio(o.get("speedup_ratio")),
    );
    let want = (
        c.verdict.as_str(),
        Some(u64::from(c.rounds)),
        recorded(c.optimized_time_ratio),
        recorded(c.speedup_ratio),
    );
    if found != want {
        return Err(format!(
            "side_by_side check of {}: the record (verdict {}, {} rounds, ratios {:?} {:?}) differs from {} (verdict {}, {:?} rounds, ratios {:?} {:?})",
            c.target,
            want.0,
            c.rounds,
            want.2,
            want.3,
            path.display(),
            found.0,
            found.1,
            found.2,
            found.3
        ));
    }
    Ok(())
}
