//! The plan of a sharded night (`tier1.shard_plan.v1`, docs/sharding.md §2): the run id, the
//! commit, suite, profile and runner class every shard must measure, and the targets of each
//! shard, balanced by the targets' recorded times in the restored history (longest processing
//! time first; a target the history never measured gets the median). A pure function of its
//! inputs: the same history and suite always give the same plan.

use crate::digest::Digest;
use crate::history::model::{INDEX_FILE, Summary, TargetSummary};
use crate::history::package::{IndexDoc, read_json};
use crate::json::Finite;
use crate::suite::Suite;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// `schema` of a plan.
pub(crate) const PLAN_SCHEMA: &str = "tier1.shard_plan.v1";
/// The time a target gets when no target's time is known (seconds).
pub(crate) const UNKNOWN_SECONDS: f64 = 1.0;

/// The suite a plan was made for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSuite {
    /// Suite name.
    pub name: String,
    /// Suite version.
    pub version: u32,
    /// `sha256:` of the parsed suite's canonical JSON.
    pub config_digest: String,
}

/// The runner class a plan's shards run on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanClass {
    /// The labels of its runners (the shard jobs' `runs-on`).
    pub labels: Vec<String>,
    /// The expected device name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// The expected device count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_count: Option<u32>,
}

/// A target's recorded time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetTime {
    /// Seconds.
    pub seconds: Finite,
    /// `history:<run_id>` or `median`.
    pub source: String,
}

/// One shard's targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// 1-based shard number.
    pub shard: u32,
    /// Target keys, in suite order.
    pub targets: Vec<String>,
    /// The sum of their recorded times.
    pub estimated_seconds: Finite,
}

/// A sharded night's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// `PLAN_SCHEMA`.
    pub schema: String,
    /// The night's run id.
    pub run_id: String,
    /// The workflow run whose artifacts hold the shards.
    pub workflow_run_id: u64,
    /// The attempt that planned.
    pub attempt: u32,
    /// RFC 3339.
    pub created_at: String,
    /// The commit every shard measures.
    pub commit: String,
    /// The suite.
    pub suite: PlanSuite,
    /// The profile.
    pub profile: String,
    /// The runner class, or null (the unnamed class).
    pub runner_class: Option<String>,
    /// The class's runners and devices.
    pub class: Option<PlanClass>,
    /// The class's artifact prefix.
    pub artifact_prefix: String,
    /// The shard count asked for.
    pub requested_shards: u32,
    /// The shard count used (at most one shard per target).
    pub shards: u32,
    /// Passes per target.
    pub passes: u32,
    /// The run is an accept dispatch's candidate.
    pub anchor_candidate: bool,
    /// The restored history's anchor, or null.
    pub anchor_run_id: Option<String>,
    /// Recorded time per target key.
    pub target_seconds: BTreeMap<String, TargetTime>,
    /// The shards' targets.
    pub assignments: Vec<Assignment>,
}

impl Plan {
    /// `sha256:` of the plan's canonical JSON: what every shard records.
    pub fn digest(&self) -> Digest {
        let v = serde_json::to_value(self).expect("a plan serializes");
        Digest::of_bytes(crate::json::canonical(&v).as_bytes())
    }

    /// The targets of shard `k`, or None when the plan has no such shard.
    pub fn targets_of(&self, k: u32) -> Option<&[String]> {
        self.assignments
            .iter()
            .find(|a| a.shard == k)
            .map(|a| a.targets.as_slice())
    }

