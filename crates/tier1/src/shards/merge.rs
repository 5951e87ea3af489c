//! The merge of a sharded night (docs/sharding.md §4): the combined results file from the
//! delivered shards' results (a pure function: promotion derives it again and must find the same
//! file), with every check that the shards measured the plan's run, suite, profile and runner
//! class on compatible machines; and the one side-by-side block of the night from the shards'
//! blocks, ordered as the whole comparison suspects its targets.

use super::plan::Plan;
use crate::bench::result::ResultsFile;
use crate::confirmation::Suspect;
use crate::history::SideBySideBlock;
use crate::suite::Suite;

/// Why shards cannot be merged (the combine step refuses the night: provenance mismatch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shard {shard}: {message}")]
pub struct MergeError {
    /// The shard whose results do not fit (0: the set of shards as a whole).
    pub shard: u32,
    /// What differs, with the expected and found values.
    pub message: String,
}

fn mismatch(
    shard: u32,
    field: &str,
    expected: impl std::fmt::Debug,
    found: impl std::fmt::Debug,
) -> MergeError {
    MergeError {
        shard,
        message: format!("results {field}: expected {expected:?} (the plan's), found {found:?}"),
    }
}

/// Check one shard's results against the plan: run id, suite, profile, runner class, exactly the
/// plan's targets of that shard, and the class's device count.
pub(crate) fn check_results(plan: &Plan, shard: u32, r: &ResultsFile) -> Result<(), MergeError> {
    if r.run_id != plan.run_id {
        return Err(mismatch(shard, "run_id", &plan.run_id, &r.run_id));
    }
    if r.suite_name != plan.suite.name || r.suite_version != plan.suite.version {
        return Err(mismatch(
            shard,
            "suite",
            format!("{} v{}", plan.suite.name, plan.suite.version),
            format!("{} v{}", r.suite_name, r.suite_version),
        ));
    }
    if r.profile != plan.profile {
        return Err(mismatch(shard, "profile", &plan.profile, &r.profile));
    }
    if r.environment.runner_class != plan.runner_class {
        return Err(mismatch(
            shard,
            "environment.runner_class",
            &plan.runner_class,
            &r.environment.runner_class,
        ));
    }
    let Some(want) = plan.targets_of(shard) else {
        return Err(MergeError {
            shard,
            message: format!("the plan has {} shards", plan.shards),
        });
    };
    let mut found: Vec<&str> = r.targets.iter().map(|t| t.key.as_str()).collect();
    found.sort_unstable();
    let mut expected: Vec<&str> = want.iter().map(String::as_str).collect();
    expected.sort_unstable();
    if found != expected {
        return Err(mismatch(shard, "targets", expected, found));
    }
    if let Some(n) = plan.class.as_ref().and_then(|c| c.device_count)
        && r.environment.backend == "cuda"
        && r.environment.device_names.len() != n as usize
    {
        return Err(mismatch(
            shard,
            "environment.device_names (the class's device_count)",
            n,
            r.environment.device_names.len(),
        ));
    }
    Ok(())
}

/// The header fields every shard's results must share (sampling knobs, seed, gate).
fn header(r: &ResultsFile) -> serde_json::Value {
    serde_json::json!({
        "schema_version": r.schema_version,
        "backend": r.backend,
        "seed": r.seed,
        "min_speedup": r.min_speedup,
        "warmup": r.warmup,
        "iterations": r.iterations,
        "max_rounds": r.max_rounds,
        "min_sample_ms": r.min_sample_ms,
        "precision_pct": r.precision_pct,
        "budget_s": r.budget_s,
    })
}

