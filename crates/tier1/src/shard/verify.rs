//! The provenance of one shard's package (docs/sharding.md §4, check 3-5): its manifest, results
//! and record must name the plan's run, shard, plan digest, clean commit, suite (name, version,
//! config digest), profile and runner class; the results must validate and hold exactly the
//! shard's targets; every attestation record must have passed; each recorded recheck row must be
//! the one its recheck's results give, and each side-by-side record the one its outcome states.
//! Any mismatch refuses the night (integrity, exit 4).

use super::error::ShardError;
use super::fetch::Fetched;
use crate::bench::result::{self, ResultsFile};
use crate::evidence::manifest::{Manifest, ManifestShard};
use crate::recheck::recheck_run_id;
use crate::shards::Plan;
use crate::shards::layout::shard_dir;
use crate::shards::merge::check_results;
use crate::shards::record::{SHARD_FILE, SHARD_SCHEMA, ShardRecord};
use crate::suite::Suite;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// One shard's verified files.
#[derive(Debug, Clone)]
pub(crate) struct Verified {
    /// The shard.
    pub(crate) shard: u32,
    /// Its results.
    pub(crate) results: ResultsFile,
    /// Its record.
    pub(crate) record: ShardRecord,
    /// Its manifest's attestation records.
    pub(crate) attestation: Option<Value>,
}

fn integrity(shard: u32, what: &str, message: impl std::fmt::Display) -> ShardError {
    ShardError::Integrity(format!("shard {shard}: {what}: {message}"))
}

fn read<T: DeserializeOwned>(root: &Path, rel: &str, shard: u32) -> Result<T, ShardError> {
    crate::json::read(&root.join(rel)).map_err(|e| integrity(shard, rel, e))
}

fn expect<T: PartialEq + std::fmt::Debug>(
    shard: u32,
    what: &str,
    expected: T,
    found: T,
) -> Result<(), ShardError> {
    if expected == found {
        return Ok(());
    }
    Err(integrity(
        shard,
        what,
        format!("expected {expected:?} (the plan's), found {found:?}"),
    ))
}

/// Verify one fetched shard against `plan`.
pub(crate) fn verify(f: &Fetched, plan: &Plan, suite: &Suite) -> Result<Verified, ShardError> {
    verify_at(&f.root, f.shard, plan, suite)
}

/// Verify shard `k`'s files under the evidence root `root` against `plan`: its manifest, its
/// results, its record, the record's rechecks and side-by-side checks, in that order.
pub(crate) fn verify_at(
    root: &Path,
    k: u32,
    plan: &Plan,
    suite: &Suite,
) -> Result<Verified, ShardError> {
    let dir = shard_dir(&plan.run_id, k);
    let keys = plan.targets_of(k).unwrap_or_default().to_vec();
    let m: Manifest = read(root, &format!("{dir}/manifest.json"), k)?;
    let results_rel = format!("{dir}/{}", result::RESULTS_REL_PATH);
    check_manifest(&m, k, plan, &keys, &results_rel)?;
    if let Some(name) = failed_attestation(m.attestation.as_ref()) {
        return Err(integrity(
            k,
            "manifest attestation",
            format!(
                "record {name:?} did not pass: a shard measured on a runner that failed its attestation"
            ),
        ));
    }
    let results: ResultsFile = read(root, &results_rel, k)?;
    result::validate(&results).map_err(|e| integrity(k, &results_rel, e))?;
    check_results(plan, k, &results).map_err(|e| ShardError::Integrity(e.to_string()))?;
    expect(
        k,
        "results environment",
        &m.environment,
        &results.environment,
    )?;
    let record: ShardRecord = read(root, &format!("{dir}/{SHARD_FILE}"), k)?;
    check_record(&record, k, plan, &keys)?;
    check_rechecks(root, &record, k, plan, suite, &keys)?;
    check_side_by_side(root, &record, k, plan, suite, &keys)?;
    Ok(Verified {
        shard: k,
        results,
        record,
        attestation: m.attestation,
    })
}

/// The manifest names the plan's run, shard (with its targets `keys`), clean commit, suite,
/// profile and runner class, and the results at `results_rel`.
fn check_manifest(
    m: &Manifest,
    k: u32,
    plan: &Plan,
    keys: &[String],
    results_rel: &str,
) -> Result<(), ShardError> {
    expect(
        k,
        "manifest run_id",
        Some(plan.run_id.as_str()),
        m.run_id.as_deref(),
    )?;
    expect(
        k,
        "manifest shard",
        Some(&ManifestShard {
            shard: k,
            shards: plan.shards,
            plan_digest: plan.digest(),
            targets: keys.to_vec(),
        }),
        m.shard.as_ref(),
    )?;
    expect(
        k,
        "manifest git",
        (Some(plan.commit.as_str()), Some(false)),
        (m.git.commit.as_deref(), m.git.dirty),
    )?;
    expect(
        k,
        "manifest suite",
        (
            plan.suite.name.as_str(),
            plan.suite.version,
            plan.suite.config_digest.as_str(),
            plan.profile.as_str(),
        ),
        (
            m.suite.name.as_str(),
            m.suite.version,
            m.suite.config_digest.as_str(),
            m.suite.profile.as_str(),
        ),
    )?;
    expect(
        k,
        "manifest runner_class",
        plan.runner_class.as_deref(),
        m.runner_class.as_deref(),
    )?;
    expect(
        k,
        "manifest files.results_json",
        &results_rel.to_string(),
        &m.files.results_json,
    )
}

