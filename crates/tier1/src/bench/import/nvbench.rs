//! nvbench's `--json` file: `benchmarks[].states[]`, each state (`Device=0 Elements=1024`) a
//! measurement named `<benchmark>/<state>` (or `<benchmark>` alone when it has one state). With
//! `--jsonbin` the state's summary `nv/json/bin:nv/cold/sample_times` names a file of
//! little-endian float32 sample times (seconds, relative to the JSON file's directory): every
//! isolated execution is a sample. Without it, the state's mean cold GPU time
//! (`nv/cold/time/gpu/mean`) is one sample of this invocation (tier1 invokes the command again
//! and pools them until precise). A skipped state fails with its reason.

use super::Measured;
use serde::Deserialize;
use std::path::Path;

const BIN_TAG: &str = "nv/json/bin:nv/cold/sample_times";
const MEAN_TAG: &str = "nv/cold/time/gpu/mean";
/// Largest sample file read (float32 values: as many as a run may record, `limits`).
const MAX_BIN_BYTES: u64 = crate::bench::limits::MAX_JSONBIN_BYTES;

#[derive(Deserialize)]
struct File {
    benchmarks: Vec<Bench>,
}

#[derive(Deserialize)]
struct Bench {
    name: String,
    #[serde(default)]
    states: Vec<State>,
}

#[derive(Deserialize)]
struct State {
    name: String,
    #[serde(default)]
    summaries: Option<Vec<Summary>>,
    #[serde(default)]
    is_skipped: bool,
    #[serde(default)]
    skip_reason: Option<String>,
}

#[derive(Deserialize)]
struct Summary {
    tag: String,
    #[serde(default)]
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    name: String,
    value: serde_json::Value,
}

impl Summary {
    fn value(&self, name: &str) -> Option<String> {
        let d = self.data.iter().find(|d| d.name == name)?;
        match &d.value {
            serde_json::Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }
}

/// The states of the file; `json_dir` is the JSON file's directory (sample files are relative to
/// it and must lie inside it).
pub(crate) fn parse(bytes: &[u8], json_dir: &Path) -> Result<Vec<Measured>, String> {
    let file: File =
        serde_json::from_slice(bytes).map_err(|e| format!("not an nvbench JSON file: {e}"))?;
    let mut out = Vec::new();
    for b in file.benchmarks {
        let single = b.states.len() == 1;
        for s in b.states {
            let name = format!("{}/{}", b.name, s.name);
            let alias = single.then(|| b.name.clone());
            if s.is_skipped {
                let why = s.skip_reason.unwrap_or_else(|| "no reason given".into());
                out.push(Measured::failed(
                    name,
                    alias,
                    Some(format!("skipped: {why}")),
                ));
                continue;
            }
            let summaries = s.summaries.unwrap_or_default();
            let find = |tag: &str| summaries.iter().find(|x| x.tag == tag);
            let samples = match (find(BIN_TAG), find(MEAN_TAG)) {
                (Some(bin), _) => bin_samples(bin, json_dir),
                (None, Some(mean)) => mean
                    .value("value")
                    .and_then(|v| v.parse::<f64>().ok())
                    .map(|s| vec![s * 1e3])
                    .ok_or_else(|| format!("{MEAN_TAG}: expected a number")),
                (None, None) => Err(format!("neither {BIN_TAG} nor {MEAN_TAG} is reported")),
            };
            out.push(match samples {
                Ok(samples_ms) => Measured {
                    name,
                    alias,
                    samples_ms,
                    error: None,
                },
                Err(e) => Measured::failed(name, alias, Some(e)),
            });
        }
    }
    Ok(out)
}

fn bin_samples(summary: &Summary, json_dir: &Path) -> Result<Vec<f64>, String> {
    let rel = summary
        .value("filename")
        .ok_or_else(|| format!("{BIN_TAG}: no filename"))?;
    let path = json_dir.join(&rel);
    let inside = path
        .canonicalize()
        .ok()
        .zip(json_dir.canonicalize().ok())
        .is_some_and(|(p, d)| p.starts_with(d));
    if !inside {
        return Err(format!(
            "{BIN_TAG}: {rel:?} is not a file inside the output directory {}",
            json_dir.display()
        ));
    }
    let len = std::fs::metadata(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if len > MAX_BIN_BYTES || len % 4 != 0 {
        return Err(format!(
            "{}: expected a multiple of 4 bytes up to {MAX_BIN_BYTES}, found {len}",
            path.display()
        ));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])) * 1e3)
        .collect())
}
