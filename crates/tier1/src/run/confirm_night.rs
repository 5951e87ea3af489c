//! After a night's first comparison with the anchor: the suspected targets are compared side by
//! side with the anchor's own code when side by side can run (then they are not rechecked: the
//! interleaved comparison decides what a recheck against the same recorded anchor figures would
//! only repeat, at the cost of another target budget each: issue 37 measured a newcomer's second
//! night spending 54 s of its 226 s on rechecks of targets that side by side then decided);
//! where it cannot run (turned off, the anchor's commit unreachable, a dirty checkout), each is
//! rechecked once and pooled, as the reference does (docs/regression-model.md §3, §3b).

use super::execute::run_rechecks;
use super::side_by_side::{self, Availability, NightBudget};
use super::{RunError, RunRequest};
use crate::confirmation::{self, Suspect};
use crate::history::SideBySideBlock;
use crate::history::model::{RegressionSummary, Summary};
use crate::recheck::{self, RecheckResult};
use crate::regress::noise::NoiseHistory;

/// What the rechecks and the side-by-side comparisons gave.
pub(crate) struct Confirmed {
    /// The rechecks that ran.
    pub(crate) checked: Vec<RecheckResult>,
    /// The side-by-side block (None when nothing was suspected).
    pub(crate) block: Option<SideBySideBlock>,
    /// The comparison with both applied.
    pub(crate) comparison: RegressionSummary,
}

/// Recheck and compare side by side the suspects of `first` (the comparison of `summary` with
/// `anchor`) that `own` holds (a shard's own targets; every target otherwise); the seconds of
/// each recheck are added to `seconds`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recheck_and_confirm(
    req: &RunRequest<'_>,
    first: RegressionSummary,
    summary: &Summary,
    anchor: &Summary,
    noise: &NoiseHistory,
    night: &NightBudget,
    own: &dyn Fn(&str) -> bool,
    seconds: &mut Vec<(String, f64)>,
) -> Result<Confirmed, RunError> {
    let blind_too = confirmation::blind_too(req.suite);
    let suspected = |c: &RegressionSummary| -> Vec<Suspect> {
        confirmation::suspected(c, summary, &blind_too)
            .into_iter()
            .filter(|s| own(&s.target))
            .collect()
    };
    let first_suspects = suspected(&first);
    let mut available = (!first_suspects.is_empty()).then(|| Availability::of(req, anchor));
    let compared: Vec<String> = match &available {
        Some(a) if a.runs() => first_suspects.into_iter().map(|s| s.target).collect(),
        _ => Vec::new(),
    };
    let checked = run_rechecks(req, &first, &compared, seconds)?;
    let th = req.suite.threshold_book();
    let rechecked = recheck::apply(first, summary, anchor, &checked, &th, noise);
    let suspects = suspected(&rechecked);
    if available.is_none() && !suspects.is_empty() {
        available = Some(Availability::of(req, anchor));
    }
    let block = match &available {
        Some(a) => side_by_side::confirm_suspects(req, &suspects, anchor, night, a)?,
        None => None,
    };
    let comparison = match &block {
        Some(b) => confirmation::apply(rechecked, summary, anchor, b.clone()),
        None => rechecked,
    };
    Ok(Confirmed {
        checked,
        block,
        comparison,
    })
}
