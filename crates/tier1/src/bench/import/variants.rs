//! Reading a tool's output: every benchmark it reports (by the target's format), then the
//! target's variants picked by the names the suite's `variants` give.

use super::Measured;
use super::{criterion, google_benchmark, hyperfine, nvbench, pytest};
use crate::suite::{Clock, OutputFormat, Target, variant_name};
use std::path::Path;

/// Most names a "not found" message lists.
const LISTED: usize = 20;

/// A variant read from a tool's output: its tier1 name (`baseline`, else the tool's name made
/// safe, [`variant_name`]) and its samples.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImportedVariant {
    /// tier1 variant name.
    pub(crate) name: String,
    /// Time of one execution per sample (ms).
    pub(crate) samples_ms: Vec<f64>,
}

/// Where one invocation left the tool's output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolOutput<'a> {
    /// The document (the `{output}` file, else stdout).
    pub(crate) document: &'a [u8],
    /// The directory of the `{output}` file (nvbench's sample files are relative to it).
    pub(crate) dir: &'a Path,
    /// The invocation's `CRITERION_HOME`.
    pub(crate) criterion_home: &'a Path,
    /// The profile's clock: under [`Clock::Cpu`] a tool's CPU time is read where it reports one
    /// per sample (Google Benchmark's `cpu_time`).
    pub(crate) clock: Clock,
}

/// Every benchmark of the output in the target's format.
pub(crate) fn measured(format: OutputFormat, out: ToolOutput<'_>) -> Result<Vec<Measured>, String> {
    match format {
        OutputFormat::Tier1 => Err("format tier1 is not an importer".into()),
        OutputFormat::PytestBenchmark => pytest::parse(out.document),
        OutputFormat::GoogleBenchmark => google_benchmark::parse(out.document, out.clock),
        OutputFormat::Hyperfine => hyperfine::parse(out.document),
        OutputFormat::Nvbench => nvbench::parse(out.document, out.dir),
        OutputFormat::Criterion => criterion::scan(out.criterion_home),
    }
}

/// The target's variants from the tool's output, baseline first, as its `variants` maps them.
pub(crate) fn variants(t: &Target, out: ToolOutput<'_>) -> Result<Vec<ImportedVariant>, String> {
    let what = format!("target {}: format {}", t.key, t.format.as_str());
    let map = t
        .variants
        .as_ref()
        .ok_or_else(|| format!("{what}: the suite gives no `variants`"))?;
    let all = measured(t.format, out).map_err(|e| format!("{what}: {e}"))?;
    let mut result = Vec::new();
    for (i, name) in std::iter::once(&map.baseline)
        .chain(&map.optimized)
        .enumerate()
    {
        let mut named = all.iter().filter(|m| m.is(name));
        let (first, again) = (named.next(), named.next());
        if first.is_some() && again.is_some() {
            let n = 2 + named.count();
            return Err(format!(
                "{what}: the output reports {n} benchmarks named {name:?}: expected exactly one (which one the suite means cannot be told)"
            ));
        }
        let Some(m) = first else {
            let names: Vec<&str> = all.iter().take(LISTED).map(|m| m.name.as_str()).collect();
            return Err(format!(
                "{what}: no benchmark named {name:?} in the output; it has {}: {names:?}{}",
                all.len(),
                if all.len() > LISTED { " ..." } else { "" }
            ));
        };
        if let Some(e) = &m.error {
            return Err(format!("{what}: benchmark {name:?}: {e}"));
        }
        result.push(ImportedVariant {
            name: if i == 0 {
                crate::bench::result::BASELINE.into()
            } else {
                variant_name(name)
            },
            samples_ms: m.samples_ms.clone(),
        });
    }
    Ok(result)
}
