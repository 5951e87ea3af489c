//! criterion's result directory (`CRITERION_HOME`, by default `target/criterion`): for every
//! benchmark `<id>/new/benchmark.json` (its `full_id`, `sort/fast/1000`) and `<id>/new/sample.json`
//! (`iters[i]` executions took `times[i]` nanoseconds in sample `i`). tier1 points
//! `CRITERION_HOME` at a fresh directory for each invocation, so only this run's results are read:
//! directories are walked without following links, and a file is read only when it is a regular
//! file of at most `limits::MAX_OUTPUT_BYTES` (a link, which could name a file outside
//! `CRITERION_HOME`, and a larger file are refused before anything is read).

use super::Measured;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Deepest directory level searched below `CRITERION_HOME`.
const MAX_DEPTH: usize = 8;

#[derive(Deserialize)]
struct Benchmark {
    full_id: String,
}

#[derive(Deserialize)]
struct Sample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// The `new/` directories below `home`, in a stable order.
fn new_dirs(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(home.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if !kind.is_dir() {
                continue;
            }
            let path = e.path();
            if e.file_name() == "new" {
                out.push(path);
            } else if depth < MAX_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
    out.sort();
    out
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    // Never through a link (it could name a file outside CRITERION_HOME), never past the budget
    // of a command's output.
    let bytes = crate::fsx::read_no_follow_at_most(path, crate::bench::limits::MAX_OUTPUT_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not criterion's format: {e}", path.display()))
}

/// The benchmarks criterion wrote below `home`, one sample per criterion sample (time per
/// execution).
pub(crate) fn scan(home: &Path) -> Result<Vec<Measured>, String> {
    let mut out = Vec::new();
    for dir in new_dirs(home) {
        let bench = dir.join("benchmark.json");
        if !bench.is_file() {
            continue;
        }
        let b: Benchmark = read_json(&bench)?;
        let s: Sample = read_json(&dir.join("sample.json"))?;
        if s.iters.len() != s.times.len() {
            return Err(format!(
                "{}: iters has {} entries and times {}, expected as many",
                dir.join("sample.json").display(),
                s.iters.len(),
                s.times.len()
            ));
        }
        let samples_ms = s
            .iters
            .iter()
            .zip(&s.times)
            .map(|(n, t)| if *n > 0.0 { t / n * 1e-6 } else { f64::NAN })
            .collect();
        out.push(Measured {
            name: b.full_id,
            alias: None,
            samples_ms,
            error: None,
        });
    }
    if out.is_empty() {
        return Err(format!(
            "criterion wrote no results under {} (CRITERION_HOME): is the command a criterion bench (cargo bench --bench <name>)?",
            home.display()
        ));
    }
    Ok(out)
}
