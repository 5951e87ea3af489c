//! pytest-benchmark's `--benchmark-json` file: `benchmarks[]` with `name` (`test_sort[1000]`),
//! `fullname` (`bench/test_sort.py::test_sort[1000]`) and `stats.data`, the per-round times of
//! one execution in seconds (written by default since pytest-benchmark 4; older versions need
//! `--benchmark-save-data`).

use super::Measured;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    benchmarks: Vec<Bench>,
}

#[derive(Deserialize)]
struct Bench {
    name: String,
    #[serde(default)]
    fullname: Option<String>,
    stats: Stats,
}

#[derive(Deserialize)]
struct Stats {
    #[serde(default)]
    data: Option<Vec<f64>>,
}

/// The benchmarks of the file, each under its `name` and its `fullname`.
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Measured>, String> {
    let file: File = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a pytest-benchmark JSON file: {e}"))?;
    let mut out = Vec::new();
    for b in file.benchmarks {
        let Some(data) = b.stats.data else {
            let error = Some(
                "stats.data is absent: run pytest with --benchmark-save-data (pytest-benchmark before 4.0)"
                    .to_string(),
            );
            out.push(Measured::failed(b.name, b.fullname, error));
            continue;
        };
        out.push(Measured {
            name: b.name,
            alias: b.fullname,
            samples_ms: data.iter().map(|s| s * 1e3).collect(),
            error: None,
        });
    }
    Ok(out)
}