/// The name of the first attestation record of the manifest that did not pass, if any (a shard
/// measured on a runner that failed its attestation).
fn failed_attestation(attestation: Option<&Value>) -> Option<&str> {
    let Some(Value::Object(records)) = attestation else {
        return None;
    };
    records
        .iter()
        .find(|(_, rec)| rec.get("passed").and_then(Value::as_bool) == Some(false))
        .map(|(name, _)| name.as_str())
}

/// The record's schema and identity are the plan's: run, shard, plan digest, runner class,
/// commit, targets and anchor.
fn check_record(
    record: &ShardRecord,
    k: u32,
    plan: &Plan,
    keys: &[String],
) -> Result<(), ShardError> {
    expect(k, "shard.json schema", SHARD_SCHEMA, record.schema.as_str())?;
    let keys = keys.to_vec();
    expect(
        k,
        "shard.json identity",
        (
            plan.run_id.as_str(),
            k,
            plan.shards,
            plan.digest(),
            plan.runner_class.as_deref(),
            plan.commit.as_str(),
            &keys,
            plan.anchor_run_id.as_deref(),
        ),
        (
            record.run_id.as_str(),
            record.shard,
            record.shards,
            record.plan_digest.clone(),
            record.runner_class.as_deref(),
            record.commit.as_str(),
            &record.targets,
            record.anchor_run_id.as_deref(),
        ),
    )
}

/// Each recorded recheck is of a target of the shard, at its recheck's results, and its pooled
/// row (if any) is the one those results give.
fn check_rechecks(
    root: &Path,
    record: &ShardRecord,
    k: u32,
    plan: &Plan,
    suite: &Suite,
    keys: &[String],
) -> Result<(), ShardError> {
    for rc in &record.rechecks {
        if !keys.contains(&rc.key) {
            return Err(integrity(
                k,
                "shard.json rechecks",
                format!("{:?} is not a target of this shard", rc.key),
            ));
        }
        let want = crate::evidence::results_rel(&recheck_run_id(&plan.run_id, &rc.key));
        expect(
            k,
            "shard.json recheck_output_json",
            &want,
            &rc.recheck_output_json,
        )?;
        let Some(row) = &rc.row else { continue };
        let r: ResultsFile = read(root, &want, k)?;
        let derived = result::summarize(&r, suite)
            .map_err(|e| integrity(k, &want, e))?
            .into_iter()
            .find(|t| t.target == rc.target);
        if derived.as_ref() != Some(row) {
            return Err(integrity(
                k,
                "shard.json rechecks",
                format!(
                    "the pooled row of {} differs from the one its recheck's results give",
                    rc.key
                ),
            ));
        }
    }
    Ok(())
}

/// The record's side-by-side block is consistent, of the suite's targets of this shard, and each
/// check is the one its outcome's evidence states.
fn check_side_by_side(
    root: &Path,
    record: &ShardRecord,
    k: u32,
    plan: &Plan,
    suite: &Suite,
    keys: &[String],
) -> Result<(), ShardError> {
    let Some(block) = &record.side_by_side else {
        return Ok(());
    };
    block
        .check()
        .map_err(|e| integrity(k, "shard.json side_by_side", e))?;
    for c in &block.checks {
        if !suite.target(&c.key).is_some_and(|_| keys.contains(&c.key)) {
            return Err(integrity(
                k,
                "shard.json side_by_side",
                format!("{:?} is not a target of this shard", c.key),
            ));
        }
        crate::evidence::refs::check_side_by_side(root, &plan.run_id, c)
            .map_err(|e| integrity(k, "side-by-side evidence", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_attestation_rows() {
        let rows: [(Option<Value>, Option<&str>); 6] = [
            (None, None),
            (Some(Value::Null), None),
            (Some(serde_json::json!({})), None),
            (
                Some(serde_json::json!({"gpu": {"passed": true}, "cpu": {}})),
                None,
            ),
            (
                Some(serde_json::json!({"gpu": {"passed": true}, "clock": {"passed": false}})),
                Some("clock"),
            ),
            (Some(serde_json::json!({"gpu": {"passed": "false"}})), None),
        ];
        for (attestation, want) in rows {
            assert_eq!(
                failed_attestation(attestation.as_ref()),
                want,
                "{attestation:?}"
            );
        }
    }

    #[test]
    fn expect_rows() {
        assert!(expect(2, "x", 1, 1).is_ok());
        match expect(2, "manifest run_id", Some("a"), Some("b")) {
            Err(ShardError::Integrity(m)) => assert_eq!(
                m,
                "shard 2: manifest run_id: expected Some(\"a\") (the plan's), found Some(\"b\")"
            ),
            other => panic!("{other:?}"),
        }
    }
}
