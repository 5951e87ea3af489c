//! The protocol's rules for a result document, parsed from a command's stdout or built by an
//! importer: its schema, a safe `baseline_file`, finite work, a baseline first, unique safe names,
//! bounded input signatures, finite non-negative samples and finite verification errors.

use super::output::{COMMAND_SCHEMA, CommandOutput, CommandVariant};
use crate::bench::result::BASELINE;
use crate::bench::stats::Stats;
use std::collections::BTreeSet;

/// How much of a malformed stdout a message quotes.
const SNIPPET_CHARS: usize = 200;
/// Largest sample a command may report (ms): a day.
pub(crate) const MAX_SAMPLE_MS: f64 = 86_400_000.0;
/// Most variants of a command result.
pub(crate) const MAX_VARIANTS: usize = 64;
/// Longest variant name, `baseline_file`, and input name or dtype, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 256;
/// Most inputs of an input signature, and most dimensions of one input.
pub(crate) const MAX_INPUTS: usize = 64;
/// Largest work count (`flops`, `bytes`).
pub(crate) const MAX_WORK: f64 = 1e30;

/// Parse and validate a command's stdout into variant results (baseline first).
pub fn parse(key: &str, stdout: &[u8]) -> Result<CommandOutput, String> {
    let bad = |m: String| format!("target {key}: malformed command result: {m}");
    let raw: CommandOutput = serde_json::from_slice(stdout)
        .map_err(|e| bad(format!("{e}; stdout began: {:?}", snippet(stdout))))?;
    validate(key, raw)
}

/// Check a result document (parsed, or built by an importer) against the protocol's rules: the
/// document's own fields, then its list of variants, then each variant in order; the first rule
/// broken is the error.
pub(super) fn validate(key: &str, raw: CommandOutput) -> Result<CommandOutput, String> {
    let bad = |m: String| format!("target {key}: malformed command result: {m}");
    check_document(&raw).map_err(bad)?;
    check_variant_list(&raw.variants).map_err(bad)?;
    let mut names = BTreeSet::new();
    for (i, v) in raw.variants.iter().enumerate() {
        check_variant(i, v, &mut names).map_err(bad)?;
    }
    Ok(raw)
}

/// The document's own fields: its schema, a repo-relative `baseline_file` of at most
/// [`MAX_NAME_BYTES`], finite work counts in `0..=MAX_WORK`.
fn check_document(raw: &CommandOutput) -> Result<(), String> {
    if raw.schema != COMMAND_SCHEMA {
        return Err(format!(
            "schema: expected {COMMAND_SCHEMA:?}, found {:?}",
            raw.schema
        ));
    }
    if let Some(f) = &raw.baseline_file
        && crate::fsx::safe_relative_parts(f).is_none()
    {
        return Err(format!(
            "baseline_file: expected a repo-relative path, found {f:?}"
        ));
    }
    if let Some(f) = &raw.baseline_file
        && f.len() > MAX_NAME_BYTES
    {
        return Err(format!(
            "baseline_file: expected at most {MAX_NAME_BYTES} bytes, found {}",
            f.len()
        ));
    }
    for (name, v) in [("flops", raw.work.flops), ("bytes", raw.work.bytes)] {
        if let Some(x) = v.map(f64::from)
            && !(x.is_finite() && (0.0..=MAX_WORK).contains(&x))
        {
            return Err(format!(
                "work.{name}: expected a finite number in 0..={MAX_WORK:e}, found {x}"
            ));
        }
    }
    Ok(())
}

/// The list of variants: at most [`MAX_VARIANTS`], the baseline first.
fn check_variant_list(variants: &[CommandVariant]) -> Result<(), String> {
    if variants.len() > MAX_VARIANTS {
        return Err(format!(
            "variants: expected at most {MAX_VARIANTS}, found {}",
            variants.len()
        ));
    }
    match variants.first() {
        Some(v) if v.name == BASELINE => Ok(()),
        Some(v) => Err(format!(
            "variants[0].name: expected {BASELINE:?}, found {:?}",
            v.name
        )),
        None => Err("variants: expected at least a baseline".into()),
    }
}

/// Variant `i`: a unique safe name (added to `names`), a bounded input signature, finite samples
/// in `0..=MAX_SAMPLE_MS` (at least one), finite verification errors.
fn check_variant<'v>(
    i: usize,
    v: &'v CommandVariant,
    names: &mut BTreeSet<&'v str>,
) -> Result<(), String> {
    if !crate::fsx::is_safe_component(&v.name)
        || v.name.len() > MAX_NAME_BYTES
        || !names.insert(v.name.as_str())
    {
        return Err(format!(
            "variants[{i}].name: expected a unique safe name of at most {MAX_NAME_BYTES} bytes, found {:?}",
            v.name
        ));
    }
    let sig = &v.input_signature;
    let oversized = sig.inputs.len() > MAX_INPUTS
        || sig.inputs.iter().any(|t| {
            t.name.len() > MAX_NAME_BYTES
                || t.dtype.len() > MAX_NAME_BYTES
                || t.shape.len() > MAX_INPUTS
        });
    if oversized {
        return Err(format!(
            "variants[{i}] ({}).input_signature: expected at most {MAX_INPUTS} inputs of at most {MAX_INPUTS} dimensions, names and dtypes of at most {MAX_NAME_BYTES} bytes",
            v.name
        ));
    }
    if let Some((j, x)) = v
        .samples_ms
        .iter()
        .enumerate()
        .find(|(_, x)| !(x.is_finite() && (0.0..=MAX_SAMPLE_MS).contains(*x)))
    {
        return Err(format!(
            "variants[{i}] ({}).samples_ms[{j}]: expected a finite number of milliseconds in 0..={MAX_SAMPLE_MS}, found {x:?}",
            v.name
        ));
    }
    if Stats::of(&v.samples_ms).is_none() {
        return Err(format!(
            "variants[{i}] ({}).samples_ms: expected at least one finite, non-negative sample",
            v.name
        ));
    }
    if let Some(ver) = &v.verification
        && (!ver.max_abs_err.is_finite() || !ver.max_rel_err.is_finite())
    {
        return Err(format!(
            "variants[{i}] ({}).verification: errors must be finite",
            v.name
        ));
    }
    Ok(())
}

/// The first [`SNIPPET_CHARS`] characters of a command's stdout (lossy UTF-8).
fn snippet(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.into_owned(),
    }
}