/// The combined results of the delivered shards (`(shard, results)`, any order): each checked by
/// [`check_results`]; every shard's environment key (backend, device models, profile, clock,
/// runner class) and header the same; the header of the lowest shard, the earliest timestamp,
/// the common environment (runner names sorted and joined, device UUIDs in shard order), the
/// targets in suite order.
pub(crate) fn merge_results(
    plan: &Plan,
    suite: &Suite,
    delivered: &[(u32, ResultsFile)],
) -> Result<ResultsFile, MergeError> {
    let mut sorted: Vec<&(u32, ResultsFile)> = delivered.iter().collect();
    sorted.sort_by_key(|(k, _)| *k);
    let Some((first_k, first)) = sorted.first().map(|(k, r)| (*k, r)) else {
        return Err(MergeError {
            shard: 0,
            message: "no shard delivered results".into(),
        });
    };
    let key = first.environment.key();
    let head = header(first);
    for (k, r) in &sorted {
        check_results(plan, *k, r)?;
        if r.environment.key() != key {
            return Err(MergeError {
                shard: *k,
                message: format!(
                    "environment key {:?} differs from shard {first_k}'s {key:?}: the shards did not measure on compatible machines",
                    r.environment.key()
                ),
            });
        }
        if header(r) != head {
            return Err(MergeError {
                shard: *k,
                message: format!(
                    "results header {} differs from shard {first_k}'s {head}",
                    header(r)
                ),
            });
        }
    }
    let mut merged = first.clone();
    merged.timestamp = sorted
        .iter()
        .map(|(_, r)| r.timestamp.as_str())
        .min_by_key(|t| {
            chrono::DateTime::parse_from_rfc3339(t)
                .map(|d| d.timestamp_millis())
                .unwrap_or(i64::MAX)
        })
        .unwrap_or(&first.timestamp)
        .to_string();
    let mut runners: Vec<&str> = sorted
        .iter()
        .filter_map(|(_, r)| r.environment.runner.as_deref())
        .collect();
    runners.sort_unstable();
    runners.dedup();
    merged.environment.runner = (!runners.is_empty()).then(|| runners.join(", "));
    let mut uuids: Vec<String> = Vec::new();
    for (_, r) in &sorted {
        for u in &r.environment.device_uuids {
            if !uuids.contains(u) {
                uuids.push(u.clone());
            }
        }
    }
    merged.environment.device_uuids = uuids;
    let order = super::plan::suite_order(suite);
    let mut targets: Vec<_> = sorted.iter().flat_map(|(_, r)| r.targets.clone()).collect();
    targets.sort_by_key(|t| order.get(t.key.as_str()).copied().unwrap_or(usize::MAX));
    merged.targets = targets;
    Ok(merged)
}

/// The night's one side-by-side block from the shards' blocks (shard order): None when no shard
/// suspected anything; else the first block's `enabled`, `reason` and commits, and every shard's
/// checks in the order of `suspects` (the whole comparison's), a check of an unlisted target
/// last. Every block must name the same commits.
pub(crate) fn merge_side_by_side(
    blocks: &[(u32, SideBySideBlock)],
    suspects: &[Suspect],
) -> Result<Option<SideBySideBlock>, MergeError> {
    let Some((first_k, first)) = blocks.first() else {
        return Ok(None);
    };
    // The reason of the first shard that compared (else of the first shard): a shard that had
    // nothing it could compare does not turn the night's comparisons off.
    let base = blocks
        .iter()
        .map(|(_, b)| b)
        .find(|b| b.enabled)
        .unwrap_or(first);
    let mut merged = SideBySideBlock {
        checks: Vec::new(),
        ..base.clone()
    };
    for (k, b) in blocks {
        if (&b.anchor_commit, &b.current_commit) != (&first.anchor_commit, &first.current_commit) {
            return Err(MergeError {
                shard: *k,
                message: format!(
                    "side_by_side compared {:?} with {:?}, shard {first_k} {:?} with {:?}",
                    b.current_commit, b.anchor_commit, first.current_commit, first.anchor_commit
                ),
            });
        }
        merged.checks.extend(b.checks.iter().cloned());
    }
    let pos = |target: &str| {
        suspects
            .iter()
            .position(|s| s.target == target)
            .unwrap_or(usize::MAX)
    };
    merged.checks.sort_by_key(|c| pos(&c.target));
    Ok(Some(merged))
}

#[cfg(test)]
mod tests;