    /// The plan's own problem, if any (a plan file read back): the schema, shards numbered 1..=N,
    /// every suite target in exactly one shard, in suite order within it.
    pub(crate) fn problem(&self, suite: &Suite) -> Option<String> {
        if self.schema != PLAN_SCHEMA {
            return Some(format!(
                "schema: expected {PLAN_SCHEMA:?}, found {:?}",
                self.schema
            ));
        }
        if !crate::fsx::is_safe_run_id(&self.run_id) {
            return Some(format!("run_id: {:?} is not a safe run id", self.run_id));
        }
        if self.assignments.len() != self.shards as usize || self.shards == 0 {
            return Some(format!(
                "assignments: expected {} shards, found {}",
                self.shards,
                self.assignments.len()
            ));
        }
        let order = suite_order(suite);
        let mut seen = std::collections::BTreeSet::new();
        for (i, a) in self.assignments.iter().enumerate() {
            if a.shard != i as u32 + 1 {
                return Some(format!(
                    "assignments[{i}].shard: expected {}, found {}",
                    i + 1,
                    a.shard
                ));
            }
            if a.targets.is_empty() {
                return Some(format!("assignments[{i}]: a shard without targets"));
            }
            let mut last = None;
            for t in &a.targets {
                let Some(&pos) = order.get(t.as_str()) else {
                    return Some(format!(
                        "assignments[{i}]: target {t:?} is not in the suite"
                    ));
                };
                if !seen.insert(t.as_str()) {
                    return Some(format!("assignments[{i}]: target {t:?} is in two shards"));
                }
                if last.is_some_and(|l| l > pos) {
                    return Some(format!("assignments[{i}]: targets are not in suite order"));
                }
                last = Some(pos);
            }
        }
        if seen.len() != suite.targets.len() {
            return Some(format!(
                "assignments: {} of the suite's {} targets are assigned",
                seen.len(),
                suite.targets.len()
            ));
        }
        None
    }
}

/// Each suite target key's position in the suite.
pub(crate) fn suite_order(suite: &Suite) -> BTreeMap<&str, usize> {
    suite
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.key.as_str(), i))
        .collect()
}

/// A target's timed cost in a summary (seconds): rounds × (baseline time × its repetitions +
/// best optimized time × its repetitions). None when the row has no measurement.
pub(crate) fn timed_seconds(t: &TargetSummary) -> Option<f64> {
    let m = t.measurement.as_ref()?;
    let base = t.baseline_time_ms?.get();
    let opt = t.best_optimized_time_ms.map_or(0.0, Finite::get);
    let s = f64::from(m.rounds)
        * (base * f64::from(m.baseline_repetitions.max(1))
            + opt * f64::from(m.optimized_repetitions.max(1)))
        / 1000.0;
    (s.is_finite() && s > 0.0).then_some(s)
}

/// Recorded times of the suite's targets from the history at `root` (absent: none): for each
/// target the newest live run, in publication order, that measured it.
pub(crate) fn recorded_seconds(
    root: Option<&Path>,
    suite: &Suite,
) -> Result<BTreeMap<String, TargetTime>, crate::history::HistoryError> {
    let mut out = BTreeMap::new();
    let Some(root) = root.filter(|r| r.join(INDEX_FILE).is_file()) else {
        return Ok(out);
    };
    let Some(doc) = IndexDoc::load(root)? else {
        return Ok(out);
    };
    for row in doc.index.runs.iter().rev() {
        if out.len() == suite.targets.len() {
            break;
        }
        let summary: Summary = read_json(root, &row.summary_path)?;
        for t in &suite.targets {
            if out.contains_key(&t.key) {
                continue;
            }
            let found = summary
                .targets
                .iter()
                .find(|r| r.key == t.key && r.status == crate::aggregate::SUCCEEDED);
            if let Some(s) = found.and_then(timed_seconds) {
                out.insert(
                    t.key.clone(),
                    TargetTime {
                        seconds: Finite::from(s),
                        source: format!("history:{}", row.run_id),
                    },
                );
            }
        }
    }
    Ok(out)
}

