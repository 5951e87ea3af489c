//! What the node harness reports about a scenario, read for assertions and failure messages: each
//! run's conclusion, each job's result, outputs and steps (outcome, annotations, log), the trace.

use serde_json::Value;

/// What the node harness reports.
#[derive(Debug, Clone)]
pub struct Report(pub Value);

impl Report {
    /// Run `i`.
    pub fn run(&self, i: usize) -> &Value {
        &self.0["runs"][i]
    }

    /// Job `path` (`tier1`, `promote-history-anchor/promote`) of run `i`.
    pub fn job(&self, i: usize, path: &str) -> &Value {
        let mut j = &self.run(i)["jobs"];
        let mut parts = path.split('/').peekable();
        while let Some(p) = parts.next() {
            j = &j[p];
            if parts.peek().is_some() {
                j = &j["jobs"];
            }
        }
        assert!(!j.is_null(), "run {i} has no job {path}: {}", self.0);
        j
    }

    /// The step with id or name `key` of job `path` in run `i`.
    pub fn step(&self, i: usize, path: &str, key: &str) -> &Value {
        self.job(i, path)["steps"]
            .as_array()
            .and_then(|s| s.iter().find(|x| x["id"] == key || x["name"] == key))
            .unwrap_or_else(|| panic!("run {i} job {path} has no step {key}"))
    }

    /// `(step id or name, outcome)` of every step of a job.
    pub fn outcomes(&self, i: usize, path: &str) -> Vec<(String, String)> {
        self.job(i, path)["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let key = if s["id"].as_str().is_some_and(|x| !x.starts_with("__")) {
                    s["id"].as_str().unwrap_or_default()
                } else {
                    s["name"].as_str().unwrap_or_default()
                };
                (
                    key.to_string(),
                    s["outcome"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// Every `::error::` annotation of run `i`, with its step; a composite action's steps count
    /// too (GitHub shows the workflow commands of an action's steps as the run's annotations).
    pub fn errors(&self, i: usize) -> Vec<String> {
        let mut out = Vec::new();
        fn steps(list: &Value, out: &mut Vec<String>) {
            for s in list.as_array().into_iter().flatten() {
                for a in s["annotations"].as_array().into_iter().flatten() {
                    if a["level"] == "error" {
                        out.push(format!(
                            "{}: {}",
                            s["name"].as_str().unwrap_or_default(),
                            a["message"].as_str().unwrap_or_default()
                        ));
                    }
                }
                steps(&s["composite"], out);
            }
        }
        fn walk(jobs: &Value, out: &mut Vec<String>) {
            for (_, job) in jobs.as_object().into_iter().flatten() {
                steps(&job["steps"], out);
                walk(&job["jobs"], out);
            }
        }
        walk(&self.run(i)["jobs"], &mut out);
        out
    }

    /// Every job's result and step outcomes of run `i` (a composite action's steps under it), with
    /// the log tail of each failed step.
    pub fn diagnose(&self, i: usize) -> String {
        fn steps(list: &Value, indent: &str, out: &mut String) {
            for s in list.as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "{indent}{} [{}]: {}\n",
                    s["name"], s["id"], s["outcome"]
                ));
                if s["outcome"] == "failure" {
                    for a in s["annotations"].as_array().into_iter().flatten() {
                        out.push_str(&format!("{indent}  ! {}\n", a["message"]));
                    }
                    let log = s["log"]
                        .as_str()
                        .and_then(|p| std::fs::read_to_string(p).ok())
                        .unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(25).collect();
                    for l in tail.into_iter().rev() {
                        out.push_str(&format!("{indent}  | {l}\n"));
                    }
                }
                steps(&s["composite"], &format!("{indent}    "), out);
            }
        }
        fn walk(jobs: &Value, prefix: &str, out: &mut String) {
            for (id, job) in jobs.as_object().into_iter().flatten() {
                out.push_str(&format!("job {prefix}{id}: {}\n", job["result"]));
                steps(&job["steps"], "  ", out);
                for leg in job["legs"].as_array().into_iter().flatten() {
                    out.push_str(&format!("  leg {}: {}\n", leg["name"], leg["result"]));
                    steps(&leg["steps"], "    ", out);
                }
                walk(&job["jobs"], &format!("{prefix}{id}/"), out);
            }
        }
        let mut out = format!("run {i}: {}\n", self.run(i)["conclusion"]);
        walk(&self.run(i)["jobs"], "", &mut out);
        out
    }

    /// The event trace (queued, started, finished, ... in order).
    pub fn trace(&self) -> Vec<Value> {
        self.0["trace"].as_array().cloned().unwrap_or_default()
    }

    /// The log of a step (for failure messages).
    pub fn log(&self, i: usize, path: &str, key: &str) -> String {
        self.step(i, path, key)["log"]
            .as_str()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    }
}
