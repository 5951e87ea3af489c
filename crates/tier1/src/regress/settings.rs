//! A target whose measurement settings changed since the anchor (`crate::history::settings`)
//! is not compared with it: its figures measure something else (another timer, repetition count,
//! shape...), so a difference is neither a regression nor noise. It gets no change rows, the
//! verdict `unknown` (the gate's `on_unknown` rule applies, and the run is never an anchor by
//! normal publication) and a reason naming each changed setting with the anchor's and the
//! current value, asking for a new anchor. A status change still counts (a target that stopped
//! running is not a settings question), and rows without a settings record (older summaries) are
//! compared as before.

use crate::aggregate::SUCCEEDED;
use crate::history::model::TargetSummary;
use crate::history::settings::describe;
use crate::history::{DetectionMethod, Inconclusive, TargetDetection, Verdict};

/// The detection record and inconclusive entry of `cur` when its settings differ from the
/// anchor row `prev`'s (it then has no change rows), else `None`.
pub(crate) fn changed(
    cur: &TargetSummary,
    prev: &TargetSummary,
    method: DetectionMethod,
) -> Option<(TargetDetection, Inconclusive)> {
    if cur.status != SUCCEEDED || prev.status != SUCCEEDED {
        return None;
    }
    let changes = cur
        .measurement_settings
        .as_ref()?
        .changes_from(prev.measurement_settings.as_ref()?);
    if changes.is_empty() {
        return None;
    }
    let reason = describe(&changes);
    let record = TargetDetection {
        method,
        verdict: Some(Verdict::Unknown),
        settings_changed: changes,
        ..TargetDetection::reference(&cur.target, reason.clone())
    };
    let inconclusive = Inconclusive {
        target: cur.target.clone(),
        reason,
        speedup_half_width_pct: None,
    };
    Some((record, inconclusive))
}
