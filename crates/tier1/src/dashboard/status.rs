//! One status per target of the latest run, agreeing with its verdict: a target that did not
//! succeed shows its stored status; a succeeded one shows what the comparison made of it
//! (regressed, regression cleared by a recheck, unknown, held by the floor, improved, within
//! noise, declined, new, unchanged), never "succeeded" beside "regressed".

use super::declines::Declines;
use super::model::RunView;

/// How a status reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Fine (green).
    Ok,
    /// Look at it, it does not block (amber).
    Warn,
    /// Blocks (red).
    Bad,
}

impl Tone {
    /// The CSS class.
    pub(crate) fn class(self) -> &'static str {
        match self {
            Tone::Ok => "ok",
            Tone::Warn => "warn",
            Tone::Bad => "bad",
        }
    }
}

/// A target's one status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    /// Shown text.
    pub(crate) label: String,
    /// Colour.
    pub(crate) tone: Tone,
}

fn status(label: &str, tone: Tone) -> Status {
    Status {
        label: label.into(),
        tone,
    }
}

/// The status of `target` (stored status `stored`) in `run`, whose declines are `declines`.
pub(crate) fn of(run: &RunView, declines: &Declines<'_>, target: &str, stored: &str) -> Status {
    let r = &run.regression;
    if stored != "succeeded" {
        return status(stored, Tone::Bad);
    }
    let hit = |rows: &[crate::history::model::ChangeRow]| rows.iter().any(|x| x.target() == target);
    let verdict = r
        .detection
        .as_ref()
        .and_then(|d| d.target(target))
        .and_then(|t| t.verdict);
    if hit(&r.regressions) {
        status("regressed", Tone::Bad)
    } else if r
        .suppressed_regressions
        .iter()
        .any(|x| x.row.target() == target)
    {
        status("regression cleared by recheck", Tone::Warn)
    } else if r.inconclusive.iter().any(|x| x.target == target)
        || verdict == Some(crate::history::Verdict::Unknown)
    {
        status("unknown", Tone::Warn)
    } else if r.held_by_floor.iter().any(|x| x.row.target() == target)
        || declines
            .under_floor
            .iter()
            .any(|(x, _)| x.target() == target)
    {
        status("held by floor", Tone::Warn)
    } else if hit(&r.improvements) {
        status("improved", Tone::Ok)
    } else if hit(&r.within_noise) {
        status("within noise", Tone::Ok)
    } else if declines
        .below_thresholds
        .iter()
        .chain(declines.beyond_unfiled.iter())
        .any(|x| x.target() == target)
    {
        status("declined", Tone::Warn)
    } else if r.baseline_run_id.is_none() {
        status("succeeded", Tone::Ok)
    } else if r.new_targets.iter().any(|t| t.target == target) {
        status("new", Tone::Ok)
    } else {
        status("unchanged", Tone::Ok)
    }
}
