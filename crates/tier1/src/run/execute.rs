//! One harness invocation with its results and manifest, and the rechecks of flagged targets.

use super::{RunError, RunRequest};
use crate::bench::harness::{self, HarnessError};
use crate::bench::options::{HarnessOptions, PassSeconds};
use crate::bench::result::{self, ResultsFile};
use crate::evidence::manifest::{
    MANIFEST_SCHEMA_VERSION, Manifest, ManifestFiles, ManifestShard, SuiteRecord, Toolchain,
};
use crate::evidence::{self, EvidenceError};
use crate::history::model::RegressionSummary;
use crate::recheck::{self, RecheckResult};

/// Run the harness (optionally a subset) in `passes` passes, write results and manifest under
/// `<evidence>/<run_id>/`; with each target's seconds per pass.
pub(super) fn execute(
    req: &RunRequest<'_>,
    run_id: &str,
    only: &[String],
    recheck_of: Option<&str>,
    passes: u32,
) -> Result<(ResultsFile, Vec<PassSeconds>), RunError> {
    let mut opts = HarnessOptions::new(&req.profile, run_id);
    opts.only = only.to_vec();
    opts.hook = req.hook.clone();
    opts.passes = passes;
    let (mut results, seconds) = harness::run_suite_timed(req.suite, req.backend.clone(), &opts)?;
    results.environment.runner_class = req.runner_class.clone();
    // A shard's own measurement lies in `<run_id>/shards/<K>/` (its rechecks in their own
    // directories, as a single run's).
    let shard = req.shard.as_ref().filter(|_| recheck_of.is_none());
    let rel = match shard {
        Some(s) => crate::shards::layout::shard_dir(run_id, s.shard),
        None => run_id.to_string(),
    };
    let dir = req.evidence_root.join(&rel);
    harness::write_results(&dir, &results)?;
    let manifest = Manifest {
        schema_version: MANIFEST_SCHEMA_VERSION,
        run_id: Some(run_id.to_string()),
        recheck_of: recheck_of.map(str::to_string),
        created_at: results.timestamp.clone(),
        git: req.git.clone(),
        suite: SuiteRecord {
            name: req.suite.suite_name.clone(),
            version: req.suite.version,
            config_digest: req.suite.config_digest().to_string(),
            profile: req.profile.clone(),
        },
        toolchain: Toolchain::current(),
        environment: results.environment.clone(),
        attestation: req.attestation.clone(),
        files: ManifestFiles {
            results_json: evidence::results_rel(&rel),
            report_md: evidence::report_rel(&rel),
        },
        runner_class: req.runner_class.clone(),
        shard: shard.map(|s| ManifestShard {
            shard: s.shard,
            shards: s.shards,
            plan_digest: s.plan_digest.clone(),
            targets: s.keys.clone(),
        }),
        shards: None,
    };
    let path = dir.join(evidence::MANIFEST_FILE);
    crate::json::write(&path, &manifest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&dir);
        EvidenceError::json_write(e)
    })?;
    Ok((results, seconds))
}

/// Re-execute each target with a speed or latency regression or an unknown verdict once, as
/// `<run_id>__recheck__<key>`, except the targets in `compared` (compared side by side
/// instead); the seconds each recheck took are added to `seconds` (target key, seconds).
pub(super) fn run_rechecks(
    req: &RunRequest<'_>,
    first: &RegressionSummary,
    compared: &[String],
    seconds: &mut Vec<(String, f64)>,
) -> Result<Vec<RecheckResult>, RunError> {
    let mut out = Vec::new();
    for target in recheck::targets_to_recheck(first) {
        if compared.contains(&target) {
            continue;
        }
        let Some(t) = req.suite.targets.iter().find(|t| t.target == target) else {
            continue;
        };
        // A shard rechecks its own targets only (the others are missing in its view).
        if req.shard.as_ref().is_some_and(|s| !s.keys.contains(&t.key)) {
            continue;
        }
        let id = recheck::recheck_run_id(&req.run_id, &t.key);
        crate::gha::group(&format!("Recheck {}", t.key));
        tracing::debug!(target = %t.key, recheck = %id, "measuring once more, pooled with the first measurement (a suspected regression or an unknown verdict)");
        let started = std::time::Instant::now();
        let r = execute(req, &id, std::slice::from_ref(&t.key), Some(&req.run_id), 1);
        crate::gha::endgroup();
        seconds.push((t.key.clone(), started.elapsed().as_secs_f64()));
        let row = match r {
            Ok((results, _)) => result::summarize(&results, req.suite)?
                .into_iter()
                .find(|s| s.target == target),
            Err(e @ RunError::Harness(HarnessError::Cancelled(..))) => return Err(e),
            Err(e) => {
                tracing::warn!(target = %t.key, error = %e, "recheck failed to run; the regression stands");
                None
            }
        };
        out.push(RecheckResult {
            target,
            key: t.key.clone(),
            recheck_output_json: evidence::results_rel(&id),
            row,
        });
    }
    Ok(out)
}
