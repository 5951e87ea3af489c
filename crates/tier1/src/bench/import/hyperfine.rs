//! hyperfine's `--export-json` file: `results[]` with the `command` (its text, or the name given
//! with `--command-name`), `times` (one per run, seconds) and `exit_codes` (a non-zero code
//! fails the benchmark).

use super::Measured;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    results: Vec<Result_>,
}

#[derive(Deserialize)]
struct Result_ {
    command: String,
    #[serde(default)]
    times: Option<Vec<f64>>,
    #[serde(default)]
    exit_codes: Vec<Option<i64>>,
}

/// The commands of the file, one sample per run.
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Measured>, String> {
    let file: File = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a hyperfine --export-json file: {e}"))?;
    Ok(file
        .results
        .into_iter()
        .map(|r| {
            if let Some(code) = r.exit_codes.iter().find(|c| **c != Some(0)) {
                let code = code.map_or_else(|| "a signal".to_string(), |c| c.to_string());
                return Measured::failed(
                    r.command,
                    None,
                    Some(format!("a run exited with {code}")),
                );
            }
            match r.times {
                Some(times) => Measured {
                    name: r.command,
                    alias: None,
                    samples_ms: times.iter().map(|s| s * 1e3).collect(),
                    error: None,
                },
                None => Measured::failed(
                    r.command,
                    None,
                    Some("no times (hyperfine 1.9 or newer writes them)".into()),
                ),
            }
        })
        .collect())
}
