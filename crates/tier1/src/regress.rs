//! Comparison of a run against the accepted anchor: the reference rules of `compare_suite_summaries`
//! (status, speedup, optimized latency with the absolute floor, memory savings points, optimized
//! memory, new and missing targets, anchor declines). (Interface fixed; the owner fills it in.)

use crate::history::model::{RegressionSummary, Summary};
use crate::suite::Thresholds;

/// Compare `current` with `anchor` (None when no eligible anchor exists).
pub fn compare(
    current: &Summary,
    anchor: Option<&Summary>,
    thresholds: &Thresholds,
) -> RegressionSummary {
    let _ = (anchor, thresholds);
    RegressionSummary {
        baseline_run_id: None,
        current_run_id: Some(current.run_id.clone()),
        regressions: vec![],
        improvements: vec![],
        anchor_declines: vec![],
        new_targets: current.targets.clone(),
        missing_targets: vec![],
        warnings: vec!["regression engine not implemented yet".into()],
        suppressed_regressions: vec![],
        rechecks: vec![],
        regression_rechecks_path: None,
        extra: Default::default(),
    })
}
