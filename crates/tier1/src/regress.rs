//! Comparison of a run against the accepted anchor: the reference rules of `compare_suite_summaries`
//! (status, speedup, optimized latency with the absolute floor, memory savings points, optimized
//! memory, new and missing targets, anchor declines). (Interface fixed; the owner fills it in.)

use crate::exit::{Classify, Exit};
use crate::history::model::{RegressionSummary, Summary};
use crate::suite::Thresholds;

/// A comparison that must not be computed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegressError {
    /// The two runs were measured in different environments (backend, device model, profile).
    #[error(
        "refusing to compare run {current} with anchor {anchor}: environment {found:?} differs from the anchor's {expected:?}"
    )]
    EnvironmentMismatch {
        /// Current run id.
        current: String,
        /// Anchor run id.
        anchor: String,
        /// The anchor's environment key.
        expected: String,
        /// The current run's environment key.
        found: String,
    },
}

impl Classify for RegressError {
    fn exit(&self) -> Exit {
        Exit::Invalid
    }
}

/// Compare `current` with `anchor` (None when no eligible anchor exists).
pub fn compare(
    current: &Summary,
    anchor: Option<&Summary>,
    thresholds: &Thresholds,
) -> Result<RegressionSummary, RegressError> {
    let _ = (anchor, thresholds);
    Ok(RegressionSummary {
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
