//! An anchor measured in passes: the suite is run `anchor_passes` times (every target in each
//! pass, so one target's passes are minutes apart; a command target starts new processes each
//! time), and each target's passes are merged into one result whose samples are the passes'
//! samples one after the other, with a [`PassRecord`] per pass. The estimates are derived from
//! the merged file ([`crate::bench::estimate::pooled`]), so a validator recomputes them.

use crate::bench::pass_record::PassRecord;
use crate::bench::result::{Sampling, TargetFailure, TargetResult, VariantResult};
use crate::bench::stats::Stats;

/// Merge one target's passes (`first`, then `rest` in order) into one result. A pass that failed
/// fails the target (its failure, naming the pass); passes whose variants differ in names fail
/// it too.
pub(crate) fn merge(first: TargetResult, rest: Vec<TargetResult>) -> TargetResult {
    if rest.is_empty() {
        return first;
    }
    let mut passes = vec![first];
    passes.extend(rest);
    let n = passes.len();
    let mut merged = passes[0].clone();
    if let Some((i, f)) = passes
        .iter()
        .enumerate()
        .find_map(|(i, p)| p.failure.as_ref().map(|f| (i, f)))
    {
        merged.failure = Some(TargetFailure {
            status: f.status.clone(),
            message: format!("pass {} of {n}: {}", i + 1, f.message),
        });
        return merged;
    }
    let names = |p: &TargetResult| {
        p.variants
            .iter()
            .map(|v| v.name.clone())
            .collect::<Vec<_>>()
    };
    let first = names(&passes[0]);
    if let Some((i, other)) = passes
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, p)| (i, names(p)))
        .find(|(_, other)| *other != first)
    {
        merged.failure = Some(TargetFailure {
            status: crate::bench::result::status::FAILED_ERROR.into(),
            message: format!(
                "pass {} of {n} measured variants {other:?}, pass 1 measured {first:?}",
                i + 1
            ),
        });
        return merged;
    }
    let records: Vec<PassRecord> = passes.iter().map(record).collect();
    for (j, v) in merged.variants.iter_mut().enumerate() {
        let all: Vec<&VariantResult> = passes.iter().map(|p| &p.variants[j]).collect();
        v.samples_ms = all.iter().flat_map(|x| x.samples_ms.clone()).collect();
        if let Some(s) = Stats::of(&v.samples_ms) {
            v.stats = s;
        }
        v.memory_peak_bytes = all.iter().filter_map(|x| x.memory_peak_bytes).max();
        if let Some(failed) = all
            .iter()
            .filter_map(|x| x.verification.as_ref())
            .find(|ver| !ver.passed)
        {
            v.verification = Some(failed.clone());
        }
    }
    let samplings: Vec<&Sampling> = passes.iter().filter_map(|p| p.sampling.as_ref()).collect();
    if let Some(s) = merged.sampling.as_mut() {
        s.rounds = records.iter().map(|r| r.rounds).sum();
        s.processes = records.iter().map(|r| r.processes).sum();
        s.budget_exhausted = records.iter().any(|r| r.budget_exhausted);
        s.remeasured = samplings.iter().any(|x| x.remeasured);
        s.throttled = samplings.iter().flat_map(|x| x.throttled.clone()).collect();
        s.throttled.sort();
        s.throttled.dedup();
        s.machine = samplings.iter().flat_map(|x| x.machine.clone()).collect();
        s.passes = records;
    }
    merged
}

fn record(p: &TargetResult) -> PassRecord {
    let s = p.sampling.as_ref();
    let rounds = s.map_or(0, |s| s.rounds);
    let counts: Vec<u32> = p
        .variants
        .iter()
        .map(|v| u32::try_from(v.samples_ms.len()).unwrap_or(u32::MAX))
        .collect();
    PassRecord {
        rounds,
        samples: if counts.iter().all(|&c| c == rounds) {
            Vec::new()
        } else {
            counts
        },
        processes: s.map_or(0, |s| s.processes),
        repetitions: p.variants.iter().map(|v| v.repetitions).collect(),
        order_seed: s.map_or(0, |s| s.order_seed),
        budget_exhausted: s.is_some_and(|s| s.budget_exhausted),
    }
}