/// Every suite target's time: the recorded one, else the median of the recorded ones (else
/// [`UNKNOWN_SECONDS`]).
pub(crate) fn with_median(
    suite: &Suite,
    mut known: BTreeMap<String, TargetTime>,
) -> BTreeMap<String, TargetTime> {
    let mut values: Vec<f64> = known.values().map(|t| t.seconds.get()).collect();
    values.sort_by(f64::total_cmp);
    let median = match values.len() {
        0 => UNKNOWN_SECONDS,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    for t in &suite.targets {
        known.entry(t.key.clone()).or_insert_with(|| TargetTime {
            seconds: Finite::from(median),
            source: "median".into(),
        });
    }
    known
}

/// Split the suite's targets over `shards` shards (at most one per target) by longest processing
/// time first: targets by time, longest first (equal times in suite order), each to the shard with
/// the least time so far (the lower shard on a tie); each shard's targets in suite order.
pub(crate) fn assign(
    suite: &Suite,
    times: &BTreeMap<String, TargetTime>,
    shards: u32,
) -> Vec<Assignment> {
    let n = (shards.max(1) as usize).min(suite.targets.len().max(1));
    let secs = |key: &str| times.get(key).map_or(UNKNOWN_SECONDS, |t| t.seconds.get());
    let mut order: Vec<usize> = (0..suite.targets.len()).collect();
    order.sort_by(|&a, &b| {
        secs(&suite.targets[b].key)
            .total_cmp(&secs(&suite.targets[a].key))
            .then(a.cmp(&b))
    });
    let mut load = vec![0.0_f64; n];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in order {
        let k = (0..n)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[k] += secs(&suite.targets[i].key);
        members[k].push(i);
    }
    members
        .into_iter()
        .enumerate()
        .map(|(k, mut m)| {
            m.sort_unstable();
            Assignment {
                shard: k as u32 + 1,
                targets: m.iter().map(|&i| suite.targets[i].key.clone()).collect(),
                estimated_seconds: Finite::from(load[k]),
            }
        })
        .collect()
}

/// What a plan is made from.
#[derive(Debug, Clone)]
pub(crate) struct PlanRequest<'a> {
    /// The suite.
    pub(crate) suite: &'a Suite,
    /// The restored history (None or absent: nothing recorded).
    pub(crate) history: Option<&'a Path>,
    /// The night's run id.
    pub(crate) run_id: String,
    /// The workflow run and attempt.
    pub(crate) workflow_run_id: u64,
    /// The attempt that plans.
    pub(crate) attempt: u32,
    /// RFC 3339 creation time.
    pub(crate) created_at: String,
    /// The commit to measure.
    pub(crate) commit: String,
    /// The profile.
    pub(crate) profile: String,
    /// The runner class.
    pub(crate) runner_class: Option<String>,
    /// The class's artifact prefix.
    pub(crate) artifact_prefix: String,
    /// Shards asked for.
    pub(crate) requested_shards: u32,
    /// Passes per target.
    pub(crate) passes: u32,
    /// An accept dispatch's candidate.
    pub(crate) anchor_candidate: bool,
    /// The restored anchor.
    pub(crate) anchor_run_id: Option<String>,
}

/// Make the plan.
pub(crate) fn make(r: PlanRequest<'_>) -> Result<Plan, crate::history::HistoryError> {
    let times = with_median(r.suite, recorded_seconds(r.history, r.suite)?);
    let assignments = assign(r.suite, &times, r.requested_shards);
    let class = r
        .runner_class
        .as_deref()
        .and_then(|c| r.suite.runner_class(c).ok())
        .map(|c| PlanClass {
            labels: c.labels().to_vec(),
            device_name: c.device_name().map(str::to_string),
            device_count: c.device_count(),
        });
    Ok(Plan {
        schema: PLAN_SCHEMA.into(),
        run_id: r.run_id,
        workflow_run_id: r.workflow_run_id,
        attempt: r.attempt,
        created_at: r.created_at,
        commit: r.commit,
        suite: PlanSuite {
            name: r.suite.suite_name.clone(),
            version: r.suite.version,
            config_digest: r.suite.config_digest().to_string(),
        },
        profile: r.profile,
        runner_class: r.runner_class,
        class,
        artifact_prefix: r.artifact_prefix,
        requested_shards: r.requested_shards,
        shards: assignments.len() as u32,
        passes: r.passes,
        anchor_candidate: r.anchor_candidate,
        anchor_run_id: r.anchor_run_id,
        target_seconds: times,
        assignments,
    })
}

#[cfg(test)]
mod tests;
