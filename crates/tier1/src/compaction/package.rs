//! Writing a history package (publication and promotion): stage the base tree and the new runs,
//! compact when the policy says so, write the trend snapshots and the index, then ask
//! [`would_restore_accept`] before the staged tree is renamed into place. On any refusal or
//! failure nothing is written to the destination.

use super::{Policy, keep, plan as plan_ranges, seal_ranges};
use crate::exit::{Classify, Exit};
use crate::history::error::HistoryError;
use crate::history::model::Index;
use crate::history::package::{IndexDoc, finish_tree, stage_tree};
use crate::history::trend;
use crate::history_check::restorable::{
    Footprint, PackageRefused, live_footprint, would_restore_accept,
};
use serde::Serialize;
use std::path::Path;

/// Why a package was not written.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The history could not be compacted (a run's files unreadable or malformed).
    #[error("compaction: {0}")]
    History(#[from] HistoryError),
    /// Restore would refuse the package.
    #[error(transparent)]
    Refused(#[from] PackageRefused),
    /// Writing the staged tree failed.
    #[error("{path}: {source}")]
    Io {
        /// The output root.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Classify for PackageError {
    fn exit(&self) -> Exit {
        match self {
            PackageError::History(e) => e.exit(),
            PackageError::Refused(e) => e.exit(),
            PackageError::Io { source, .. } => crate::exit::of_io(source),
        }
    }
}

/// What to write.
pub struct PackagePlan<'a> {
    /// The output root (absent or empty).
    pub dest: &'a Path,
    /// The live tree the package starts from (hard-linked), if any.
    pub base: Option<&'a Path>,
    /// Run directories copied in: (source root, run id).
    pub runs: Vec<(&'a Path, &'a str)>,
    /// The index with the new row appended (not yet compacted).
    pub doc: IndexDoc,
    /// The trend snapshots to rewrite, given the final index (they are built from it).
    pub trend_paths: &'a dyn Fn(&Index) -> Vec<String>,
    /// When to compact.
    pub policy: Policy,
}

impl std::fmt::Debug for PackagePlan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackagePlan")
            .field("dest", &self.dest)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    /// Runs in the history (live and sealed).
    pub(crate) run_count: usize,
    /// Live runs.
    pub(crate) live_run_count: usize,
    /// Sealed segments.
    pub(crate) segment_count: usize,
    /// Segments this write sealed.
    pub(crate) segments_sealed: Vec<String>,
    /// Runs this write sealed.
    pub(crate) runs_sealed: usize,
    /// Files of the package.
    pub(crate) members: usize,
    /// Their summed size.
    pub(crate) expanded_bytes: u64,
}

/// Write the package of `plan` (see the module documentation).
pub fn write_package(plan: PackagePlan<'_>) -> Result<PackageReport, PackageError> {
    let io = |source| PackageError::Io {
        path: plan.dest.display().to_string(),
        source,
    };
    let stage = stage_tree(plan.dest, plan.base, &plan.runs).map_err(io)?;
    let mut doc = plan.doc;
    let live: Footprint = live_footprint(stage.path()).map_err(io)?;
    let mut sealed = super::Sealed::default();
    if plan.policy.needs_compaction(doc.index.runs.len(), live) {
        let pinned = keep::pinned_rows(
            stage.path(),
            &doc.index.runs,
            plan.policy.window,
            plan.policy.tail,
        )?;
        let ranges = plan_ranges(&doc, &pinned)?;
        let sealable: usize = ranges.iter().map(ExactSizeIterator::len).sum();
        if plan.policy.seals(sealable, live) {
            sealed = seal_ranges(stage.path(), &mut doc, &ranges)?;
            tracing::info!(
                segments = sealed.segments.len(),
                runs = sealed.run_ids.len(),
                "compacted the history into sealed segments"
            );
        } else {
            tracing::info!(
                sealable,
                min_batch = plan.policy.min_batch,
                "compaction due, but fewer runs can be sealed than one batch: they stay live until more can"
            );
        }
    }
    if doc.needs_record_items() {
        doc.make_records_items(stage.path())?;
    }
    let snapshot = trend::build(&doc.index);
    let trends: Vec<_> = (plan.trend_paths)(&doc.index)
        .into_iter()
        .map(|p| (p, snapshot.clone()))
        .collect();
    finish_tree(stage.path(), &trends, &doc).map_err(io)?;
    let f = would_restore_accept(stage.path())?;
    stage.commit().map_err(io)?;
    Ok(PackageReport {
        run_count: doc.total_run_count(),
        live_run_count: doc.index.runs.len(),
        segment_count: doc.index.segments.len(),
        segments_sealed: sealed.segments,
        runs_sealed: sealed.run_ids.len(),
        members: f.members,
        expanded_bytes: f.expanded_bytes,
    })
}
