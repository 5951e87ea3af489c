//! Where side by side enters the verdict (docs/regression-model.md, "Side by side"). After the
//! pooled recheck a speed or time target is *suspected* when it is a regression, `unknown`, a
//! regression before the recheck that the recheck cleared, over a threshold but within noise, or
//! improved ([`suspected`]). Its side-by-side comparison with the
//! anchor's own code then decides ([`apply`]): `worse` is a confirmed regression (even where the
//! history test said unknown, noise or improved); `same` clears it (its regression rows move to
//! `suppressed_regressions` with [`CLEARED_REASON`](decide::CLEARED_REASON): the run passes the gate and is never an
//! anchor); `unknown` leaves the target as the history test left it, with the reason recorded.
//! The same function re-applies the recorded block when promotion recomputes a comparison.

mod decide;
mod detectable;
mod suspect;

pub(crate) use decide::apply;
pub(crate) use detectable::detectable_pct;
pub(crate) use suspect::{Suspect, blind_too, suspected};

#[cfg(test)]
mod tests;
