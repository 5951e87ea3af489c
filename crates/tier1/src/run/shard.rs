//! One shard of a sharded night (docs/sharding.md §3): the producer step for the shard's targets
//! only, as run `run_id`, under `<run_id>/shards/<K>/`: measure, compare with the anchor (the
//! other targets are `missing` in the shard's view, which changes no measured target's verdict),
//! recheck its flagged targets, compare its own suspects side by side, and write its record
//! (`shard.json`). No gate and no history: the combine step decides the night.

use super::execute::execute;
use super::step::{anchor_passes, preflight};
use super::{RunError, RunRequest, build_summary, report, side_by_side};
use crate::history::HistoryError;
use crate::json::Finite;
use crate::regress;
use crate::regress::noise::NoiseHistory;
use crate::shards::layout::shard_dir;
use crate::shards::record::{RecordedRecheck, SHARD_FILE, SHARD_SCHEMA, ShardRecord};

/// Measure the shard `req.shard` names; returns its record (also written as `shard.json`).
pub(crate) fn measure_shard(req: &RunRequest<'_>) -> Result<ShardRecord, RunError> {
    let Some(placement) = req.shard.as_ref() else {
        return Err(RunError::History(HistoryError::structural(
            SHARD_FILE,
            "measure_shard needs a shard placement",
        )));
    };
    let started = std::time::Instant::now();
    let night = side_by_side::NightBudget::start(req);
    let anchor = preflight(req)?;
    let passes = anchor_passes(req, anchor.is_none());
    crate::gha::group(&format!(
        "Tier-1 shard {} of {}: profile {}",
        placement.shard, placement.shards, req.profile
    ));
    let results = execute(req, &req.run_id, &placement.keys, None, passes);
    crate::gha::endgroup();
    // The phases' seconds are the shard job's own; the combined run records none.
    let (results, _seconds) = results?;
    let summary = build_summary(req.suite, &results, &req.git, None)?;
    let th = req.suite.threshold_book();
    let noise = match &anchor {
        Some(_) => NoiseHistory::for_run(&req.history_root, req.suite, &summary)?,
        None => NoiseHistory::default(),
    };
    let first = regress::compare_in(&summary, anchor.as_ref(), &th, &noise)?;
    let own = |target: &str| {
        req.suite
            .targets
            .iter()
            .any(|t| t.target == target && placement.keys.contains(&t.key))
    };
    let (checked, block, comparison) = match &anchor {
        Some(a) => {
            let c = super::confirm_night::recheck_and_confirm(
                req,
                first,
                &summary,
                a,
                &noise,
                &night,
                &own,
                &mut Vec::new(),
            )?;
            (c.checked, c.block, c.comparison)
        }
        None => (Vec::new(), None, first),
    };
    let dir = req
        .evidence_root
        .join(shard_dir(&req.run_id, placement.shard));
    report::write(&dir, &summary, &comparison, &results)?;
    let record = ShardRecord {
        schema: SHARD_SCHEMA.into(),
        run_id: req.run_id.clone(),
        shard: placement.shard,
        shards: placement.shards,
        plan_digest: placement.plan_digest.clone(),
        runner_class: req.runner_class.clone(),
        commit: req.git.commit.clone().unwrap_or_default(),
        targets: placement.keys.clone(),
        anchor_run_id: anchor.as_ref().map(|a| a.run_id.clone()),
        rechecks: checked.iter().map(RecordedRecheck::from).collect(),
        side_by_side: block,
        seconds: Finite::from(started.elapsed().as_secs_f64()),
    };
    crate::json::write(&dir.join(SHARD_FILE), &record)
        .map_err(crate::evidence::EvidenceError::json_write)?;
    Ok(record)
}
