//! Google Benchmark's JSON (`--benchmark_format=json`, or the file of `--benchmark_out`):
//! `benchmarks[]` entries of `run_type` `iteration` (one per repetition, with
//! `--benchmark_repetitions=N`) under their `run_name`, each `real_time` per iteration in
//! `time_unit` (its `cpu_time` under the profile's `clock: cpu`, unless the benchmark asked for
//! real or manual time: its name then ends in `/real_time` or `/manual_time`, and its
//! `real_time` is the time it chose); aggregate entries (`mean`, `median`, ...) are ignored,
//! and `error_occurred` fails the benchmark with its `error_message`.

use super::Measured;
use crate::suite::Clock;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    benchmarks: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    name: String,
    #[serde(default)]
    run_name: Option<String>,
    #[serde(default)]
    run_type: Option<String>,
    #[serde(default)]
    real_time: Option<f64>,
    #[serde(default)]
    cpu_time: Option<f64>,
    #[serde(default)]
    time_unit: Option<String>,
    #[serde(default)]
    error_occurred: bool,
    #[serde(default)]
    error_message: Option<String>,
}

fn unit_ms(unit: Option<&str>) -> Result<f64, String> {
    match unit.unwrap_or("ns") {
        "ns" => Ok(1e-6),
        "us" => Ok(1e-3),
        "ms" => Ok(1.0),
        "s" => Ok(1e3),
        other => Err(format!(
            "time_unit: expected ns, us, ms or s, found {other:?}"
        )),
    }
}

/// The benchmarks of the output, one sample per repetition, in repetition order, on `clock`.
pub(crate) fn parse(bytes: &[u8], clock: Clock) -> Result<Vec<Measured>, String> {
    let file: File = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a Google Benchmark JSON document: {e}"))?;
    let mut out: Vec<Measured> = Vec::new();
    let mut aggregates_only: Vec<String> = Vec::new();
    for e in file.benchmarks {
        let run_name = e.run_name.clone().unwrap_or_else(|| e.name.clone());
        if e.run_type.as_deref().is_some_and(|t| t != "iteration") {
            aggregates_only.push(run_name);
            continue;
        }
        let index = match out.iter().position(|m| m.name == run_name) {
            Some(i) => i,
            None => {
                out.push(Measured {
                    name: run_name.clone(),
                    alias: None,
                    samples_ms: Vec::new(),
                    error: None,
                });
                out.len() - 1
            }
        };
        let m = &mut out[index];
        if e.error_occurred {
            m.error = Some(format!(
                "the benchmark reported an error: {}",
                e.error_message.as_deref().unwrap_or("(no message)")
            ));
            continue;
        }
        // A benchmark that chose its time (`UseRealTime`, `UseManualTime`: a device's) keeps it.
        let chose = ["/real_time", "/manual_time"]
            .iter()
            .any(|s| run_name.contains(s));
        let (field, time) = if clock == Clock::Cpu && !chose {
            ("cpu_time", e.cpu_time)
        } else {
            ("real_time", e.real_time)
        };
        let time = time.ok_or_else(|| format!("{run_name}: an iteration entry without {field}"))?;
        m.samples_ms.push(time * unit_ms(e.time_unit.as_deref())?);
    }
    for name in aggregates_only {
        if !out.iter().any(|m| m.name == name) {
            out.push(Measured::failed(
                name,
                None,
                Some(
                    "only aggregates were reported: drop --benchmark_report_aggregates_only (tier1 needs every repetition)"
                        .into(),
                ),
            ));
        }
    }
    Ok(out)
}
